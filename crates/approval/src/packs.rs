//! Host rule packs: rules a host adds, and tier changes of existing rules,
//! given as data in the engine config and validated when the engine is
//! built.
//!
//! Why: every deployment has its own dangerous commands (`terraform apply`
//! on production, a company CLI that deletes tenants) and its own tolerance
//! (a CI box may want `git push --force` blocked outright). Packs let the
//! host say so without code: named groups of rules with an explanation line
//! each, plus `tiers` overrides. Each reason in a check result names the
//! pack that decided (`"builtin"`, `"host"` for the top-level `rules` /
//! `tiers`, or the pack's name), so a prompt or a log says whose rule fired.
//!
//! Validation is strict and every error names the offending field by path
//! (`packs[1].rules[0].pattern: invalid regex ...`), so a broken config
//! fails at load, never silently at check time.

use std::collections::{BTreeMap, HashMap};

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::rules::{Matcher, Rule};
use crate::types::{RuleConfig, Verdict};

/// One host pack: `{"name": "...", "rules": [...], "tiers": {"key": "ask"}}`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PackConfig {
    /// Shown as `pack` in each reason this pack decides.
    pub name: String,
    /// New rules (`key`, `description`, `tier`, one of `argv_prefix` /
    /// `pattern`). The description is required: it is the explanation shown
    /// to the user.
    #[serde(default)]
    pub rules: Vec<RuleConfig>,
    /// Tier changes of existing rules (built-in or earlier packs):
    /// `"allow"` turns a rule off, `"ask"` / `"block"` set its tier.
    /// A built-in `block` rule cannot be lowered.
    #[serde(default)]
    pub tiers: BTreeMap<String, Verdict>,
}

/// Reserved pack names.
pub const BUILTIN: &str = "builtin";
pub const HOST: &str = "host";

fn build_rule(rc: &RuleConfig, at: &str, pack: &str, strict: bool) -> Result<Rule, String> {
    if rc.key.trim().is_empty() {
        return Err(format!("{at}.key: must not be empty"));
    }
    if rc.key.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{at}.key: '{}' must not contain spaces", rc.key));
    }
    if rc.tier == Verdict::Allow {
        return Err(format!(
            "{at}.tier: must be 'ask' or 'block' (use \"exempt\" or a tier of \"allow\" in \"tiers\" to turn a rule off)"
        ));
    }
    let desc = rc.description.trim();
    if strict && desc.is_empty() {
        return Err(format!(
            "{at}.description: required (one line saying what the matched command does)"
        ));
    }
    if desc.contains('\n') {
        return Err(format!("{at}.description: must be a single line"));
    }
    let matcher = match (&rc.argv_prefix, &rc.pattern) {
        (Some(p), None) if !p.is_empty() && !p[0].is_empty() => Matcher::ArgvPrefix(p.clone()),
        (Some(_), None) => {
            return Err(format!(
                "{at}.argv_prefix: must be a non-empty list whose first word is the program"
            ));
        }
        (None, Some(pat)) => Matcher::Pattern(
            Regex::new(pat).map_err(|e| format!("{at}.pattern: invalid regex: {e}"))?,
        ),
        (Some(_), Some(_)) => {
            return Err(format!(
                "{at}: give either \"argv_prefix\" or \"pattern\", not both"
            ));
        }
        (None, None) => {
            return Err(format!("{at}: give one of \"argv_prefix\" or \"pattern\""));
        }
    };
    Ok(Rule {
        key: rc.key.clone(),
        description: if desc.is_empty() {
            format!("host rule {}", rc.key)
        } else {
            desc.to_string()
        },
        tier: rc.tier,
        matcher,
        builtin: false,
        pack: pack.to_string(),
    })
}

/// Add rules and apply tier overrides of one pack to `rules`. `strict`
/// requires descriptions (packs); the legacy top-level `rules` do not.
pub(crate) fn apply(
    rules: &mut Vec<Rule>,
    index: &mut HashMap<String, usize>,
    pack: &str,
    at: &str,
    new: &[RuleConfig],
    tiers: &BTreeMap<String, Verdict>,
    strict: bool,
) -> Result<(), String> {
    for (k, rc) in new.iter().enumerate() {
        let here = format!("{at}rules[{k}]");
        let r = build_rule(rc, &here, pack, strict)?;
        if let Some(&i) = index.get(&r.key) {
            return Err(format!(
                "{here}.key: '{}' is already defined by pack '{}' (change its tier with \"tiers\" instead)",
                r.key, rules[i].pack
            ));
        }
        index.insert(r.key.clone(), rules.len());
        rules.push(r);
    }
    for (key, tier) in tiers {
        let here = format!("{at}tiers.{key}");
        let Some(&i) = index.get(key) else {
            return Err(format!("{here}: no rule with this key"));
        };
        let r = &mut rules[i];
        if r.builtin && r.tier == Verdict::Block && *tier != Verdict::Block {
            return Err(format!(
                "{here}: '{key}' is a built-in block rule (catastrophic); it cannot be lowered"
            ));
        }
        r.tier = *tier;
        r.pack = pack.to_string();
    }
    Ok(())
}

/// Check the pack names: non-empty, unique, not reserved.
pub(crate) fn check_names(packs: &[PackConfig]) -> Result<(), String> {
    let mut seen: Vec<&str> = Vec::new();
    for (k, p) in packs.iter().enumerate() {
        let n = p.name.trim();
        if n.is_empty() {
            return Err(format!("packs[{k}].name: must not be empty"));
        }
        if n == BUILTIN || n == HOST {
            return Err(format!("packs[{k}].name: '{n}' is reserved"));
        }
        if seen.contains(&n) {
            return Err(format!("packs[{k}].name: duplicate pack name '{n}'"));
        }
        seen.push(n);
    }
    Ok(())
}
