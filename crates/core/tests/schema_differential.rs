//! Differential test: random schemas and instances, the compiled validator
//! against the `jsonschema` crate. Wherever the compiled node decides alone
//! (`Schema::full` is `None`) it must give the crate's verdict on every
//! instance, and refuse exactly the schemas the crate refuses; any
//! disagreement fails with the seed, the schema and the instance.
//!
//! A seeded generator (SplitMix64), so every run checks the same cases;
//! `HT_SCHEMA_FUZZ_CASES` and `HT_SCHEMA_FUZZ_SEED` run more or others.

use hermes_core::params::{Formats, Schema, full_validator, openapi_to_standard};
use serde_json::{Map, Value, json};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// True with probability `p` percent.
    fn pct(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }
    fn pick<'a, T>(&mut self, list: &'a [T]) -> &'a T {
        &list[self.below(list.len())]
    }
}

const NAMES: &[&str] = &["a", "b", "c", "x_1", "x_2"];
const TYPES: &[&str] = &[
    "null", "boolean", "integer", "number", "string", "array", "object",
];
const PATTERNS: &[&str] = &[
    "^a",
    "b$",
    "^\\d+$",
    "\\w",
    "^[a-z]*$",
    "a|b",
    "^\\S+$",
    "^.$",
    "\\s",
    "^(ab)+$",
    "[^a]",
    "^\\p{L}+$",
    "^(?=a)",
    "x{2,}",
];
const FORMATS: &[&str] = &["date", "email", "ipv4", "uri", "uuid", "made-up"];

fn number(r: &mut Rng) -> Value {
    match r.below(12) {
        0 => json!(0),
        1 => json!(1),
        2 => json!(2),
        3 => json!(-1),
        4 => json!(1.5),
        5 => json!(2.0),
        6 => json!(-0.5),
        7 => json!(100),
        8 => json!(9_007_199_254_740_993u64),
        9 => json!(u64::MAX),
        10 => json!(1e300),
        _ => json!(3),
    }
}

fn string(r: &mut Rng) -> Value {
    json!(*r.pick(&[
        "",
        "a",
        "ab",
        "abc",
        "b",
        "a1",
        "123",
        "١٢٣",
        "x\ny",
        "x\ry",
        "😀",
        "aa😀",
        "2026-11-23",
        "not a date",
        "a@b.c",
        "10.0.0.1",
        "xx",
        "ab ab",
        "é",
    ]))
}

fn value(r: &mut Rng, depth: usize) -> Value {
    let k = if depth == 0 { r.below(5) } else { r.below(8) };
    match k {
        0 => Value::Null,
        1 => json!(r.pct(50)),
        2 | 3 => number(r),
        4 => string(r),
        5 => Value::Array((0..r.below(4)).map(|_| value(r, depth - 1)).collect()),
        _ => {
            let mut m = Map::new();
            for _ in 0..r.below(4) {
                m.insert(r.pick(NAMES).to_string(), value(r, depth - 1));
            }
            Value::Object(m)
        }
    }
}

fn count(r: &mut Rng) -> Value {
    let n = r.below(4);
    match r.below(20) {
        0 | 1 => json!(n as f64), // 2.0: an integer to JSON Schema
        2 => json!(n as f64 + 0.5),
        _ => json!(n),
    }
}

fn schema(r: &mut Rng, depth: usize) -> Value {
    if r.pct(8) {
        return json!(r.pct(60));
    }
    let mut m = Map::new();
    let budget = 1 + r.below(4);
    for _ in 0..budget {
        let sub = depth > 0;
        match r.below(if sub { 40 } else { 20 }) {
            0 | 1 => {
                m.insert("type".into(), json!(*r.pick(TYPES)));
            }
            2 => {
                let first = *r.pick(TYPES);
                let mut list = vec![json!(first)];
                if r.pct(80) {
                    let second = *r.pick(TYPES);
                    // A repeated name (an invalid schema) now and then.
                    if second != first || r.pct(10) {
                        list.push(json!(second));
                    }
                }
                m.insert("type".into(), Value::Array(list));
            }
            3 => {
                let list: Vec<Value> = (0..r.below(4)).map(|_| value(r, 1)).collect();
                m.insert("enum".into(), Value::Array(list));
            }
            4 => {
                m.insert("const".into(), value(r, 1));
            }
            5 => {
                let k = *r.pick(&["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]);
                let n = if r.pct(3) {
                    json!(r.pct(50))
                } else {
                    number(r)
                };
                m.insert(k.into(), n);
            }
            6 => {
                let k = *r.pick(&["minLength", "maxLength", "minItems", "maxItems"]);
                m.insert(k.into(), count(r));
            }
            7 => {
                m.insert("pattern".into(), json!(*r.pick(PATTERNS)));
            }
            8 => {
                let mut req: Vec<Value> = (0..r.below(3)).map(|_| json!(*r.pick(NAMES))).collect();
                if !r.pct(10) {
                    req.dedup();
                    req.sort_by_key(|v| v.to_string());
                    req.dedup();
                }
                m.insert("required".into(), Value::Array(req));
            }
            9 => {
                m.insert("format".into(), json!(*r.pick(FORMATS)));
            }
            10 => {
                m.insert("nullable".into(), json!(r.pct(80)));
            }
            11 => {
                let k = *r.pick(&[
                    "title",
                    "description",
                    "$comment",
                    "examples",
                    "default",
                    "x-extra",
                ]);
                let v = if r.pct(95) {
                    match k {
                        "examples" => json!([1]),
                        _ => json!("text"),
                    }
                } else {
                    value(r, 1)
                };
                m.insert(k.into(), v);
            }
            12..=14 | 28..=32 if sub => {
                let mut props = Map::new();
                for _ in 0..1 + r.below(3) {
                    props.insert(r.pick(NAMES).to_string(), schema(r, depth - 1));
                }
                m.insert("properties".into(), Value::Object(props));
            }
            15 if sub => {
                m.insert("additionalProperties".into(), schema(r, depth - 1));
            }
            16 | 17 | 33..=35 if sub => {
                m.insert("items".into(), schema(r, depth - 1));
            }
            18..=20 | 36..=39 if sub => {
                let k = *r.pick(&["anyOf", "oneOf", "allOf"]);
                let list: Vec<Value> = (0..1 + r.below(3)).map(|_| schema(r, depth - 1)).collect();
                m.insert(k.into(), Value::Array(list));
            }
            21 if sub => {
                m.insert("not".into(), schema(r, depth - 1));
            }
            // What the node hands to the crate: the crate decides, so these
            // check the hand-off and the schemas around them.
            22 if sub => {
                let list: Vec<Value> = (0..1 + r.below(2)).map(|_| schema(r, depth - 1)).collect();
                m.insert("items".into(), Value::Array(list)); // draft-07 tuple
            }
            23 if sub => {
                let list: Vec<Value> = (0..1 + r.below(2)).map(|_| schema(r, depth - 1)).collect();
                m.insert("prefixItems".into(), Value::Array(list));
            }
            24 if sub => {
                let mut pp = Map::new();
                pp.insert("^x_".into(), schema(r, depth - 1));
                m.insert("patternProperties".into(), Value::Object(pp));
            }
            25 if sub => {
                m.insert("additionalItems".into(), schema(r, depth - 1));
            }
            26 if sub => {
                m.insert("uniqueItems".into(), json!(true));
            }
            27 if sub => {
                // The root gets `$defs.d` (see the test).
                m.insert("$ref".into(), json!("#/$defs/d"));
            }
            _ => {
                m.insert("type".into(), json!(*r.pick(TYPES)));
            }
        }
    }
    Value::Object(m)
}

/// Instances for `s`: random values, and the values the schema names.
fn instances(r: &mut Rng, s: &Value) -> Vec<Value> {
    let mut out: Vec<Value> = (0..12).map(|_| value(r, 3)).collect();
    fn named(s: &Value, out: &mut Vec<Value>) {
        match s {
            Value::Object(m) => {
                for (k, v) in m {
                    match k.as_str() {
                        "enum" => out.extend(v.as_array().into_iter().flatten().cloned()),
                        "const" => out.push(v.clone()),
                        _ => named(v, out),
                    }
                }
            }
            Value::Array(list) => list.iter().for_each(|v| named(v, out)),
            _ => {}
        }
    }
    named(s, &mut out);
    // The named values inside objects and arrays, so properties and items meet them.
    let extra: Vec<Value> = out
        .iter()
        .take(20)
        .map(|v| {
            if r.pct(50) {
                json!({ *r.pick(NAMES): v })
            } else {
                json!([v])
            }
        })
        .collect();
    out.extend(extra);
    out
}

#[test]
fn the_compiled_validator_agrees_with_the_jsonschema_crate() {
    let cases: usize = std::env::var("HT_SCHEMA_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000);
    let seed: u64 = std::env::var("HT_SCHEMA_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_2026);
    let mut r = Rng(seed);
    let (mut exact, mut handed, mut refused, mut checks) = (0usize, 0usize, 0usize, 0usize);
    let mut failures = Vec::new();
    for case in 0..cases {
        let depth = 1 + r.below(3);
        let mut s = schema(&mut r, depth);
        if let Value::Object(m) = &mut s
            && r.pct(25)
        {
            let d = *r.pick(&[
                "http://json-schema.org/draft-07/schema#",
                "https://json-schema.org/draft/2020-12/schema",
            ]);
            m.insert("$schema".into(), json!(d));
        }
        if s.to_string().contains("#/$defs/d") {
            let d = schema(&mut r, 1);
            match &mut s {
                Value::Object(m) => {
                    m.insert("$defs".into(), json!({ "d": d }));
                }
                _ => unreachable!("a boolean holds no $ref"),
            }
        }
        let formats = *r.pick(&[
            Formats::Draft,
            Formats::Draft,
            Formats::Assert,
            Formats::Annotate,
        ]);
        let text = s.to_string();
        // The reference: the crate on the schema as the standard reads it
        // (with the OpenAPI forms of a schema without `$schema` rewritten,
        // the documented extension).
        let mut standard = s.clone();
        if s.get("$schema").is_none() {
            openapi_to_standard(&mut standard);
        }
        let reference = full_validator(&standard, formats);
        let ours = Schema::new(&text, "s", formats);
        let fail = |why: String| {
            format!("case {case} (seed {seed}, formats {formats:?}): {why}\n  schema: {text}")
        };
        match (&ours, &reference) {
            (Err(e), Err(_)) => {
                if std::env::var("HT_SCHEMA_FUZZ_DEBUG").is_ok() {
                    eprintln!("refused: {e}");
                }
                refused += 1;
                continue;
            }
            (Err(e), Ok(_)) => {
                failures.push(fail(format!("we refuse a schema the crate accepts: {e}")));
                continue;
            }
            (Ok(o), Err(e)) => {
                if o.full.is_none() {
                    failures.push(fail(format!("we accept a schema the crate refuses: {e}")));
                }
                continue;
            }
            (Ok(_), Ok(_)) => {}
        }
        let (ours, reference) = (ours.unwrap(), reference.unwrap());
        if ours.full.is_none() {
            exact += 1;
        } else {
            handed += 1;
        }
        for inst in instances(&mut r, &s) {
            checks += 1;
            let want = reference.is_valid(&inst);
            if ours.is_valid(&inst) != want {
                failures.push(fail(format!(
                    "instance {inst}: the crate says valid={want}"
                )));
            }
            // The messages agree with the verdict.
            let mut errs = Vec::new();
            ours.validate(&inst, &mut errs, 5);
            if errs.is_empty() != want {
                failures.push(fail(format!(
                    "instance {inst}: errors {errs:?}, valid={want}"
                )));
            }
        }
        if failures.len() > 20 {
            break;
        }
    }
    eprintln!(
        "schemas: {cases} ({exact} decided by the compiled node, {handed} by the crate, {refused} refused by both); instances checked: {checks}"
    );
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Not vacuous: many schemas stay on the fast path (a nested schema
    // leaves it if any part does), and the hand-off and refusals are
    // exercised too.
    assert!(
        exact * 3 > cases,
        "only {exact} of {cases} schemas decided by the node"
    );
    assert!(
        handed * 10 > cases && refused * 50 > cases,
        "{handed} handed off, {refused} refused"
    );
}
