//! `tool_search`: the built-in tool a model calls to load definitions a
//! schema budget deferred (hosts with thousands of MCP tools cannot send
//! every schema on every turn). It ranks the tools of the deferring query's
//! selection by keyword over names, parameter names and descriptions, and
//! answers with their full definitions in that query's format, which the
//! host adds to the next request (`defer.loaded` keeps them loaded).
//!
//! Ranking is BM25-like: each query word scores by its rarity across the
//! tools (idf) and by where it appears (name 3, parameter 2, description 1;
//! a word that only starts a tool's word counts 0.6). Ties go by name.

use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};

use crate::core::Core;
use crate::definitions::{TOOL_SEARCH, selection_for};
use crate::error::Result;
use crate::registry::{ToolEntry, build_entry, parse_spec};
use crate::tool::{Tool, ToolCall, ToolOutput};

const DEFAULT_LIMIT: usize = 5;
const MAX_LIMIT: usize = 25;

/// The tool's spec (toolset `tool_search`).
pub fn spec() -> String {
    serde_json::json!({
        "name": TOOL_SEARCH,
        "toolset": TOOL_SEARCH,
        "parallel_safe": true,
        "schema": {
            "description": "Search the tools that are available but not loaded yet, by keywords (what you want to do, a service, a parameter). Returns the full definitions of the best matches; they can be called from the next turn on. Use 'select:name1,name2' to load tools by exact name.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Keywords, or select:<name>[,<name>...]"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "How many tools to return (default 5)"}
                },
                "required": ["query"]
            }
        }
    })
    .to_string()
}

/// Register `tool_search` into `core`.
pub fn install(core: &Arc<Core>) -> Result<()> {
    let tool = Arc::new(ToolSearch {
        core: Arc::downgrade(core),
    });
    let entry = build_entry(parse_spec(&spec())?, tool, None)?;
    core.register(entry, false)
}

/// The search tool. Holds the core weakly: the core owns its tools.
pub struct ToolSearch {
    core: Weak<Core>,
}

#[derive(Deserialize)]
struct Args {
    query: String,
    #[serde(default)]
    limit: Option<usize>,
}

impl Tool for ToolSearch {
    fn call(&self, call: ToolCall<'_>) {
        let out = match self.core.upgrade() {
            None => ToolOutput::error(r#"{"error":"the runtime is closing"}"#),
            Some(core) => run(&core, call.args_text),
        };
        call.reply.send(out);
    }
    fn wants_value(&self) -> bool {
        false
    }
}

fn run(core: &Core, args_text: &str) -> ToolOutput {
    let args: Args = match serde_json::from_str(args_text) {
        Ok(a) => a,
        Err(e) => {
            return ToolOutput::error(
                serde_json::json!({"error": format!("tool_search: {e}")}).to_string(),
            );
        }
    };
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let last = core.defs_cache.lock().last_deferral.clone();
    let query_text = last.as_ref().map(|(q, _)| q.clone()).unwrap_or_default();
    let (tools, format) = match selection_for(core, &query_text) {
        Ok((t, f)) => (t, last.map_or(f, |(_, f)| f)),
        Err(e) => {
            return ToolOutput::error(
                serde_json::json!({"error": format!("tool_search: {}", e.message)}).to_string(),
            );
        }
    };
    let tools: Vec<Arc<ToolEntry>> = tools
        .into_iter()
        .filter(|t| t.name != TOOL_SEARCH)
        .collect();
    let (picked, total) = match args.query.trim().strip_prefix("select:") {
        Some(list) => {
            let want: HashSet<&str> = list.split(',').map(str::trim).collect();
            let picked: Vec<&Arc<ToolEntry>> = tools
                .iter()
                .filter(|t| want.contains(t.name.as_str()))
                .collect();
            let n = picked.len();
            (picked, n)
        }
        None => rank(&tools, &args.query, limit),
    };
    let mut text = String::from("{\"tools\":[");
    for (i, t) in picked.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(t.rendered(format));
    }
    text.push_str(&format!(
        "],\"matches\":{total},\"searched\":{}}}",
        tools.len()
    ));
    ToolOutput::ok(text)
}

/// Lower-case words of `s`, split at non-alphanumerics and camelCase humps.
pub fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// One tool's words by field.
struct Doc<'a> {
    tool: &'a Arc<ToolEntry>,
    name: Vec<String>,
    params: Vec<String>,
    desc: Vec<String>,
}

fn field_score(words: &[String], q: &str) -> f64 {
    if words.iter().any(|w| w == q) {
        1.0
    } else if q.len() >= 3 && words.iter().any(|w| w.starts_with(q)) {
        0.6
    } else {
        0.0
    }
}

/// The best `limit` tools for `query`, and how many matched at all.
fn rank<'a>(
    tools: &'a [Arc<ToolEntry>],
    query: &str,
    limit: usize,
) -> (Vec<&'a Arc<ToolEntry>>, usize) {
    let mut q = words(query);
    q.sort();
    q.dedup();
    if q.is_empty() {
        return (Vec::new(), 0);
    }
    let docs: Vec<Doc<'_>> = tools
        .iter()
        .map(|t| Doc {
            tool: t,
            name: words(&t.name),
            params: t
                .compiled()
                .map(|c| c.schema.node.property_names())
                .unwrap_or_default()
                .iter()
                .flat_map(|p| words(p))
                .collect(),
            desc: words(&t.description),
        })
        .collect();
    let n = docs.len() as f64;
    let mut df: HashMap<&str, usize> = HashMap::new();
    for d in &docs {
        for w in &q {
            if [&d.name, &d.params, &d.desc]
                .iter()
                .any(|f| field_score(f, w) > 0.0)
            {
                *df.entry(w.as_str()).or_default() += 1;
            }
        }
    }
    let phrase = q.join("_");
    let mut scored: Vec<(f64, &Arc<ToolEntry>)> = docs
        .iter()
        .filter_map(|d| {
            let mut s = 0.0;
            for w in &q {
                let idf = (1.0 + n / (1.0 + *df.get(w.as_str()).unwrap_or(&0) as f64)).ln();
                s += idf
                    * (3.0 * field_score(&d.name, w)
                        + 2.0 * field_score(&d.params, w)
                        + field_score(&d.desc, w));
            }
            if d.tool.name == phrase || d.tool.name == query.trim() {
                s += 100.0;
            }
            (s > 0.0).then_some((s, d.tool))
        })
        .collect();
    let total = scored.len();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    scored.truncate(limit);
    (scored.into_iter().map(|(_, t)| t).collect(), total)
}

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn words_split_snake_camel_and_punctuation() {
        assert_eq!(
            words("github_createPullRequest"),
            ["github", "create", "pull", "request"]
        );
        assert_eq!(words("Read a FILE, v2!"), ["read", "a", "file", "v2"]);
    }
}
