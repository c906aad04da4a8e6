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
        let mut t: String = s.chars().take(MAX_CONTENT_CHARS).collect();
        t.push_str("… [truncated]");
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

fn id_of(v: &Value) -> String {
    let id = match v.get("id") {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    if id.is_empty() { "?".into() } else { id }
}

/// Later duplicates of an id win, at the position of the last one.
fn dedup_last(items: Vec<Item>) -> Vec<Item> {
    let mut last: HashMap<String, usize> = HashMap::new();
    for (i, it) in items.iter().enumerate() {
        last.insert(it.id.clone(), i);
    }
    items
        .into_iter()
        .enumerate()
        .filter(|(i, it)| last.get(&it.id) == Some(i))
        .map(|(_, it)| it)
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
            return Err("todos must be an array of {id, content, status} objects".into());
        };
        if raw.len() > MAX_ITEMS {
            return Err(format!(
                "too many todo items ({}): at most {MAX_ITEMS}. Merge related steps or drop finished ones.",
                raw.len()
            ));
        }
        for (i, v) in raw.iter().enumerate() {
            if !v.is_object() {
                return Err(format!(
                    "todos[{i}] must be an object with id, content and status"
                ));
            }
        }
        let merge = args.get("merge").and_then(Value::as_bool).unwrap_or(false);
        let mut lists = self.lists.lock();
        let list = lists.entry(key(task).to_string()).or_default();
        if merge {
            let mut next = list.clone();
            for v in &raw {
                let id = id_of(v);
                if let Some(it) = next.iter_mut().find(|it| it.id == id) {
                    if let Some(c) = v.get("content").and_then(Value::as_str) {
                        it.content = clean_content(c);
                    }
                    if let Some(s) = v.get("status").and_then(Value::as_str) {
                        it.status = clean_status(Some(s));
                    }
                } else {
                    next.push(Item {
                        id,
                        content: clean_content(
                            v.get("content").and_then(Value::as_str).unwrap_or(""),
                        ),
                        status: clean_status(v.get("status").and_then(Value::as_str)),
                    });
                }
            }
            if next.len() > MAX_ITEMS {
                return Err(format!(
                    "the merged list would have {} items: at most {MAX_ITEMS}",
                    next.len()
                ));
            }
            *list = next;
        } else {
            let items: Vec<Item> = raw
                .iter()
                .map(|v| Item {
                    id: id_of(v),
                    content: clean_content(v.get("content").and_then(Value::as_str).unwrap_or("")),
                    status: clean_status(v.get("status").and_then(Value::as_str)),
                })
                .collect();
            *list = dedup_last(items);
        }
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
replace the whole list, or with merge=true to update items by id and append new ones. Use it for \
work of three steps or more: keep exactly one item in_progress and mark items completed as soon \
as they are done. Every answer is the full list with counts.";

pub fn spec() -> Value {
    json!({
        "name": "todo", "toolset": "todo", "emoji": "📋",
        "schema": {"name": "todo", "description": DESC, "parameters": {
            "type": "object",
            "properties": {
                "todos": {"type": "array", "description": "Items to write; omit to read the list.",
                    "items": {"type": "object", "properties": {
                        "id": {"type": "string", "description": "Unique item id."},
                        "content": {"type": "string", "description": "What to do."},
                        "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "cancelled"]}
                    }, "required": ["id", "content", "status"]}},
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
