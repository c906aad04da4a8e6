//! Batches of model tool calls (an OpenAI `tool_calls` array): consecutive
//! parallel-safe calls run concurrently, everything else runs in order, and
//! results come back in input order. One failing call never loses the others.

use serde_json::{Value, json};
use std::sync::Arc;

use super::{CallContext, dispatch_sync, is_parallel_safe, limit};
use crate::error::{Error, Result};
use crate::runtime::Shared;

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
    let (args, problem) = match func.get("arguments") {
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

/// `ht_runtime_dispatch_batch`.
pub fn dispatch_batch(shared: &Arc<Shared>, calls_json: &str, ctx: &CallContext) -> Result<String> {
    let _g = shared.enter()?;
    let v: Value =
        serde_json::from_str(calls_json).map_err(|e| Error::json(format!("tool_calls: {e}")))?;
    let Value::Array(list) = v else {
        return Err(Error::json(
            "tool_calls: must be a JSON array of tool calls",
        ));
    };
    let items: Vec<Item> = list
        .iter()
        .enumerate()
        .map(|(i, v)| parse_item(i, v))
        .collect();
    let mut results: Vec<Option<String>> = vec![None; items.len()];
    let width = shared.config.dispatch.max_parallel.max(1);
    let run_one = |item: &Item| -> String {
        if let Some(p) = &item.problem {
            return limit::error_json(p);
        }
        let c = ctx.with_tool_call_id(&item.id);
        match dispatch_sync(shared, &item.name, &item.args, c) {
            Ok(text) => text,
            Err(e) => json!({"error": e.message}).to_string(),
        }
    };
    let mut i = 0;
    while i < items.len() {
        // A run of consecutive parallel-safe calls.
        let mut j = i;
        while j < items.len()
            && items[j].problem.is_none()
            && is_parallel_safe(shared, &items[j].name)
        {
            j += 1;
        }
        if j - i >= 2 {
            for chunk_start in (i..j).step_by(width) {
                let chunk_end = (chunk_start + width).min(j);
                let outs: Vec<String> = std::thread::scope(|s| {
                    let handles: Vec<_> = (chunk_start..chunk_end)
                        .map(|k| {
                            let item = &items[k];
                            std::thread::Builder::new()
                                .name("ht-batch".into())
                                .spawn_scoped(s, move || run_one(item))
                        })
                        .collect();
                    handles
                        .into_iter()
                        .zip(chunk_start..chunk_end)
                        .map(|(h, k)| match h {
                            Ok(h) => h
                                .join()
                                .unwrap_or_else(|_| limit::error_json("internal error (bug)")),
                            Err(_) => run_one(&items[k]),
                        })
                        .collect()
                });
                for (k, out) in (chunk_start..chunk_end).zip(outs) {
                    results[k] = Some(out);
                }
            }
            i = j;
        } else {
            results[i] = Some(run_one(&items[i]));
            i += 1;
        }
    }
    let out: Vec<Value> = items
        .iter()
        .zip(results)
        .map(|(item, r)| json!({"tool_call_id": item.id, "name": item.name, "content": r.unwrap_or_default()}))
        .collect();
    Ok(Value::Array(out).to_string())
}
