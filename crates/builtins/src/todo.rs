//! The built-in `todo` toolset: one task list per task, in memory, with
//! the original's semantics (read with no arguments, replace, or merge by
//! id; statuses pending / in_progress / completed / cancelled; the full
//! list and summary counts in every answer). The host reads a task's list
//! with [`Todos::list`] (the runtime and the C ABI expose it) to show it.

use parking_lot::Mutex;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

use crate::activity::Activity;
use hermes_core::core::Core;
use hermes_core::error::Result;
use hermes_core::registry::{build_entry, parse_spec};
use hermes_core::{Blocking, BlockingTool, Lifecycle, RunCtx, ToolOutput};

pub const MAX_ITEMS: usize = 256;
pub const MAX_CONTENT_CHARS: usize = 4000;
const MARKER: &str = "… [truncated]";
const STATUSES: &[&str] = &["pending", "in_progress", "completed", "cancelled"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub id: String,
    pub content: String,
    pub status: String,
}

/// The task lists of a runtime.
pub struct Todos {
    lists: Mutex<HashMap<String, Vec<Item>>>,
    activity: Arc<Activity>,
}

fn key(task: &str) -> &str {
    if task.is_empty() { "default" } else { task }
}

fn clean_content(s: &str) -> String {
    let s = s.trim();
    if s.is_empty() {
        return "(no description)".into();
    }
    if s.chars().count() > MAX_CONTENT_CHARS {
        // the marker included, as the original: 4000 characters in all
        let mut t: String = s
            .chars()
            .take(MAX_CONTENT_CHARS - MARKER.chars().count())
            .collect();
        t.push_str(MARKER);
        return t;
    }
    s.to_string()
}

fn clean_status(s: Option<&str>) -> String {
    let s = s.unwrap_or("pending").trim().to_ascii_lowercase();
    if STATUSES.contains(&s.as_str()) {
        s
    } else {
        "pending".into()
    }
}

/// A field as text the way the original coerces it (Python's `str()`):
/// numbers as written, `true` as `True`, `null` as `None`.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        other => other.to_string(),
    }
}

/// Whether a field counts as given (Python truthiness: not null, empty,
/// zero or false).
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::String(s) => !s.is_empty(),
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The item's id as text, trimmed (empty when absent).
fn raw_id(v: &Value) -> String {
    v.get("id")
        .map(text_of)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// A full item from one element of `todos`: a missing id is `?`, missing
/// content `(no description)`, an unknown status `pending`; an element
/// that is not an object becomes a placeholder item.
fn item_of(v: &Value) -> Item {
    if !v.is_object() {
        return Item {
            id: "?".into(),
            content: "(invalid item)".into(),
            status: "pending".into(),
        };
    }
    let id = raw_id(v);
    Item {
        id: if id.is_empty() { "?".into() } else { id },
        content: clean_content(&v.get("content").map(text_of).unwrap_or_default()),
        status: clean_status(Some(
            &v.get("status")
                .map(text_of)
                .unwrap_or_else(|| "pending".into()),
        )),
    }
}

/// Later duplicates of an id win, at the position of the last one;
/// elements without an id (or not objects) never collide.
fn dedup_last(raw: &[Value]) -> Vec<&Value> {
    let mut last: HashMap<String, usize> = HashMap::new();
    let mut keep = vec![false; raw.len()];
    for (i, v) in raw.iter().enumerate() {
        let id = if v.is_object() {
            raw_id(v)
        } else {
            String::new()
        };
        if id.is_empty() {
            keep[i] = true;
        } else if let Some(prev) = last.insert(id, i) {
            keep[prev] = false;
            keep[i] = true;
        } else {
            keep[i] = true;
        }
    }
    raw.iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(v, _)| v)
        .collect()
}

impl Todos {
    pub fn new(activity: Arc<Activity>) -> Todos {
        Todos {
            lists: Mutex::new(HashMap::new()),
            activity,
        }
    }

    /// A task's list and summary (what the tool answers).
    pub fn list(&self, task: &str) -> Value {
        let lists = self.lists.lock();
        render(lists.get(key(task)).map(Vec::as_slice).unwrap_or(&[]))
    }

    /// Apply one call's arguments.
    pub fn call(&self, task: &str, args: &Value) -> std::result::Result<Value, String> {
        let todos = match args.get("todos") {
            None | Some(Value::Null) => return Ok(self.list(task)),
            Some(Value::String(s)) => serde_json::from_str::<Value>(s)
                .map_err(|e| format!("todos: not a JSON array ({e})"))?,
            Some(v) => v.clone(),
        };
        let Value::Array(raw) = todos else {
            return Err(format!(
                "todos must be a list, got {}",
                match todos {
                    Value::Object(_) => "dict",
                    Value::Number(_) => "number",
                    Value::Bool(_) => "bool",
                    _ => "string",
                }
            ));
        };
        let merge = match args.get("merge") {
            Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
            Some(v) => truthy(v),
            None => false,
        };
        let mut lists = self.lists.lock();
        let list = lists.entry(key(task).to_string()).or_default();
        if merge {
            // given fields update the item of that id; new ids are appended
            // whole; elements without an id (or not objects) are skipped
            for v in dedup_last(&raw) {
                let id = if v.is_object() {
                    raw_id(v)
                } else {
                    String::new()
                };
                if id.is_empty() {
                    continue;
                }
                if let Some(it) = list.iter_mut().find(|it| it.id == id) {
                    if let Some(c) = v.get("content").filter(|c| truthy(c)) {
                        it.content = clean_content(&text_of(c));
                    }
                    if let Some(st) = v.get("status").filter(|s| truthy(s)) {
                        let st = text_of(st).trim().to_ascii_lowercase();
                        if STATUSES.contains(&st.as_str()) {
                            it.status = st;
                        }
                    }
                } else {
                    list.push(item_of(v));
                }
            }
        } else {
            *list = dedup_last(&raw).into_iter().map(item_of).collect();
        }
        // list order is priority: the head is kept
        list.truncate(MAX_ITEMS);
        Ok(render(list))
    }

    /// The active items (pending, in progress) as the original re-injects
    /// them after context compression.
    pub fn active_summary(&self, task: &str) -> String {
        let lists = self.lists.lock();
        let Some(list) = lists.get(key(task)) else {
            return String::new();
        };
        list.iter()
            .filter(|it| it.status == "pending" || it.status == "in_progress")
            .map(|it| {
                format!(
                    "- [{}] {}. {} ({})",
                    if it.status == "in_progress" { ">" } else { " " },
                    it.id,
                    it.content,
                    it.status
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn render(list: &[Item]) -> Value {
    let count = |s: &str| list.iter().filter(|it| it.status == s).count();
    json!({
        "todos": list.iter().map(|it| json!({"id": it.id, "content": it.content, "status": it.status})).collect::<Vec<_>>(),
        "summary": {
            "total": list.len(),
            "pending": count("pending"),
            "in_progress": count("in_progress"),
            "completed": count("completed"),
            "cancelled": count("cancelled"),
        }
    })
}

impl Lifecycle for Todos {
    fn cleanup_task(&self, task_id: &str) {
        self.lists.lock().remove(key(task_id));
    }
}

struct TodoTool(Arc<Todos>);

impl BlockingTool for TodoTool {
    fn run(&self, args: Value, ctx: &RunCtx) -> ToolOutput {
        self.0.activity.bump(&ctx.context.task_id);
        match self.0.call(&ctx.context.task_id, &args) {
            Ok(v) => ToolOutput::json(&v),
            Err(e) => ToolOutput::error(json!({ "error": e }).to_string()),
        }
    }
}

const DESC: &str = "Keep the task list for the current work. Call with no arguments to read it. \
Pass todos (items {id, content, status}; status pending, in_progress, completed or cancelled) to \
replace the whole list, or with merge=true to update items by id (only the fields given) and \
append new ones. Use it for \
work of three steps or more: keep exactly one item in_progress and mark items completed as soon \
as they are done. Every answer is the full list with counts.";

pub fn spec() -> Value {
    json!({
        "name": "todo", "toolset": "todo", "emoji": "📋",
        "schema": {"name": "todo", "description": DESC, "parameters": {
            "type": "object",
            "properties": {
                "todos": {"type": "array", "description": "Items to write; omit to read the list.",
                    "items": {"description": "An item {id, content, status}; with merge=true only id and the fields to change.",
                        "properties": {
                        "id": {"description": "Unique item id (a string; other values are turned into text)."},
                        "content": {"description": "What to do (a string)."},
                        "status": {"description": "pending, in_progress, completed or cancelled (anything else is pending)."}
                    }}},
                "merge": {"type": "boolean", "default": false, "description": "true: update or append by id; false: replace the list."}
            },
            "required": []
        }}
    })
}

/// Register the todo toolset into `core`.
pub fn install(activity: Arc<Activity>, core: &Core) -> Result<Arc<Todos>> {
    let todos = Arc::new(Todos::new(activity));
    let entry = build_entry(
        parse_spec(&spec().to_string())?,
        Arc::new(Blocking(Arc::new(TodoTool(todos.clone())))),
        None,
    )?;
    core.register_many(vec![entry], false)?;
    Ok(todos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn todos() -> Todos {
        Todos::new(Arc::new(Activity::default()))
    }

    #[test]
    fn merge_updates_only_the_given_fields() {
        let t = todos();
        t.call(
            "x",
            &json!({"todos": [{"id": "1", "content": "a", "status": "pending"},
                              {"id": "2", "content": "b", "status": "pending"}]}),
        )
        .unwrap();
        let v = t
            .call(
                "x",
                &json!({"todos": [{"id": "1", "status": "completed"}, {"id": "2", "content": "B"},
                                  {"id": "2", "status": "bogus"}, {"content": "no id"}, 7],
                        "merge": true}),
            )
            .unwrap();
        assert_eq!(
            v["todos"],
            json!([{"id": "1", "content": "a", "status": "completed"},
                   {"id": "2", "content": "b", "status": "pending"}])
        );
        // a new id in a merge is a whole item with the defaults
        let v = t
            .call("x", &json!({"todos": [{"id": "3"}], "merge": true}))
            .unwrap();
        assert_eq!(
            v["todos"][2],
            json!({"id": "3", "content": "(no description)", "status": "pending"})
        );
    }

    #[test]
    fn over_256_items_keep_the_head() {
        let t = todos();
        let many: Vec<Value> = (0..300)
            .map(|i| json!({"id": i.to_string(), "content": format!("step {i}"), "status": "pending"}))
            .collect();
        let v = t.call("x", &json!({ "todos": many })).unwrap();
        assert_eq!(v["summary"]["total"], 256);
        assert_eq!(v["todos"][255]["id"], "255");
        let more: Vec<Value> = (300..310).map(|i| json!({"id": i.to_string()})).collect();
        let v = t.call("x", &json!({"todos": more, "merge": true})).unwrap();
        assert_eq!(v["summary"]["total"], 256);
        // long content is cut to 4000 characters, the marker included
        let v = t
            .call(
                "x",
                &json!({"todos": [{"id": "l", "content": "y".repeat(5000)}]}),
            )
            .unwrap();
        let c = v["todos"][0]["content"].as_str().unwrap();
        assert_eq!(c.chars().count(), MAX_CONTENT_CHARS);
        assert!(c.ends_with("… [truncated]"));
    }

    #[test]
    fn non_objects_and_coercion() {
        let t = todos();
        let v = t
            .call(
                "x",
                &json!({"todos": ["just text", {"id": 5, "content": 42, "status": " COMPLETED "},
                                  {"id": true, "content": null}, {"id": "", "content": "x"},
                                  {"id": "  ", "content": "y"}]}),
            )
            .unwrap();
        assert_eq!(
            v["todos"],
            json!([{"id": "?", "content": "(invalid item)", "status": "pending"},
                   {"id": "5", "content": "42", "status": "completed"},
                   {"id": "True", "content": "None", "status": "pending"},
                   {"id": "?", "content": "x", "status": "pending"},
                   {"id": "?", "content": "y", "status": "pending"}])
        );
        // todos as a JSON string; not a list
        let v = t
            .call(
                "x",
                &json!({"todos": "[{\"id\": \"a\", \"content\": \"c\"}]"}),
            )
            .unwrap();
        assert_eq!(v["todos"][0]["id"], "a");
        assert!(t.call("x", &json!({"todos": {"id": "a"}})).is_err());
    }
}
