//! Argument validation decides as JSON Schema says (issue 30, item 11):
//! one test per place where the compiled validator used to decide alone
//! and differently from the standard. Each schema is a tool's parameters
//! (an object) and each verdict is the one drafts 2020-12 / 07 give.

use hermes_core::params::{Compiled, Formats};
use serde_json::{Value, json};

/// Whether `args` are valid for `schema` (no repair): `Err` when the
/// schema does not compile.
fn verdict(schema: &Value, args: Value) -> Result<bool, String> {
    verdict_with(schema, args, Formats::Draft)
}

fn verdict_with(schema: &Value, args: Value, formats: Formats) -> Result<bool, String> {
    let c = Compiled::with(&schema.to_string(), "p", formats)?;
    let mut v = args;
    let (mut notes, mut errs) = (Vec::new(), Vec::new());
    c.check(&mut v, false, &mut notes, &mut errs, 20);
    Ok(errs.is_empty())
}

/// `{"v": <schema>}` as a tool's parameters, `$schema` at the root when given.
fn prop(v: Value, draft: Option<&str>) -> Value {
    let mut s = json!({"type": "object", "properties": {"v": v}});
    if let Some(d) = draft {
        s["$schema"] = json!(d);
    }
    s
}

const DRAFT7: &str = "http://json-schema.org/draft-07/schema#";
const DRAFT2020: &str = "https://json-schema.org/draft/2020-12/schema";

#[test]
fn false_under_properties_forbids_the_property() {
    let s = json!({"type": "object", "properties": {"gone": false, "a": {"type": "integer"}}});
    assert_eq!(verdict(&s, json!({"a": 1})), Ok(true));
    assert_eq!(verdict(&s, json!({"gone": 1})), Ok(false));
}

#[test]
fn false_in_all_of_any_of_and_items_accepts_nothing() {
    assert_eq!(
        verdict(
            &prop(json!({"allOf": [true, false]}), None),
            json!({"v": 1})
        ),
        Ok(false)
    );
    assert_eq!(
        verdict(&prop(json!({"anyOf": [false]}), None), json!({"v": 1})),
        Ok(false)
    );
    assert_eq!(
        verdict(
            &prop(json!({"oneOf": [false, true]}), None),
            json!({"v": 1})
        ),
        Ok(true)
    );
    assert_eq!(
        verdict(&prop(json!({"items": false}), None), json!({"v": [1]})),
        Ok(false)
    );
    assert_eq!(
        verdict(&prop(json!({"items": false}), None), json!({"v": []})),
        Ok(true)
    );
    assert_eq!(
        verdict(&prop(json!({"not": true}), None), json!({"v": 1})),
        Ok(false)
    );
}

#[test]
fn additional_properties_leaves_pattern_properties_alone() {
    let s = json!({"type": "object",
        "properties": {"a": {"type": "integer"}},
        "patternProperties": {"^x_": {"type": "string"}},
        "additionalProperties": false});
    assert_eq!(verdict(&s, json!({"a": 1, "x_note": "hi"})), Ok(true));
    assert_eq!(verdict(&s, json!({"x_note": 5})), Ok(false));
    assert_eq!(verdict(&s, json!({"other": 1})), Ok(false));
}

#[test]
fn one_of_counts_ref_and_prefix_items_branches_as_they_validate() {
    let s = json!({"type": "object",
        "$defs": {"int": {"type": "integer"}},
        "properties": {"v": {"oneOf": [{"$ref": "#/$defs/int"}, {"type": "string"}]}}});
    assert_eq!(verdict(&s, json!({"v": "s"})), Ok(true));
    assert_eq!(verdict(&s, json!({"v": 3})), Ok(true));
    assert_eq!(verdict(&s, json!({"v": 1.5})), Ok(false));
    let s = prop(
        json!({"oneOf": [{"prefixItems": [{"type": "integer"}]}, {"items": {"type": "string"}}]}),
        None,
    );
    assert_eq!(verdict(&s, json!({"v": ["a"]})), Ok(true));
    assert_eq!(verdict(&s, json!({"v": [1]})), Ok(true));
    assert_eq!(verdict(&s, json!({"v": []})), Ok(false));
}

#[test]
fn items_applies_after_prefix_items() {
    let s = prop(
        json!({"prefixItems": [{"type": "integer"}], "items": {"type": "string"}}),
        None,
    );
    assert_eq!(verdict(&s, json!({"v": [1, "a", "b"]})), Ok(true));
    assert_eq!(verdict(&s, json!({"v": [1, 2]})), Ok(false));
}

#[test]
fn draft7_array_items_and_additional_items() {
    let s = prop(
        json!({"items": [{"type": "integer"}, {"type": "string"}], "additionalItems": false}),
        Some(DRAFT7),
    );
    assert_eq!(verdict(&s, json!({"v": [1, "a"]})), Ok(true));
    assert_eq!(verdict(&s, json!({"v": [1]})), Ok(true));
    assert_eq!(verdict(&s, json!({"v": ["a"]})), Ok(false));
    assert_eq!(verdict(&s, json!({"v": [1, "a", 2]})), Ok(false));
}

#[test]
fn draft7_ignores_ref_siblings_and_2020_12_applies_them() {
    let v = json!({"$ref": "#/definitions/s", "maxLength": 2});
    let mut s = prop(v, Some(DRAFT7));
    s["definitions"] = json!({"s": {"type": "string"}});
    assert_eq!(verdict(&s, json!({"v": "abcdef"})), Ok(true));
    assert_eq!(verdict(&s, json!({"v": 5})), Ok(false));
    s["$schema"] = json!(DRAFT2020);
    assert_eq!(verdict(&s, json!({"v": "abcdef"})), Ok(false));
    assert_eq!(verdict(&s, json!({"v": "ab"})), Ok(true));
}

#[test]
fn integer_valued_decimal_bounds_count() {
    let s = prop(
        json!({"type": "string", "minLength": 2.0, "maxLength": 3.0}),
        None,
    );
    assert_eq!(verdict(&s, json!({"v": "ab"})), Ok(true));
    assert_eq!(verdict(&s, json!({"v": "a"})), Ok(false));
    assert_eq!(verdict(&s, json!({"v": "abcd"})), Ok(false));
    let s = prop(json!({"minItems": 1.0, "maxItems": 1.0}), None);
    assert_eq!(verdict(&s, json!({"v": [1]})), Ok(true));
    assert_eq!(verdict(&s, json!({"v": [1, 2]})), Ok(false));
    // 2.5 is no count: the schema is refused.
    assert!(verdict(&prop(json!({"minLength": 2.5}), None), json!({})).is_err());
}

#[test]
fn an_empty_enum_accepts_no_value() {
    let s = prop(json!({"enum": []}), None);
    assert_eq!(verdict(&s, json!({})), Ok(true));
    assert_eq!(verdict(&s, json!({"v": null})), Ok(false));
}

#[test]
fn format_is_an_annotation_in_2020_12_unless_asserted() {
    let s = prop(json!({"type": "string", "format": "date"}), None);
    assert_eq!(verdict(&s, json!({"v": "yesterday"})), Ok(true));
    assert_eq!(
        verdict_with(&s, json!({"v": "yesterday"}), Formats::Assert),
        Ok(false)
    );
    assert_eq!(
        verdict_with(&s, json!({"v": "2026-11-23"}), Formats::Assert),
        Ok(true)
    );
    // Draft-07 asserts by default (the jsonschema crate's reading of its
    // "MAY"); `annotate` turns it off there too.
    let s = prop(json!({"type": "string", "format": "date"}), Some(DRAFT7));
    assert_eq!(verdict(&s, json!({"v": "yesterday"})), Ok(false));
    assert_eq!(
        verdict_with(&s, json!({"v": "yesterday"}), Formats::Annotate),
        Ok(true)
    );
}

#[test]
fn patterns_are_ecma_262() {
    // `\d` is ASCII digits in ECMA-262; the `regex` crate's own reading
    // takes every Unicode digit.
    let s = prop(json!({"type": "string", "pattern": "^\\d+$"}), None);
    assert_eq!(verdict(&s, json!({"v": "123"})), Ok(true));
    assert_eq!(verdict(&s, json!({"v": "١٢٣"})), Ok(false));
    // Look-ahead: a pattern only a backtracking engine runs.
    let s = prop(
        json!({"type": "string", "pattern": "^(?=.*[0-9])[a-z0-9]+$"}),
        None,
    );
    assert_eq!(verdict(&s, json!({"v": "abc1"})), Ok(true));
    assert_eq!(verdict(&s, json!({"v": "abc"})), Ok(false));
}

#[test]
fn openapi_forms_hold_without_schema_and_the_standard_with_it() {
    let s = prop(
        json!({"type": "integer", "nullable": true, "minimum": 0, "exclusiveMinimum": true}),
        None,
    );
    assert_eq!(verdict(&s, json!({"v": null})), Ok(true));
    assert_eq!(verdict(&s, json!({"v": 0})), Ok(false));
    assert_eq!(verdict(&s, json!({"v": 1})), Ok(true));
    // The same forms where the crate decides (a `$ref` elsewhere) read alike.
    let mut r = s.clone();
    r["$defs"] = json!({"n": {"type": "integer"}});
    r["properties"]["w"] = json!({"$ref": "#/$defs/n"});
    assert_eq!(verdict(&r, json!({"v": null, "w": 1})), Ok(true));
    assert_eq!(verdict(&r, json!({"v": 0})), Ok(false));
    // A schema that names its draft gets the standard: `nullable` is an
    // unknown keyword, a boolean exclusiveMinimum an invalid schema.
    let s = prop(
        json!({"type": "integer", "nullable": true}),
        Some(DRAFT2020),
    );
    assert_eq!(verdict(&s, json!({"v": null})), Ok(false));
    let s = prop(
        json!({"type": "integer", "minimum": 0, "exclusiveMinimum": true}),
        Some(DRAFT2020),
    );
    assert!(verdict(&s, json!({"v": 1})).is_err());
}

#[test]
fn other_drafts_go_to_the_crate() {
    // Draft 4: boolean exclusiveMinimum is standard there.
    let s = prop(
        json!({"type": "number", "minimum": 0, "exclusiveMinimum": true}),
        Some("http://json-schema.org/draft-04/schema#"),
    );
    assert_eq!(verdict(&s, json!({"v": 0})), Ok(false));
    assert_eq!(verdict(&s, json!({"v": 0.5})), Ok(true));
}

#[test]
fn annotations_of_the_wrong_type_make_an_invalid_schema() {
    let s = json!({"type": "object", "properties": {"a": {"type": "string", "description": 5}}});
    assert!(verdict(&s, json!({})).is_err());
    // Unknown keywords hold anything.
    let s = json!({"type": "object", "x-weird": {"description": 5}, "properties": {}});
    assert_eq!(verdict(&s, json!({"z": 1})), Ok(true));
}
