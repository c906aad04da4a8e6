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
//! Two validators: the compiled subset ([`Node`]) repairs and validates
//! arguments in well under a microsecond, with messages a model can act on.
//! A schema that uses a keyword beyond that subset (`$ref`/`$defs`,
//! `format`, `not`, `if`/`then`/`else`, `patternProperties`, ... see
//! [`BEYOND_SUBSET`](crate::schema::BEYOND_SUBSET)) is also compiled by the
//! `jsonschema` crate (draft 2020-12 unless `$schema` names another), which
//! checks the repaired arguments after the subset passes: every keyword is
//! enforced, and the common schemas keep the fast path.

use once_cell::sync::OnceCell;
use serde_json::Value;

use crate::schema::{Node, with_pattern_limit};

/// The compiled forms of one parameters schema.
pub struct Compiled {
    pub node: Node,
    /// The node accepts every object: validation can be skipped.
    pub trivial: bool,
    /// The full validator, when the schema needs more than the subset.
    pub full: Option<jsonschema::Validator>,
}

impl Compiled {
    /// Compile `text` (a parameters schema); `path` names it in errors.
    pub fn new(text: &str, path: &str) -> Result<Compiled, String> {
        let (node, beyond) = Node::compile_text_full(text, path)?;
        if !node.is_object_or_untyped() {
            return Err(format!(
                "{path}.type: tool parameters must be of type \"object\""
            ));
        }
        let full = if beyond {
            let schema: Value = serde_json::from_str(text).map_err(|e| format!("{path}: {e}"))?;
            let v = jsonschema::options()
                .should_validate_formats(true)
                .build(&schema)
                .map_err(|e| format!("{path}: {}", one_line(&e.to_string())))?;
            Some(v)
        } else {
            None
        };
        Ok(Compiled {
            trivial: node.is_trivial() && full.is_none(),
            node,
            full,
        })
    }

    /// Repair `v` in place, then validate it; errors (at most `limit`) are
    /// phrased for the model. `notes` receives each repair made.
    pub fn check(
        &self,
        v: &mut Value,
        notes: &mut Vec<String>,
        errs: &mut Vec<String>,
        limit: usize,
    ) {
        self.node.coerce(v, "", notes);
        self.node.validate(v, "", errs, limit);
        if !errs.is_empty() {
            return;
        }
        if let Some(full) = &self.full {
            for e in full.iter_errors(v).take(limit) {
                let at = pointer_path(&e.instance_path().to_string());
                errs.push(format!("{at}: {}", one_line(&e.to_string())));
            }
        }
    }
}

/// A schema compiled now or on first use.
pub struct Params {
    /// Boxed: entries are moved while they are built, and most are never compiled.
    cell: OnceCell<Result<Box<Compiled>, String>>,
    /// `limits.max_schema_patterns` in force when the tool was registered.
    patterns: Option<usize>,
}

impl Params {
    /// Compile now; the error names the problem's path.
    pub fn now(text: &str, path: &str) -> Result<Params, String> {
        let c = Compiled::new(text, path)?;
        Ok(Params {
            cell: OnceCell::with_value(Ok(Box::new(c))),
            patterns: None,
        })
    }

    /// Compile on first use, under the pattern limit in force now.
    pub fn later() -> Params {
        Params {
            cell: OnceCell::new(),
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
        self.cell
            .get_or_init(|| {
                let path = "tool spec: schema.parameters";
                let out = match self.patterns {
                    Some(max) => with_pattern_limit(max, || Compiled::new(text, path)),
                    None => Compiled::new(text, path),
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
        let c = Compiled::new(&schema.to_string(), "p").unwrap();
        let mut v = args;
        let (mut notes, mut errs) = (Vec::new(), Vec::new());
        c.check(&mut v, &mut notes, &mut errs, 20);
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
        assert!(!errors(schema.clone(), json!({"when": "yesterday"})).is_empty());
        assert!(errors(schema.clone(), json!({"when": "2026-11-23"})).is_empty());
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
        assert!(c.full.is_none());
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
        c.check(&mut v, &mut notes, &mut errs, 20);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(v, json!({"n": 2}));
        let mut v = json!({"n": "7"});
        c.check(&mut v, &mut notes, &mut errs, 20);
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
