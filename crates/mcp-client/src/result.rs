//! A `tools/call` result as the model reads it, like the original: text
//! blocks joined by newlines → `{"result": text}`; with `structuredContent`
//! → `{"result": text, "structuredContent": obj}` (or `{"result": obj}`
//! without text); `isError` → `{"error": text}` as an error result. Images
//! and audio become attachments for the host (the model reads a placeholder);
//! resources are rendered or summarized in the text.
//! Credential-looking strings (`sk-...`, `ghp_...`, `Bearer ...`, `token=`)
//! are redacted in the text and in every string of the structured content.

use hermes_approval::redact_secrets;
use hermes_core::ToolOutput;
use serde_json::{Value, json};

/// Largest attachment handed to the host (base64 characters); a larger
/// one is only described.
pub const MAX_ATTACHMENT: usize = 16 << 20;

/// Map the result (as the JSON the server sent).
pub fn map(result: &Value) -> ToolOutput {
    map_parts(result).0
}

/// Map the result, and take its images and audio out as attachments for
/// the host (`{"type","mimeType","data"}` as the server sent them); the
/// model reads a short placeholder for each.
pub fn map_parts(result: &Value) -> (ToolOutput, Vec<Value>) {
    let mut attachments = Vec::new();
    let mut parts: Vec<String> = Vec::new();
    if let Some(blocks) = result.get("content").and_then(Value::as_array) {
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => {
                    parts.push(b.get("text").and_then(Value::as_str).unwrap_or("").into())
                }
                Some(kind @ ("image" | "audio")) => {
                    let mime = b
                        .get("mimeType")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown type");
                    let data = b.get("data").and_then(Value::as_str).unwrap_or("");
                    // Decoded size: 3 bytes per 4 base64 characters.
                    let kb = (data.len() / 4 * 3) as f64 / 1024.0;
                    if data.is_empty() || data.len() > MAX_ATTACHMENT {
                        parts.push(format!("[{kind}: {mime}, {kb:.1} KB, not shown]"));
                    } else {
                        attachments.push(json!({"type": kind, "mimeType": mime, "data": data}));
                        parts.push(format!(
                            "[{kind}: {mime}, {kb:.1} KB: attachment {} of this result, given to the user]",
                            attachments.len()
                        ));
                    }
                }
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
        return (
            ToolOutput::error(json!({ "error": text }).to_string()),
            attachments,
        );
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
    (ToolOutput::json(&out), attachments)
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

    #[test]
    fn images_become_attachments() {
        let (out, att) = map_parts(&json!({"content": [
            {"type": "text", "text": "here"},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
            {"type": "audio", "mimeType": "audio/wav", "data": ""}
        ]}));
        assert_eq!(att.len(), 1);
        assert_eq!(att[0]["mimeType"], "image/png");
        assert_eq!(att[0]["data"], "iVBORw0KGgo=");
        assert!(
            out.text
                .contains("[image: image/png, 0.0 KB: attachment 1 of this result"),
            "{}",
            out.text
        );
        assert!(out.text.contains("[audio: audio/wav, 0.0 KB, not shown]"));
        assert!(!out.text.contains("iVBORw0KGgo="), "no data for the model");
    }
}
