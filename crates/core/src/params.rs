//! A tool's compiled parameters schema, compiled when it is registered or,
//! for bulk registration, on first use, and then cached.
//!
//! Why both (`dispatch.compile_schemas`): registration of thousands of
//! tools (MCP servers, generated APIs, one by one or in bulk) must cost
//! little more than reading the JSON, and most of those tools are never
//! called. By default it checks the text and the top-level shape and
//! compiles each schema the first time its tool is called (a schema that
//! fails then answers that call, and every later one, with an error that
//! names the problem, and logs it once); compiling is more than half of
//! registering a tool. A host that wants a bad schema refused where it
//! wrote it compiles at registration instead.
//!
//! Two validators, one decision each: the compiled subset ([`Node`])
//! repairs and validates arguments in well under a microsecond, with
//! messages a model can act on, and decides alone wherever it decides
//! exactly as the standard does ([`Facts::exact`]). Any other schema
//! (`$ref`/`$defs`, `if`/`then`/`else`, `patternProperties`, tuple
//! `items`, `format` where it is asserted, a `$schema` other than 2020-12
//! and draft-07, ...) is compiled by the `jsonschema` crate, which then
//! decides alone; the node still guides repair. Drafts: 2020-12 (the
//! default when `$schema` is absent) and draft-07 are supported and tested
//! against the official suite (`make conformance`); 2019-09, 6 and 4 go
//! to the crate as named.
//!
//! Without `$schema`, OpenAPI 3.0's forms are read as OpenAPI means them
//! (`"nullable": true` adds `null` to `type`; a boolean
//! `exclusiveMinimum`/`exclusiveMaximum` makes `minimum`/`maximum`
//! exclusive), by both validators; a schema that names its draft gets the
//! standard's reading (an unknown `nullable` is ignored).

use once_cell::sync::OnceCell;
use serde_json::{Map, Value};

pub use crate::config::Formats;
use crate::schema::{Dialect, Facts, Node, with_pattern_limit};

/// The dispatch settings arguments are checked under (`dispatch.formats`,
/// `dispatch.repair`), read from the core's config on each call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub formats: Formats,
    pub repair: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            formats: Formats::Draft,
            repair: true,
        }
    }
}

impl Options {
    /// The options of a dispatch config.
    pub fn of(c: &crate::config::DispatchConfig) -> Options {
        Options {
            formats: c.formats,
            repair: c.repair,
        }
    }
}

/// One schema, compiled for validation: by the node when it decides
/// exactly, else by the `jsonschema` crate. What `Compiled` holds, and what
/// the conformance suite and the differential test run.
pub struct Schema {
    /// Repairs arguments; validates them when `full` is `None`.
    pub node: Node,
    /// The `jsonschema` crate's validator, when the node cannot decide alone.
    pub full: Option<jsonschema::Validator>,
    /// The schema uses `format`.
    pub uses_format: bool,
}

impl Schema {
    /// Compile `text` under `formats`; `path` names it in errors.
    pub fn new(text: &str, path: &str, formats: Formats) -> Result<Schema, String> {
        let (node, facts) = Node::compile_text_full(text, path)?;
        let full = if decides_alone(&facts, formats) {
            None
        } else {
            let mut schema: Value =
                serde_json::from_str(text).map_err(|e| format!("{path}: {e}"))?;
            // Everywhere, also under keywords the node skipped (`$defs`, ...).
            if facts.dialect == Dialect::Default {
                openapi_to_standard(&mut schema);
            }
            Some(full_validator(&schema, formats).map_err(|e| format!("{path}: {e}"))?)
        };
        Ok(Schema {
            node,
            full,
            uses_format: facts.format,
        })
    }

    /// Whether `v` is valid, as the standard says.
    pub fn is_valid(&self, v: &Value) -> bool {
        match &self.full {
            Some(full) => full.is_valid(v),
            None => self.node.is_valid(v),
        }
    }

    /// Up to `limit` problems with `v`, each naming its path.
    pub fn validate(&self, v: &Value, errs: &mut Vec<String>, limit: usize) {
        match &self.full {
            Some(full) => {
                for e in full.iter_errors(v).take(limit) {
                    let at = pointer_path(&e.instance_path().to_string());
                    errs.push(format!("{at}: {}", one_line(&e.to_string())));
                }
            }
            None => self.node.validate(v, "", errs, limit),
        }
    }
}

/// Whether the node decides for a schema with these facts: it implements
/// everything used, the draft is one it reads (2020-12, 07), `format` is
/// only an annotation there, and OpenAPI forms only where they are read.
fn decides_alone(f: &Facts, formats: Formats) -> bool {
    let format_asserted = match formats {
        Formats::Assert => true,
        Formats::Annotate => false,
        Formats::Draft => f.dialect == Dialect::Draft7,
    };
    f.exact
        && f.dialect != Dialect::Other
        && !(f.format && format_asserted)
        && !(f.openapi && f.dialect != Dialect::Default)
}

/// The `jsonschema` crate's validator for `schema`: its draft from
/// `$schema` (2020-12 when absent), formats as `formats` says, no remote
/// references (the crate is built without HTTP).
pub fn full_validator(schema: &Value, formats: Formats) -> Result<jsonschema::Validator, String> {
    let mut o = jsonschema::options();
    match formats {
        Formats::Draft => {}
        Formats::Assert => o = o.should_validate_formats(true),
        Formats::Annotate => o = o.should_validate_formats(false),
    }
    o.build(schema).map_err(|e| one_line(&e.to_string()))
}

/// Rewrite OpenAPI 3.0's forms into the standard's, in every subschema:
/// `"nullable": true` beside `type` adds `"null"` to it, and a boolean
/// `exclusiveMinimum`/`exclusiveMaximum` becomes the number of
/// `minimum`/`maximum` (or goes, when false). What the node does itself.
pub fn openapi_to_standard(v: &mut Value) {
    let Value::Object(m) = v else { return };
    rewrite_openapi(m);
    for (k, child) in m.iter_mut() {
        match k.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
            | "dependencies" => {
                if let Value::Object(map) = child {
                    map.values_mut().for_each(openapi_to_standard);
                }
            }
            "items" | "prefixItems" | "allOf" | "anyOf" | "oneOf" => match child {
                Value::Array(list) => list.iter_mut().for_each(openapi_to_standard),
                other => openapi_to_standard(other),
            },
            "additionalProperties"
            | "additionalItems"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "contentSchema" => openapi_to_standard(child),
            _ => {}
        }
    }
}

fn rewrite_openapi(m: &mut Map<String, Value>) {
    if m.get("nullable") == Some(&Value::Bool(true)) {
        match m.get_mut("type") {
            Some(Value::String(t)) if t != "null" => {
                let t = std::mem::take(t);
                m.insert("type".into(), serde_json::json!([t, "null"]));
            }
            Some(Value::Array(list)) if !list.iter().any(|t| t == "null") => {
                list.push("null".into());
            }
            _ => {}
        }
    }
    for (excl, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        match m.get(excl) {
            Some(Value::Bool(true)) => match m.remove(bound) {
                Some(n) => {
                    m.insert(excl.into(), n);
                }
                None => {
                    m.remove(excl);
                }
            },
            Some(Value::Bool(false)) => {
                m.remove(excl);
            }
            _ => {}
        }
    }
}

/// The compiled forms of one parameters schema.
pub struct Compiled {
    pub schema: Schema,
    /// The schema accepts every object: validation can be skipped.
    pub trivial: bool,
    /// The `dispatch.formats` it was compiled under.
    pub formats: Formats,
    /// It uses `format` (so another `dispatch.formats` may decide otherwise).
    pub uses_format: bool,
}

impl Compiled {
    /// Compile `text` (a parameters schema) with `format` as its draft
    /// says; `path` names it in errors.
    pub fn new(text: &str, path: &str) -> Result<Compiled, String> {
        Compiled::with(text, path, Formats::Draft)
    }

    /// Compile `text` under `formats`.
    pub fn with(text: &str, path: &str, formats: Formats) -> Result<Compiled, String> {
        let schema = Schema::new(text, path, formats)?;
        if !schema.node.is_object_or_untyped() {
            return Err(format!(
                "{path}.type: tool parameters must be of type \"object\""
            ));
        }
        Ok(Compiled {
            trivial: schema.node.is_trivial() && schema.full.is_none(),
            uses_format: schema.uses_format,
            schema,
            formats,
        })
    }

    /// Repair `v` in place (when `repair`: `dispatch.repair`), then
    /// validate it; errors (at most `limit`) are phrased for the model.
    /// `notes` receives each repair made.
    pub fn check(
        &self,
        v: &mut Value,
        repair: bool,
        notes: &mut Vec<String>,
        errs: &mut Vec<String>,
        limit: usize,
    ) {
        if !repair {
            self.schema.validate(v, errs, limit);
            return;
        }
        let Some(full) = &self.schema.full else {
            // The node decides: a value it accepts has every type it
            // names, so repair leaves it valid (42.0 becomes 42).
            self.schema.node.coerce(v, "", notes);
            self.schema.node.validate(v, "", errs, limit);
            return;
        };
        // The crate decides, and the node may know less than it (a `$ref`
        // sibling draft-07 ignores, ...): a repair is kept only where the
        // crate accepts its result, and never undoes valid arguments.
        let mut fixed = v.clone();
        let mut n = Vec::new();
        self.schema.node.coerce(&mut fixed, "", &mut n);
        if !n.is_empty() && (full.is_valid(&fixed) || !full.is_valid(v)) {
            *v = fixed;
            notes.extend(n);
        }
        self.schema.validate(v, errs, limit);
    }
}

/// A schema compiled now or on first use.
pub struct Params {
    /// Boxed: entries are moved while they are built, and most are never compiled.
    cell: OnceCell<Result<Box<Compiled>, String>>,
    /// The schema compiled again under a `dispatch.formats` other than the
    /// one `cell` holds, when it uses `format` (a runtime has one setting,
    /// so this fills at most once).
    other: OnceCell<Result<Box<Compiled>, String>>,
    /// `limits.max_schema_patterns` in force when the tool was registered.
    patterns: Option<usize>,
}

impl Params {
    /// Compile now (`format` as the draft says); the error names the problem's path.
    pub fn now(text: &str, path: &str) -> Result<Params, String> {
        let c = Compiled::new(text, path)?;
        Ok(Params {
            cell: OnceCell::with_value(Ok(Box::new(c))),
            other: OnceCell::new(),
            patterns: crate::schema::pattern_limit(),
        })
    }

    /// Compile on first use, under the pattern limit in force now.
    pub fn later() -> Params {
        Params {
            cell: OnceCell::new(),
            other: OnceCell::new(),
            patterns: crate::schema::pattern_limit(),
        }
    }

    /// Whether the schema has been compiled (or failed to).
    pub fn is_compiled(&self) -> bool {
        self.cell.get().is_some()
    }

    /// The compiled schema of `text` (the same text every time), compiling
    /// it on the first call. `Err` says why the schema cannot be used.
    pub fn get(&self, text: &str, tool: &str) -> Result<&Compiled, &str> {
        self.get_for(text, tool, Formats::Draft)
    }

    /// [`Params::get`] with `format` as `formats` says (`dispatch.formats`).
    pub fn get_for(&self, text: &str, tool: &str, formats: Formats) -> Result<&Compiled, &str> {
        let first = self.compile(&self.cell, text, tool, formats)?;
        if first.formats == formats || !first.uses_format {
            return Ok(first);
        }
        self.compile(&self.other, text, tool, formats)
    }

    fn compile<'s>(
        &self,
        cell: &'s OnceCell<Result<Box<Compiled>, String>>,
        text: &str,
        tool: &str,
        formats: Formats,
    ) -> Result<&'s Compiled, &'s str> {
        cell.get_or_init(|| {
            let path = "tool spec: schema.parameters";
            let out = match self.patterns {
                Some(max) => with_pattern_limit(max, || Compiled::with(text, path, formats)),
                None => Compiled::with(text, path, formats),
            }
            .map(Box::new);
            if let Err(e) = &out {
                tracing::warn!(tool, error = %e, "tool's parameters schema does not compile; its calls fail");
            }
            out
        })
        .as_ref()
        .map(|c| &**c)
        .map_err(|e| e.as_str())
    }
}

/// `/a/0/b` as the subset's paths read: `a[0].b` (`arguments` for the root).
fn pointer_path(ptr: &str) -> String {
    let mut out = String::new();
    for seg in ptr.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push('[');
            out.push_str(&seg);
            out.push(']');
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    if out.is_empty() {
        "arguments".into()
    } else {
        out
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(schema: Value, args: Value) -> Vec<String> {
        errors_with(schema, args, Options::default())
    }

    fn errors_with(schema: Value, args: Value, opts: Options) -> Vec<String> {
        let c = Compiled::with(&schema.to_string(), "p", opts.formats).unwrap();
        let mut v = args;
        let (mut notes, mut errs) = (Vec::new(), Vec::new());
        c.check(&mut v, opts.repair, &mut notes, &mut errs, 20);
        errs
    }

    #[test]
    fn ref_and_defs_are_enforced() {
        let schema = json!({
            "type": "object",
            "$defs": {"Name": {"type": "string", "minLength": 2}},
            "properties": {"a": {"$ref": "#/$defs/Name"}},
            "required": ["a"]
        });
        let e = errors(schema.clone(), json!({"a": 5}));
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].starts_with("a: "), "{e:?}");
        assert!(errors(schema.clone(), json!({"a": "x"}))[0].contains("a: "));
        assert!(errors(schema, json!({"a": "xy"})).is_empty());
    }

    #[test]
    fn format_and_composition_are_enforced() {
        let schema = json!({
            "type": "object",
            "properties": {
                "when": {"type": "string", "format": "date"},
                "n": {"type": "integer", "not": {"const": 3}},
                "tags": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}
            }
        });
        let assert = Options {
            formats: Formats::Assert,
            ..Options::default()
        };
        assert!(!errors_with(schema.clone(), json!({"when": "yesterday"}), assert).is_empty());
        assert!(errors_with(schema.clone(), json!({"when": "2026-11-23"}), assert).is_empty());
        assert!(!errors(schema.clone(), json!({"n": 3})).is_empty());
        let e = errors(schema.clone(), json!({"tags": ["a", "a"]}));
        assert!(e[0].starts_with("tags: "), "{e:?}");
        assert!(errors(schema, json!({"n": 4, "tags": ["a", "b"]})).is_empty());
    }

    #[test]
    fn subset_schemas_skip_the_full_validator() {
        let c = Compiled::new(
            r#"{"type":"object","properties":{"x":{"type":"integer"}}}"#,
            "p",
        )
        .unwrap();
        assert!(c.schema.full.is_none());
        let c = Compiled::new(r#"{"type":"object","properties":{}}"#, "p").unwrap();
        assert!(c.trivial);
    }

    #[test]
    fn repair_still_runs_before_full_validation() {
        // "5" is repaired to 5 by the subset, then the $ref'd bound applies.
        let schema = json!({
            "type": "object",
            "$defs": {"Small": {"maximum": 3}},
            "properties": {"n": {"type": "integer", "$ref": "#/$defs/Small"}}
        });
        let c = Compiled::new(&schema.to_string(), "p").unwrap();
        let mut v = json!({"n": "2"});
        let (mut notes, mut errs) = (Vec::new(), Vec::new());
        c.check(&mut v, true, &mut notes, &mut errs, 20);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(v, json!({"n": 2}));
        let mut v = json!({"n": "7"});
        c.check(&mut v, true, &mut notes, &mut errs, 20);
        assert_eq!(errs.len(), 1, "{errs:?}");
    }

    #[test]
    fn a_dangling_ref_is_a_compile_error() {
        let e = Compiled::new(
            r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/Missing"}}}"##,
            "tool spec: schema.parameters",
        )
        .err()
        .unwrap();
        assert!(e.starts_with("tool spec: schema.parameters: "), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn later_compiles_once_and_keeps_the_error() {
        let p = Params::later();
        assert!(!p.is_compiled());
        let text = r#"{"type":"object","properties":{"a":{"type":"strng"}}}"#;
        let e = p.get(text, "t").err().unwrap().to_string();
        assert!(e.contains("unknown type 'strng'"), "{e}");
        assert!(p.is_compiled());
        assert_eq!(p.get(text, "t").err().unwrap(), e);
    }

    #[test]
    fn pointer_paths_read_like_the_subset() {
        assert_eq!(pointer_path(""), "arguments");
        assert_eq!(pointer_path("/a/0/b"), "a[0].b");
        assert_eq!(pointer_path("/x~1y"), "x/y");
    }
}
