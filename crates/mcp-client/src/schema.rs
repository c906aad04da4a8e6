//! Input schemas as MCP servers write them, made into what the registry
//! (and every model provider) accepts: an object type, `$defs` instead of the
//! draft-07 `definitions`, `required` naming only declared properties.

use serde_json::{Map, Value};

/// Normalize a tool's `inputSchema`.
pub fn normalize(schema: &Map<String, Value>) -> Value {
    let mut v = Value::Object(schema.clone());
    rename_definitions(&mut v);
    let obj = v.as_object_mut().expect("built from a map");
    obj.remove("$schema");
    if !obj.contains_key("type") {
        obj.insert("type".into(), Value::String("object".into()));
    }
    if obj.get("type").and_then(Value::as_str) == Some("object") {
        if !obj.contains_key("properties") {
            obj.insert("properties".into(), Value::Object(Map::new()));
        }
        let props: Vec<String> = obj
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        if let Some(Value::Array(req)) = obj.get_mut("required") {
            req.retain(|r| r.as_str().is_some_and(|r| props.iter().any(|p| p == r)));
        }
    }
    v
}

/// `definitions` → `$defs` and `#/definitions/` refs → `#/$defs/`, everywhere.
fn rename_definitions(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(d) = m.remove("definitions") {
                let merged = match m.remove("$defs") {
                    Some(Value::Object(mut existing)) => {
                        if let Value::Object(d) = d {
                            for (k, x) in d {
                                existing.entry(k).or_insert(x);
                            }
                        }
                        Value::Object(existing)
                    }
                    _ => d,
                };
                m.insert("$defs".into(), merged);
            }
            if let Some(Value::String(r)) = m.get_mut("$ref")
                && let Some(rest) = r.strip_prefix("#/definitions/")
            {
                *r = format!("#/$defs/{rest}");
            }
            for x in m.values_mut() {
                rename_definitions(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(rename_definitions),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn normalizes() {
        let s = json!({"properties": {"a": {"$ref": "#/definitions/A"}}, "required": ["a", "gone"],
            "definitions": {"A": {"type": "string"}}, "$schema": "http://json-schema.org/draft-07/schema#"});
        let n = normalize(s.as_object().unwrap());
        assert_eq!(
            n,
            json!({"properties": {"a": {"$ref": "#/$defs/A"}}, "required": ["a"],
                "$defs": {"A": {"type": "string"}}, "type": "object"})
        );
        let empty = normalize(&Map::new());
        assert_eq!(empty, json!({"type": "object", "properties": {}}));
    }
}
