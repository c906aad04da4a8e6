//! Toolsets: the original's presets and legacy `*_tools` names as data
//! (`toolsets.json`), host-defined toolsets, registry toolsets and aliases,
//! and their resolution into tool names. Cycles are reported, never looped.

use once_cell::sync::Lazy;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::error::{Error, Result};
use crate::registry::{Registry, ToolsetDef, check_name};

#[derive(Deserialize)]
pub struct StaticDef {
    pub description: String,
    pub tools: Vec<String>,
    pub includes: Vec<String>,
    #[serde(default)]
    pub posture: bool,
}

#[derive(Deserialize)]
pub struct StaticData {
    pub core_tools: Vec<String>,
    pub toolsets: BTreeMap<String, StaticDef>,
    pub legacy: BTreeMap<String, Vec<String>>,
}

pub static STATIC: Lazy<StaticData> = Lazy::new(|| {
    serde_json::from_str(include_str!("toolsets.json")).expect("built-in toolsets.json is valid")
});

static CORE: Lazy<HashSet<&'static str>> =
    Lazy::new(|| STATIC.core_tools.iter().map(String::as_str).collect());

/// Where a toolset name comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Builtin,
    Host,
    Registry,
    Alias,
    Legacy,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Builtin => "builtin",
            Source::Host => "host",
            Source::Registry => "registry",
            Source::Alias => "alias",
            Source::Legacy => "legacy",
        }
    }
}

/// A toolset as seen right now: its direct tools (static or host list plus
/// registry tools that name it) and includes.
pub struct View {
    pub name: String,
    pub description: String,
    pub source: Source,
    pub tools: BTreeSet<String>,
    pub includes: Vec<String>,
    pub posture: bool,
    pub alias_of: Option<String>,
}

pub fn view(reg: &Registry, name: &str) -> Option<View> {
    view_depth(reg, name, 0)
}

/// Aliases may point at aliases; the chain is bounded (and cycles are refused
/// when an alias is created), so a bad chain can never recurse without end.
const MAX_ALIAS_DEPTH: usize = 16;

/// The alias chain from `name` reaches `target`? (Used to refuse alias cycles.)
pub fn alias_reaches(reg: &Registry, from: &str, target: &str) -> bool {
    let mut cur = from;
    for _ in 0..=MAX_ALIAS_DEPTH {
        if cur == target {
            return true;
        }
        match reg.aliases.get(cur) {
            Some(next) => cur = next,
            None => return false,
        }
    }
    true
}

fn view_depth(reg: &Registry, name: &str, depth: usize) -> Option<View> {
    if depth > MAX_ALIAS_DEPTH {
        return None;
    }
    let members =
        |ts: &str| -> BTreeSet<String> { reg.members_of(ts).map(|n| n.to_string()).collect() };
    if let Some(target) = reg.aliases.get(name) {
        let inner = view_depth(reg, target, depth + 1);
        return Some(View {
            name: name.to_string(),
            description: format!("Alias of toolset '{target}'"),
            source: Source::Alias,
            tools: inner.as_ref().map(|v| v.tools.clone()).unwrap_or_default(),
            includes: inner.map(|v| v.includes).unwrap_or_default(),
            posture: false,
            alias_of: Some(target.clone()),
        });
    }
    if let Some(def) = reg.toolsets.get(name) {
        let mut tools: BTreeSet<String> = def.tools.iter().cloned().collect();
        tools.extend(members(name));
        return Some(View {
            name: name.to_string(),
            description: def.description.clone(),
            source: Source::Host,
            tools,
            includes: def.includes.clone(),
            posture: false,
            alias_of: None,
        });
    }
    if let Some(def) = STATIC.toolsets.get(name) {
        let mut tools: BTreeSet<String> = def.tools.iter().cloned().collect();
        tools.extend(members(name));
        return Some(View {
            name: name.to_string(),
            description: def.description.clone(),
            source: Source::Builtin,
            tools,
            includes: def.includes.clone(),
            posture: def.posture,
            alias_of: None,
        });
    }
    if reg.has_toolset_tools(name) {
        return Some(View {
            name: name.to_string(),
            description: format!("Toolset '{name}' (registered tools)"),
            source: Source::Registry,
            tools: members(name),
            includes: Vec::new(),
            posture: false,
            alias_of: None,
        });
    }
    if let Some(list) = STATIC.legacy.get(name) {
        return Some(View {
            name: name.to_string(),
            description: format!("Legacy name for {}", list.join(", ")),
            source: Source::Legacy,
            tools: list.iter().cloned().collect(),
            includes: Vec::new(),
            posture: false,
            alias_of: None,
        });
    }
    None
}

/// Every toolset name known right now (sorted).
pub fn all_names(reg: &Registry) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = STATIC.toolsets.keys().cloned().collect();
    names.extend(reg.toolsets.keys().cloned());
    names.extend(reg.aliases.keys().cloned());
    names.extend(reg.members.keys().cloned());
    names
}

/// Resolve `name` into tool names (added to `out`). `stack` is the include
/// path, used to report cycles; diamonds are fine.
pub fn resolve_into(
    reg: &Registry,
    name: &str,
    stack: &mut Vec<String>,
    out: &mut BTreeSet<String>,
) -> Result<()> {
    if name == "all" || name == "*" {
        out.extend(reg.tools.keys().map(|k| k.to_string()));
        return Ok(());
    }
    if stack.iter().any(|s| s == name) {
        let mut path = stack.clone();
        path.push(name.to_string());
        return Err(Error::invalid(format!(
            "toolset cycle: {}",
            path.join(" -> ")
        )));
    }
    let v = view(reg, name).ok_or_else(|| unknown(reg, name))?;
    out.extend(v.tools.iter().cloned());
    stack.push(name.to_string());
    let mut result = Ok(());
    if let Some(target) = &v.alias_of {
        result = resolve_into(reg, target, stack, out);
    } else {
        for inc in &v.includes {
            result = resolve_into(reg, inc, stack, out);
            if result.is_err() {
                break;
            }
        }
    }
    stack.pop();
    result
}

pub fn resolve(reg: &Registry, name: &str) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    resolve_into(reg, name, &mut Vec::new(), &mut out)?;
    Ok(out)
}

fn unknown(reg: &Registry, name: &str) -> Error {
    let names = all_names(reg);
    let close: Vec<&String> = names
        .iter()
        .filter(|n| crate::suggest::similar(n, name))
        .take(3)
        .collect();
    let hint = if close.is_empty() {
        String::new()
    } else {
        format!(
            " (did you mean {}?)",
            close
                .iter()
                .map(|s| format!("'{s}'"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Error::not_found(format!("unknown toolset '{name}'{hint}"))
}

/// What disabling `name` removes. Platform presets (`hermes-*`) and posture
/// toolsets only remove their non-core tools, as in the original, so
/// disabling `coding` never strips the core tools another toolset enabled.
pub fn disabled_set(reg: &Registry, name: &str) -> Result<BTreeSet<String>> {
    let v = view(reg, name).ok_or_else(|| unknown(reg, name))?;
    if (name.starts_with("hermes-") && v.source == Source::Builtin) || v.posture {
        let mut out: BTreeSet<String> = v.tools.clone();
        for inc in &v.includes {
            if let Some(iv) = view(reg, inc) {
                out.extend(iv.tools.iter().cloned());
            }
        }
        out.retain(|t| !CORE.contains(t.as_str()));
        return Ok(out);
    }
    resolve(reg, name)
}

/// Check a host toolset definition against the registry (names, includes, cycles).
pub fn check_definition(reg: &Registry, def: &crate::registry::ToolsetDef) -> Result<()> {
    crate::registry::check_name("toolset: name", &def.name)?;
    if def.name == "all" || def.name == "*" {
        return Err(Error::invalid("toolset: name: 'all' is reserved"));
    }
    for t in &def.tools {
        crate::registry::check_name("toolset: tools", t)?;
    }
    for inc in &def.includes {
        if inc != &def.name && view(reg, inc).is_none() {
            return Err(unknown(reg, inc));
        }
    }
    Ok(())
}

/// Define (or redefine) a host toolset; refused when it would not resolve.
pub fn define(reg: &mut Registry, def: ToolsetDef) -> Result<()> {
    check_definition(reg, &def)?;
    let name = def.name.clone();
    let previous = reg.toolsets.insert(name.clone(), def);
    if let Err(e) = resolve(reg, &name) {
        match previous {
            Some(p) => reg.toolsets.insert(name, p),
            None => reg.toolsets.remove(&name),
        };
        return Err(e);
    }
    reg.generation += 1;
    reg.membership += 1;
    reg.structure += 1;
    Ok(())
}

/// Point `alias` at toolset `target`; refused for cycles and unknown targets.
pub fn alias(reg: &mut Registry, alias: &str, target: &str) -> Result<()> {
    check_name("alias", alias)?;
    if alias_reaches(reg, target, alias) {
        return Err(Error::invalid(format!(
            "toolset alias '{alias}' -> '{target}' would make an alias cycle"
        )));
    }
    if view(reg, target).is_none() {
        return Err(Error::not_found(format!("unknown toolset '{target}'")));
    }
    let previous = reg.aliases.insert(alias.to_string(), target.to_string());
    if let Err(e) = resolve(reg, alias) {
        match previous {
            Some(p) => reg.aliases.insert(alias.to_string(), p),
            None => reg.aliases.remove(alias),
        };
        return Err(e);
    }
    if let Some(p) = previous.filter(|p| p != target) {
        tracing::warn!(alias, from = %p, to = target, "toolset alias re-pointed");
    }
    reg.generation += 1;
    reg.membership += 1;
    reg.structure += 1;
    Ok(())
}
