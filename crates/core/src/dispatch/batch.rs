//! Batches of model tool calls, in the shape the model sent them (an OpenAI
//! `tool_calls` array, Anthropic `tool_use` blocks, or MCP `tools/call`
//! params): consecutive parallel-safe calls run concurrently on the engine's
//! blocking pool (at most `max_parallel` at once, each worker taking the next
//! call as soon as it is free: no chunk barrier), everything else runs in
//! order, and results come back in input order. One failing call never
//! loses the others.

use parking_lot::Mutex;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{CallContext, dispatch_sync, is_parallel_safe, limit};
use crate::core::Core;
use crate::error::{Error, Result};

struct Item {
    id: String,
    name: String,
    args: String,
    /// Set when the entry itself is malformed: the call is not run.
    problem: Option<String>,
}

fn parse_item(i: usize, v: &Value) -> Item {
    let id = v
        .get("id")
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
    let Value::Array(list) = v else {
        return Err(Error::json(
            "tool_calls: must be a JSON array of tool calls",
        ));
    };
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
            let content = r.unwrap_or_default();
            json!({
                "tool_call_id": item.id,
                "name": item.name,
                "is_error": is_error_result(&content),
                "content": content,
            })
        })
        .collect();
    Ok(Value::Array(out).to_string())
}
