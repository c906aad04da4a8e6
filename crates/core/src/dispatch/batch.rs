//! Batches of model tool calls, in the shape the model sent them (an OpenAI
//! `tool_calls` array, Anthropic `tool_use` blocks, or MCP `tools/call`
//! params): consecutive parallel-safe calls run concurrently on the engine's
//! blocking pool (at most `max_parallel` at once, each worker taking the next
//! call as soon as it is free: no chunk barrier), everything else runs in
//! order, and results come back in input order. One failing call never
//! loses the others. `answer_format` answers in the shape the host forwards
//! to its model: OpenAI `role: tool` messages, OpenAI Responses
//! `function_call_output` items, Anthropic `tool_result` blocks or MCP
//! `CallToolResult`s (`auto`: each call's own shape).

use parking_lot::Mutex;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{CallContext, dispatch_sync, is_parallel_safe, limit};
use crate::core::Core;
use crate::error::{Error, Result};

/// The shape of one call as the model sent it, and of the answer that matches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// The library's own result shape: `{"tool_call_id","name","is_error","content"}`.
    Native,
    /// OpenAI Chat Completions: `{"role":"tool","tool_call_id","content"}` messages.
    OpenAi,
    /// OpenAI Responses: `{"type":"function_call_output","call_id","output"}` items.
    OpenAiResponses,
    /// Anthropic: `{"type":"tool_result","tool_use_id","content","is_error"}` blocks.
    Anthropic,
    /// MCP `CallToolResult`: `{"content":[{"type":"text","text"}],"isError","structuredContent"?}`.
    Mcp,
}

/// `answer_format`: one shape for every result, or `auto` (each result in its call's shape).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AnswerFormat {
    Fixed(Shape),
    Auto,
}

fn answer_format(v: Option<&Value>) -> Result<AnswerFormat> {
    let f = match v {
        None | Some(Value::Null) => return Ok(AnswerFormat::Fixed(Shape::Native)),
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(Error::json("answer_format: must be a string")),
    };
    Ok(match f {
        "native" => AnswerFormat::Fixed(Shape::Native),
        "openai" => AnswerFormat::Fixed(Shape::OpenAi),
        "openai_responses" => AnswerFormat::Fixed(Shape::OpenAiResponses),
        "anthropic" => AnswerFormat::Fixed(Shape::Anthropic),
        "mcp" => AnswerFormat::Fixed(Shape::Mcp),
        "auto" => AnswerFormat::Auto,
        other => {
            return Err(Error::invalid(format!(
                "answer_format: must be \"native\", \"openai\", \"openai_responses\", \"anthropic\", \"mcp\" or \"auto\", got \"{other}\""
            )));
        }
    })
}

/// The shape a call came in.
fn shape_of(v: &Value) -> Shape {
    match v.get("type").and_then(Value::as_str) {
        Some("tool_use") => Shape::Anthropic,
        Some("function_call") => Shape::OpenAiResponses,
        Some("function") => Shape::OpenAi,
        _ if v.get("function").is_some() => Shape::OpenAi,
        _ => Shape::Mcp,
    }
}

/// The answer to `item` in `shape`.
fn answer(shape: Shape, item: &Item, content: String) -> Value {
    let is_error = is_error_result(&content);
    match shape {
        Shape::Native => json!({
            "tool_call_id": item.id,
            "name": item.name,
            "is_error": is_error,
            "content": content,
        }),
        Shape::OpenAi => json!({"role": "tool", "tool_call_id": item.id, "content": content}),
        Shape::OpenAiResponses => {
            json!({"type": "function_call_output", "call_id": item.id, "output": content})
        }
        Shape::Anthropic => json!({
            "type": "tool_result",
            "tool_use_id": item.id,
            "content": content,
            "is_error": is_error,
        }),
        Shape::Mcp => {
            let structured = if is_error || !content.starts_with('{') {
                None
            } else {
                match serde_json::from_str::<Value>(&content) {
                    Ok(o @ Value::Object(_)) => Some(o),
                    _ => None,
                }
            };
            let mut m = serde_json::Map::new();
            m.insert("content".into(), json!([{"type": "text", "text": content}]));
            m.insert("isError".into(), Value::Bool(is_error));
            if let Some(o) = structured {
                m.insert("structuredContent".into(), o);
            }
            Value::Object(m)
        }
    }
}

/// The calls of a batch and its `answer_format`: a JSON array of calls, or an
/// object holding them (`tool_calls`: an OpenAI assistant message; `content`:
/// an Anthropic assistant message, whose blocks other than `tool_use` are
/// skipped; `calls`) plus an optional `answer_format`. The context's
/// `answer_format` applies when the batch names none.
fn batch_input(v: Value, ctx: &CallContext) -> Result<(Vec<Value>, AnswerFormat)> {
    let ctx_format = || -> Result<AnswerFormat> {
        match ctx.json.as_deref().map(serde_json::from_str::<Value>) {
            Some(Ok(Value::Object(m))) => answer_format(m.get("answer_format")),
            _ => Ok(AnswerFormat::Fixed(Shape::Native)),
        }
    };
    match v {
        Value::Array(list) => Ok((list, ctx_format()?)),
        Value::Object(mut m) => {
            let format = match m.get("answer_format") {
                Some(f) => answer_format(Some(f))?,
                None => ctx_format()?,
            };
            let list = if let Some(Value::Array(l)) = m.remove("tool_calls") {
                l
            } else if let Some(Value::Array(l)) = m.remove("calls") {
                l
            } else if let Some(Value::Array(l)) = m.remove("content") {
                l.into_iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                    .collect()
            } else {
                return Err(Error::json(
                    "tool_calls: an object batch needs a \"tool_calls\", \"calls\" or \"content\" array",
                ));
            };
            Ok((list, format))
        }
        _ => Err(Error::json(
            "tool_calls: must be a JSON array of tool calls (or an object holding one)",
        )),
    }
}

struct Item {
    /// The shape the call came in (for `answer_format: "auto"`).
    shape: Shape,
    id: String,
    name: String,
    args: String,
    /// Set when the entry itself is malformed: the call is not run.
    problem: Option<String>,
}

fn parse_item(i: usize, v: &Value) -> Item {
    let shape = shape_of(v);
    // OpenAI Responses `function_call` items are answered by `call_id`.
    let id_key = if shape == Shape::OpenAiResponses && v.get("call_id").is_some() {
        "call_id"
    } else {
        "id"
    };
    let id = v
        .get(id_key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("call_{i}"));
    let func = v.get("function").unwrap_or(v);
    let name = func
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    // Anthropic `tool_use` blocks carry `input`; OpenAI and MCP `arguments`.
    let raw_args = func.get("arguments").or_else(|| func.get("input"));
    let (args, problem) = match raw_args {
        None | Some(Value::Null) => ("{}".to_string(), None),
        Some(Value::String(s)) => (s.clone(), None),
        Some(o @ Value::Object(_)) => (o.to_string(), None),
        Some(other) => (other.to_string(), None),
    };
    let problem = problem.or_else(|| {
        name.is_empty()
            .then(|| format!("tool call #{i} has no function name; it was not run"))
    });
    Item {
        shape,
        id,
        name,
        args,
        problem,
    }
}

/// Whether a result text is an error result (a JSON object with `error`).
pub fn is_error_result(text: &str) -> bool {
    text.starts_with('{')
        && matches!(serde_json::from_str::<Value>(text), Ok(Value::Object(m)) if m.contains_key("error"))
}

fn run_one(core: &Core, ctx: &CallContext, item: &Item) -> String {
    if let Some(p) = &item.problem {
        return limit::error_json(p);
    }
    let c = ctx.with_tool_call_id(&item.id);
    match dispatch_sync(core, &item.name, &item.args, c) {
        Ok(text) => text,
        Err(e) => json!({"error": e.message}).to_string(),
    }
}

/// Run items `range` concurrently with at most `width` workers; the calling
/// thread is one of them, the others come from the engine's blocking pool.
fn run_parallel(
    core: &Arc<Core>,
    ctx: &CallContext,
    items: &Arc<Vec<Item>>,
    range: std::ops::Range<usize>,
    width: usize,
    results: &mut [Option<String>],
) {
    struct Shared {
        next: AtomicUsize,
        end: usize,
        out: Mutex<Vec<(usize, String)>>,
        left: Mutex<usize>,
        done: parking_lot::Condvar,
    }
    let helpers = width.min(range.len()).saturating_sub(1);
    let st = Arc::new(Shared {
        next: AtomicUsize::new(range.start),
        end: range.end,
        out: Mutex::new(Vec::with_capacity(range.len())),
        left: Mutex::new(helpers),
        done: parking_lot::Condvar::new(),
    });
    let work = |core: &Core, ctx: &CallContext, items: &[Item], st: &Shared| loop {
        let k = st.next.fetch_add(1, Ordering::AcqRel);
        if k >= st.end {
            break;
        }
        let text = run_one(core, ctx, &items[k]);
        st.out.lock().push((k, text));
    };
    for _ in 0..helpers {
        let (core2, ctx2, items2, st2) = (core.clone(), ctx.clone(), items.clone(), st.clone());
        core.engine.spawn_blocking(move || {
            work(&core2, &ctx2, &items2, &st2);
            let mut left = st2.left.lock();
            *left -= 1;
            st2.done.notify_all();
        });
    }
    work(core, ctx, items, &st);
    let mut left = st.left.lock();
    while *left > 0 {
        st.done.wait(&mut left);
    }
    drop(left);
    for (k, text) in std::mem::take(&mut *st.out.lock()) {
        results[k] = Some(text);
    }
}

/// `ht_runtime_dispatch_batch`.
pub fn dispatch_batch(core: &Arc<Core>, calls_json: &str, ctx: &CallContext) -> Result<String> {
    let _g = core.enter()?;
    let limits = &core.limits;
    if calls_json.len() > limits.max_batch_bytes {
        return Err(Error::invalid(format!(
            "tool_calls: the batch is {} bytes, over limits.max_batch_bytes ({})",
            calls_json.len(),
            limits.max_batch_bytes
        )));
    }
    let v: Value =
        serde_json::from_str(calls_json).map_err(|e| Error::json(format!("tool_calls: {e}")))?;
    let (list, format) = batch_input(v, ctx)?;
    if list.len() > limits.max_batch_calls {
        return Err(Error::invalid(format!(
            "tool_calls: the batch has {} calls, over limits.max_batch_calls ({})",
            list.len(),
            limits.max_batch_calls
        )));
    }
    let items: Arc<Vec<Item>> = Arc::new(
        list.iter()
            .enumerate()
            .map(|(i, v)| parse_item(i, v))
            .collect(),
    );
    let mut results: Vec<Option<String>> = vec![None; items.len()];
    let width = core.dispatch_config.max_parallel.max(1);
    let mut i = 0;
    while i < items.len() {
        // A run of consecutive parallel-safe calls.
        let mut j = i;
        while j < items.len()
            && items[j].problem.is_none()
            && is_parallel_safe(core, &items[j].name)
        {
            j += 1;
        }
        if j - i >= 2 {
            run_parallel(core, ctx, &items, i..j, width, &mut results);
            i = j;
        } else {
            results[i] = Some(run_one(core, ctx, &items[i]));
            i += 1;
        }
    }
    let out: Vec<Value> = items
        .iter()
        .zip(results)
        .map(|(item, r)| {
            let shape = match format {
                AnswerFormat::Fixed(s) => s,
                AnswerFormat::Auto => item.shape,
            };
            answer(shape, item, r.unwrap_or_default())
        })
        .collect();
    Ok(Value::Array(out).to_string())
}
