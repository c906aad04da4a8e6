//! A `tools/call` result as the model reads it, like the original: text
//! blocks joined by newlines → `{"result": text}`; with `structuredContent`
//! → `{"result": text, "structuredContent": obj}` (or `{"result": obj}`
//! without text); `isError` → `{"error": text}` as an error result. Other
//! blocks (images, audio, resources) are summarized in the text.
//! Credential-looking strings (`sk-...`, `ghp_...`, `Bearer ...`, `token=`)
//! are redacted in the text and in every string of the structured content.

use hermes_approval::redact_secrets;
use hermes_core::ToolOutput;
use serde_json::{Value, json};

/// Map the result (as the JSON the server sent).
pub fn map(result: &Value) -> ToolOutput {
    let mut parts: Vec<String> = Vec::new();
    if let Some(blocks) = result.get("content").and_then(Value::as_array) {
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => {
                    parts.push(b.get("text").and_then(Value::as_str).unwrap_or("").into())
                }
                Some(kind @ ("image" | "audio")) => parts.push(format!(
                    "[{kind}: {}]",
                    b.get("mimeType")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown type")
                )),
                Some("resource") => {
                    let r = b.get("resource").unwrap_or(&Value::Null);
                    match r.get("text").and_then(Value::as_str) {
                        Some(t) => parts.push(t.to_string()),
                        None => parts.push(format!(
                            "[resource: {}]",
                            r.get("uri").and_then(Value::as_str).unwrap_or("")
                        )),
                    }
                }
                Some("resource_link") => parts.push(format!(
                    "[resource link: {}]",
                    b.get("uri").and_then(Value::as_str).unwrap_or("")
                )),
                _ => {}
            }
        }
    }
    let text = redact_secrets(&parts.join("\n"));
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let text = if text.is_empty() {
            "the MCP tool reported an error".to_string()
        } else {
            text
        };
        return ToolOutput::error(json!({ "error": text }).to_string());
    }
    let structured = result.get("structuredContent").map(|s| {
        let mut s = s.clone();
        redact_value(&mut s);
        s
    });
    let out = match structured.as_ref() {
        Some(s) if !s.is_null() && text.is_empty() => json!({ "result": s }),
        Some(s) if !s.is_null() => json!({ "result": text, "structuredContent": s }),
        _ => json!({ "result": text }),
    };
    ToolOutput::json(&out)
}

/// Redact every string in `v` (keys stay).
fn redact_value(v: &mut Value) {
    match v {
        Value::String(s) if hermes_approval::redact::may_contain_secret(s) => {
            *s = redact_secrets(s)
        }
        Value::Array(a) => a.iter_mut().for_each(redact_value),
        Value::Object(m) => m.values_mut().for_each(redact_value),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps() {
        let r = map(
            &json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
        );
        assert!(!r.is_error);
        assert_eq!(r.text, r#"{"result":"a\nb"}"#);
        let r = map(&json!({"content": [{"type": "text", "text": "bad"}], "isError": true}));
        assert!(r.is_error);
        assert_eq!(r.text, r#"{"error":"bad"}"#);
        let r = map(&json!({"content": [], "structuredContent": {"x": 1}}));
        assert_eq!(r.text, r#"{"result":{"x":1}}"#);
        let r = map(
            &json!({"content": [{"type": "text", "text": "t"}], "structuredContent": {"x": 1}}),
        );
        assert_eq!(r.text, r#"{"result":"t","structuredContent":{"x":1}}"#);
        let key = "sk-abcdefghijklmnopqrstuvwxyz0123456789";
        let r = map(
            &json!({"content": [{"type": "text", "text": format!("key {key}")}],
            "structuredContent": {"k": [key]}}),
        );
        assert!(!r.text.contains(key), "{}", r.text);
    }
}
