//! Definitions: which tools the model sees, in which format. Resolution of
//! enabled/disabled toolsets follows the original (disabled last; presets
//! only remove their non-core tools) except that disabling can never
//! silently leave zero tools when the enabled set selects some. Results are
//! cached by (query text, registry generation, availability epoch) and
//! handed out without copying.

use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::sync::Arc;
use std::time::Instant;

use crate::availability::{Check, KeyHasher};
use crate::core::Core;
pub use crate::defs_cache::{BuildText, Text, TextBlock, string_text};
use crate::defs_cache::{Cached, Candidates, NameSet, Selection};
use crate::error::{Error, Result};
use crate::registry::{Format, ToolEntry};
use crate::toolsets;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Query {
    #[serde(default)]
    enabled_toolsets: Option<Vec<String>>,
    #[serde(default)]
    disabled_toolsets: Option<Vec<String>>,
    #[serde(default)]
    format: Option<String>,
    /// A schema budget: load some tools, defer the rest to `tool_search`.
    #[serde(default)]
    defer: Option<Defer>,
}

/// The `defer` part of a definitions query (hosts with thousands of tools).
/// Tools of `always_loaded_toolsets` and those named in `loaded` are always
/// returned; the others in name order while `max_tools` and `max_bytes`
/// (of definition text) allow; the rest are deferred and `tool_search`'s
/// description says how many, from which toolsets.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Defer {
    #[serde(default)]
    always_loaded_toolsets: Vec<String>,
    #[serde(default)]
    loaded: Vec<String>,
    #[serde(default)]
    max_tools: Option<usize>,
    #[serde(default)]
    max_bytes: Option<usize>,
}

/// The name of the built-in search tool (see `search.rs`).
pub const TOOL_SEARCH: &str = "tool_search";

/// A query's text (empty: every tool, OpenAI format) and its format.
fn parse_query(query_text: &str) -> Result<(Query, Format)> {
    let q: Query = if query_text.trim().is_empty() {
        Query::default()
    } else {
        serde_json::from_str(query_text)
            .map_err(|e| Error::json(format!("definitions query: {e}")))?
    };
    let format = parse_format(q.format.as_deref())?;
    Ok((q, format))
}

fn parse_format(f: Option<&str>) -> Result<Format> {
    Ok(match f.unwrap_or("openai") {
        "openai" => Format::OpenAi,
        "anthropic" => Format::Anthropic,
        "mcp" => Format::Mcp,
        other => {
            return Err(Error::invalid(format!(
                "definitions query: format: unknown format '{other}' (openai, anthropic, mcp)"
            )));
        }
    })
}

/// Names of the tools a query selects (before availability), or `None` for all.
fn select(core: &Core, q: &Query, query_text: &str) -> Result<Option<Selection>> {
    let disabled = q.disabled_toolsets.as_deref().unwrap_or(&[]);
    if q.enabled_toolsets.is_none() && disabled.is_empty() {
        return Ok(None);
    }
    let membership = core.read_registry(|r| r.membership);
    if let Some((m, sel)) = core.defs_cache.lock().selections.get(query_text)
        && *m == membership
    {
        return Ok(sel.clone());
    }
    let (membership, sel) = core
        .read_registry(|reg| -> Result<_> { Ok((reg.membership, select_in(reg, q, disabled)?)) })?;
    let sel = Some(Arc::new(
        sel.into_iter()
            .map(|s| Arc::<str>::from(s.as_str()))
            .collect::<NameSet>(),
    ));
    let mut cache = core.defs_cache.lock();
    if cache.selections.len() >= 64 {
        cache.selections.clear();
    }
    cache
        .selections
        .insert(query_text.to_string(), (membership, sel.clone()));
    Ok(sel)
}

fn select_in(
    reg: &crate::registry::Registry,
    q: &Query,
    disabled: &[String],
) -> Result<BTreeSet<String>> {
    let mut selected = match &q.enabled_toolsets {
        None => reg
            .tools
            .keys()
            .map(|k| k.to_string())
            .collect::<BTreeSet<String>>(),
        Some(list) => {
            let mut out = BTreeSet::new();
            for name in list {
                toolsets::resolve_into(reg, name, &mut Vec::new(), &mut out)?;
            }
            out
        }
    };
    let registered_before = selected
        .iter()
        .filter(|n| reg.tools.contains_key(n.as_str()))
        .count();
    for name in disabled {
        let remove = toolsets::disabled_set(reg, name)?;
        selected.retain(|t| !remove.contains(t));
    }
    let registered_after = selected
        .iter()
        .filter(|n| reg.tools.contains_key(n.as_str()))
        .count();
    if registered_before > 0 && registered_after == 0 {
        return Err(Error::invalid(format!(
            "definitions query: disabled_toolsets {:?} remove every one of the {registered_before} tools that enabled_toolsets {:?} select; refusing to return an empty tool list",
            disabled,
            q.enabled_toolsets.as_deref().unwrap_or(&[])
        )));
    }
    Ok(selected)
}

fn env_ok(entry: &ToolEntry) -> bool {
    entry
        .requires_env
        .iter()
        .all(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
}

/// Which of `entries` are available now; returns them and how long that holds.
pub fn available<'a>(
    core: &Core,
    entries: &[&'a Arc<ToolEntry>],
) -> (Vec<&'a Arc<ToolEntry>>, Instant, u64) {
    // Many tools share one check (one host registration, one MCP server):
    // evaluate each distinct check once.
    let mut index: HashMap<(usize, usize), usize, BuildHasherDefault<KeyHasher>> =
        HashMap::default();
    let mut checks: Vec<&Arc<dyn Check>> = Vec::new();
    let slots: Vec<Option<usize>> = entries
        .iter()
        .map(|e| {
            e.check.as_ref().map(|c| {
                *index.entry(c.key()).or_insert_with(|| {
                    checks.push(c);
                    checks.len() - 1
                })
            })
        })
        .collect();
    let verdicts = core.availability.evaluate(&checks);
    let out = entries
        .iter()
        .copied()
        .zip(&slots)
        .filter(|(e, slot)| {
            let check_ok = slot.is_none_or(|i| verdicts.values.get(i).copied().unwrap_or(false));
            check_ok && env_ok(e)
        })
        .map(|(e, _)| e)
        .collect();
    (out, verdicts.valid_until, verdicts.epoch)
}

fn conditional_extra(entry: &ToolEntry, names: &HashSet<&str>) -> String {
    let mut extra = String::new();
    for c in &entry.conditional {
        let any = c.when_any_available.is_empty()
            || c.when_any_available
                .iter()
                .any(|t| names.contains(t.as_str()));
        let all = c
            .when_all_available
            .iter()
            .all(|t| names.contains(t.as_str()));
        if any && all {
            extra.push_str(&c.text);
        }
    }
    extra
}

/// The entries `q` selects at the snapshot's generation: the cached list of
/// an earlier generation patched with the names registered, replaced or
/// removed since, when the toolset structure is unchanged and the change log
/// reaches back; else a new selection. One tool changing costs a binary
/// search and a swap, insert or remove, not a walk and sort of every tool.
fn candidates(
    core: &Core,
    snap: &crate::core::Snapshot,
    q: &Query,
    query_text: &str,
) -> Result<Arc<Vec<Arc<ToolEntry>>>> {
    let taken = core.defs_cache.lock().candidates.remove(query_text);
    let patched = taken.and_then(|mut c| {
        if c.structure != snap.structure || c.generation > snap.generation {
            return None;
        }
        if c.generation < snap.generation {
            let names = core.read_registry(|r| r.changed_between(c.generation, snap.generation))?;
            // Which names the query selects now: unchanged for tools
            // replaced in place; asked again when tools came or went.
            let selection = if c.membership != snap.membership {
                Some(select(core, q, query_text).ok()?)
            } else {
                None
            };
            let list = Arc::make_mut(&mut c.list);
            for name in names {
                let at = list.binary_search_by(|e| e.name.as_str().cmp(&name));
                let selected = match &selection {
                    None => at.is_ok(),
                    Some(None) => true,
                    Some(Some(names)) => names.contains(&*name),
                };
                let now = if selected {
                    snap.tools.get(&*name)
                } else {
                    None
                };
                match (at, now) {
                    (Ok(i), Some(e)) => list[i] = e.clone(),
                    (Ok(i), None) => {
                        list.remove(i);
                    }
                    (Err(i), Some(e)) => list.insert(i, e.clone()),
                    (Err(_), None) => {}
                }
            }
            c.generation = snap.generation;
            c.membership = snap.membership;
        }
        Some(c)
    });
    let c = match patched {
        Some(c) => c,
        None => {
            let selected = select(core, q, query_text)?;
            let list: Vec<Arc<ToolEntry>> = match &selected {
                None => {
                    let mut all: Vec<Arc<ToolEntry>> = snap.tools.values().cloned().collect();
                    all.sort_unstable_by(|a, b| a.name.cmp(&b.name));
                    all
                }
                // Look the selected names up instead of scanning every tool.
                Some(names) => {
                    let mut list: Vec<Arc<ToolEntry>> = names
                        .iter()
                        .filter_map(|n| snap.tools.get::<str>(n.as_ref()).cloned())
                        .collect();
                    list.sort_unstable_by(|a, b| a.name.cmp(&b.name));
                    list
                }
            };
            Candidates {
                generation: snap.generation,
                membership: snap.membership,
                structure: snap.structure,
                list: Arc::new(list),
            }
        }
    };
    let list = c.list.clone();
    let mut cache = core.defs_cache.lock();
    if cache.candidates.len() >= 64 {
        cache.candidates.clear();
    }
    cache.candidates.insert(query_text.to_string(), c);
    Ok(list)
}

/// Keep what the budget allows, defer the rest; the note (for
/// `tool_search`'s description) says what was deferred. The query is
/// remembered so `tool_search` answers in its format and over its selection.
fn apply_budget<'a>(
    core: &Core,
    d: &Defer,
    avail: Vec<&'a Arc<ToolEntry>>,
    format: Format,
    query_text: &str,
) -> Result<(Vec<&'a Arc<ToolEntry>>, Option<String>)> {
    let mut pinned: HashSet<String> = d.loaded.iter().cloned().collect();
    core.read_registry(|reg| -> Result<()> {
        for ts in &d.always_loaded_toolsets {
            pinned.extend(toolsets::resolve(reg, ts)?);
        }
        Ok(())
    })?;
    let is_pinned = |e: &ToolEntry| e.name == TOOL_SEARCH || pinned.contains(&e.name);
    let mut keep: Vec<bool> = avail.iter().map(|e| is_pinned(e)).collect();
    let mut count = keep.iter().filter(|k| **k).count();
    let mut bytes: usize = avail
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(e, _)| e.rendered(format).len() + 1)
        .sum();
    let (max_tools, max_bytes) = (
        d.max_tools.unwrap_or(usize::MAX),
        d.max_bytes.unwrap_or(usize::MAX),
    );
    let mut deferred: std::collections::BTreeMap<&str, usize> = Default::default();
    let mut total = 0usize;
    for (e, k) in avail.iter().zip(keep.iter_mut()) {
        if *k {
            continue;
        }
        let len = e.rendered(format).len() + 1;
        if count < max_tools && bytes.saturating_add(len) <= max_bytes {
            *k = true;
            count += 1;
            bytes += len;
        } else {
            *deferred.entry(e.toolset.as_str()).or_default() += 1;
            total += 1;
        }
    }
    if total == 0 {
        return Ok((avail, None));
    }
    if !avail.iter().any(|e| e.name == TOOL_SEARCH) {
        tracing::warn!(
            deferred = total,
            "definitions deferred tools but tool_search is not registered: the model cannot reach them (add \"tool_search\" to builtin_toolsets)"
        );
    }
    let mut sets: Vec<String> = deferred
        .iter()
        .take(24)
        .map(|(t, n)| format!("{t} ({n})"))
        .collect();
    if deferred.len() > 24 {
        sets.push(format!("and {} more", deferred.len() - 24));
    }
    let note = format!(
        " {total} more tools are available but not loaded, from toolsets: {}. Call tool_search with keywords to get their definitions.",
        sets.join(", ")
    );
    core.defs_cache.lock().last_deferral = Some((query_text.to_string(), format));
    let kept = avail
        .into_iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(e, _)| e)
        .collect();
    Ok((kept, Some(note)))
}

/// The available entries of the query `query_text` selects, and its format
/// (what `tool_search` searches: the selection a budget deferred from).
pub(crate) fn selection_for(
    core: &Core,
    query_text: &str,
) -> Result<(Vec<Arc<ToolEntry>>, Format)> {
    let snap = core.snapshot_full();
    let (q, format) = parse_query(query_text)?;
    let list = candidates(core, &snap, &q, query_text)?;
    let refs: Vec<&Arc<ToolEntry>> = list.iter().collect();
    let (avail, _, _) = available(core, &refs);
    Ok((avail.into_iter().cloned().collect(), format))
}

/// `ht_runtime_definitions_json`: the text as a `String` block.
pub fn definitions(core: &Arc<Core>, query_text: &str) -> Result<Text> {
    definitions_with(core, query_text, &string_text)
}

/// [`definitions`], building a new text with `build` (a cached one is
/// returned as it was built).
pub fn definitions_with(core: &Arc<Core>, query_text: &str, build: BuildText) -> Result<Text> {
    let _g = core.enter()?;
    let snap = core.snapshot_full();
    {
        let cache = core.defs_cache.lock();
        if let Some(c) = cache.map.get(query_text)
            && c.generation == snap.generation
            && c.epoch == core.availability.epoch()
            && Instant::now() < c.valid_until
        {
            return Ok(c.text.clone());
        }
    }
    let (q, format) = parse_query(query_text)?;
    let list = candidates(core, &snap, &q, query_text)?;
    let candidates: Vec<&Arc<ToolEntry>> = list.iter().collect();
    let (avail, valid_until, epoch) = available(core, &candidates);
    let (avail, note) = match &q.defer {
        None => (avail, None),
        Some(d) => apply_budget(core, d, avail, format, query_text)?,
    };
    let has_conditional = avail.iter().any(|e| !e.conditional.is_empty());
    let names: HashSet<&str> = if has_conditional {
        avail.iter().map(|e| e.name.as_str()).collect()
    } else {
        HashSet::new()
    };
    let custom =
        |e: &ToolEntry| !e.conditional.is_empty() || (note.is_some() && e.name == TOOL_SEARCH);
    let owned: Vec<String> = avail
        .iter()
        .filter(|e| custom(e))
        .map(|e| {
            let mut extra = conditional_extra(e, &names);
            if e.name == TOOL_SEARCH
                && let Some(n) = &note
            {
                extra.push_str(n);
            }
            e.render(format, &extra)
        })
        .collect();
    let mut owned_iter = owned.iter();
    let pieces: Vec<&str> = avail
        .iter()
        .map(|e| {
            if !custom(e) {
                e.rendered(format)
            } else {
                owned_iter.next().map_or("", String::as_str)
            }
        })
        .collect();
    // One exact allocation, one copy of each definition, made by `build`.
    let mut parts: Vec<&str> = Vec::with_capacity(2 * pieces.len() + 2);
    parts.push("[");
    for (i, p) in pieces.iter().enumerate() {
        if i > 0 {
            parts.push(",");
        }
        parts.push(p);
    }
    parts.push("]");
    let text = build(&parts);
    let mut cache = core.defs_cache.lock();
    if cache.map.len() >= 64 {
        cache.map.clear();
    }
    cache.map.insert(
        query_text.to_string(),
        Cached {
            generation: snap.generation,
            epoch,
            valid_until,
            text: text.clone(),
        },
    );
    Ok(text)
}

/// `ht_runtime_toolsets_json`: every toolset with its tools and availability.
pub fn toolsets_json(core: &Arc<Core>) -> Result<String> {
    let _g = core.enter()?;
    let snap = core.snapshot_full();
    type Row = (toolsets::View, std::result::Result<BTreeSet<String>, Error>);
    let rows: Vec<Row> = core.read_registry(|reg| {
        toolsets::all_names(reg)
            .into_iter()
            .filter_map(|n| toolsets::view(reg, &n).map(|v| (v, toolsets::resolve(reg, &n))))
            .collect()
    });
    let mut all: Vec<&Arc<ToolEntry>> = snap.tools.values().collect();
    all.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    let (avail, _, _) = available(core, &all);
    let avail: HashSet<&str> = avail.iter().map(|e| e.name.as_str()).collect();
    let out: Vec<Value> = rows
        .into_iter()
        .map(|(v, resolved)| {
            let mut row = json!({
                "name": v.name,
                "description": v.description,
                "source": v.source.as_str(),
                "tools": v.tools,
                "includes": v.includes,
            });
            match resolved {
                Ok(tools) => {
                    let registered: Vec<&String> = tools
                        .iter()
                        .filter(|t| snap.tools.contains_key(t.as_str()))
                        .collect();
                    let available: Vec<&String> = registered
                        .iter()
                        .copied()
                        .filter(|t| avail.contains(t.as_str()))
                        .collect();
                    row["resolved_tools"] = json!(tools);
                    row["registered_tools"] = json!(registered);
                    row["available_tools"] = json!(available);
                    row["available"] = json!(!available.is_empty());
                }
                Err(e) => {
                    row["error"] = json!(e.message);
                    row["available"] = json!(false);
                }
            }
            if let Some(a) = v.alias_of {
                row["alias_of"] = json!(a);
            }
            row
        })
        .collect();
    Ok(Value::Array(out).to_string())
}
