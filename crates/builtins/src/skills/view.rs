//! `skills_list` and `skill_view`: what skills there are, and one skill's
//! SKILL.md (with its metadata, linked files and readiness) or one of its
//! supporting files, in the original's result shapes.

use serde_json::{Map, Value, json};
use std::path::Path;

use super::ctx::SkillsCtx;
use super::store::{self, Skill};

pub fn list(sc: &SkillsCtx, args: &Value) -> (Value, bool) {
    let _ = sc.fs_ready();
    let category = args
        .get("category")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let all = sc.all();
    let mut categories: Vec<String> = all.iter().filter_map(|s| s.category.clone()).collect();
    categories.sort();
    categories.dedup();
    let skills: Vec<&Skill> = all
        .iter()
        .filter(|s| category.is_none_or(|c| s.category.as_deref() == Some(c)))
        .collect();
    if skills.is_empty() {
        let message = match category {
            Some(c) => format!("No skills in category '{c}'."),
            None => format!(
                "No skills installed yet. Create one with skill_manage(action='create') in {}.",
                sc.dir.display()
            ),
        };
        return (
            json!({"success": true, "skills": [], "categories": categories, "message": message}),
            false,
        );
    }
    let list: Vec<Value> = skills
        .iter()
        .map(|s| json!({"name": s.name, "description": s.description, "category": s.category}))
        .collect();
    (
        json!({
            "success": true,
            "skills": list,
            "categories": categories,
            "count": skills.len(),
            "hint": "Load a skill with skill_view(name) before doing the task it covers.",
        }),
        false,
    )
}

fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        Some(Value::String(s)) => s
            .split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

fn check_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("name is required".into());
    }
    if name.starts_with('/')
        || name.starts_with('~')
        || name.split(['/', '\\', ':']).any(|c| c == "..")
    {
        return Err(format!(
            "invalid skill name '{name}': no absolute paths or '..'"
        ));
    }
    Ok(())
}

pub fn view(sc: &SkillsCtx, args: &Value, session_id: &str) -> (Value, bool) {
    let name = args.get("name").and_then(Value::as_str).unwrap_or("");
    if let Err(e) = check_name(name) {
        return (json!({"success": false, "error": e}), true);
    }
    let found = sc.find(name);
    let skill = match found.len() {
        0 => {
            let names: Vec<String> = sc.all().into_iter().take(20).map(|s| s.name).collect();
            return (
                json!({"success": false, "error": format!("Skill '{name}' not found."), "available_skills": names,
                       "hint": "skills_list shows every installed skill."}),
                true,
            );
        }
        1 => found.into_iter().next().expect("one skill"),
        n => {
            let matches: Vec<String> = found.iter().map(|s| s.md.display().to_string()).collect();
            return (
                json!({"success": false,
                       "error": format!("Ambiguous skill name '{name}': {n} skills match across your local skills dir and external_dirs. Refusing to guess — load one explicitly by its categorized path."),
                       "matches": matches,
                       "hint": "Pass the full relative path instead of the bare name (e.g., 'category/skill-name'), or rename one of the colliding skills so each name is unique."}),
                true,
            );
        }
    };
    if !store::platform_ok(&skill.front) {
        return (
            json!({"success": false, "error": format!("Skill '{name}' is not supported on this platform."),
                   "readiness_status": "unsupported"}),
            true,
        );
    }
    if sc.disabled(&skill) {
        return (
            json!({"success": false, "error": format!("Skill '{}' is disabled. Enable it in the runtime config (skills.disabled) or inspect the files directly on disk.", skill.name)}),
            true,
        );
    }
    match args
        .get("file_path")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        Some(_) if skill.single() => (
            json!({"success": false, "error": format!("Skill '{}' is a single file ({}): it has no supporting files.", skill.name, skill.md.display())}),
            true,
        ),
        Some(fp) => view_file(&skill, fp),
        None => view_skill(sc, &skill, session_id),
    }
}

fn view_skill(sc: &SkillsCtx, s: &Skill, session_id: &str) -> (Value, bool) {
    let md = s.md.clone();
    let mut content = match std::fs::read_to_string(&md) {
        Ok(t) => t,
        Err(e) => {
            return (
                json!({"success": false, "error": format!("cannot read {}: {e}", md.display())}),
                true,
            );
        }
    };
    if sc.cfg.template_vars {
        content = content
            .replace("${HERMES_SKILL_DIR}", &s.dir.display().to_string())
            .replace("${HERMES_SESSION_ID}", session_id);
    }
    let hermes_meta = s.front.get("metadata").and_then(|m| m.get("hermes"));
    let mut tags = strings(s.front.get("tags"));
    let mut related = strings(s.front.get("related_skills"));
    if let Some(h) = hermes_meta {
        tags.extend(strings(h.get("tags")));
        related.extend(strings(h.get("related_skills")));
    }
    // required environment variables: strings or {name|env_var, prompt, help, ...}
    let mut required = Vec::new();
    let mut missing = Vec::new();
    if let Some(Value::Array(list)) = s.front.get("required_environment_variables") {
        for item in list {
            let (name, obj) = match item {
                Value::String(n) => (
                    n.clone(),
                    json!({"name": n, "prompt": format!("Value for {n}")}),
                ),
                Value::Object(m) => {
                    let n = m
                        .get("name")
                        .or_else(|| m.get("env_var"))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let mut o = Map::new();
                    o.insert("name".into(), json!(n));
                    o.insert(
                        "prompt".into(),
                        m.get("prompt")
                            .cloned()
                            .unwrap_or(json!(format!("Value for {n}"))),
                    );
                    for k in ["help", "required_for", "optional"] {
                        if let Some(v) = m.get(k) {
                            o.insert(k.into(), v.clone());
                        }
                    }
                    (n, Value::Object(o))
                }
                _ => continue,
            };
            if name.is_empty() || required.iter().any(|r: &Value| r["name"] == name) {
                continue;
            }
            let optional = obj
                .get("optional")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if !optional && std::env::var_os(&name).is_none() {
                missing.push(name.clone());
            }
            required.push(obj);
        }
    }
    // the legacy `prerequisites: {env_vars: [...]}` form
    if let Some(Value::Array(list)) = s.front.get("prerequisites").and_then(|p| p.get("env_vars")) {
        for n in list.iter().filter_map(Value::as_str) {
            if n.is_empty() || required.iter().any(|r: &Value| r["name"] == n) {
                continue;
            }
            if std::env::var_os(n).is_none() {
                missing.push(n.to_string());
            }
            required.push(json!({"name": n, "prompt": format!("Value for {n}")}));
        }
    }
    let linked = if s.single() {
        Map::new()
    } else {
        store::linked_files(&s.dir)
    };
    let rel =
        s.md.strip_prefix(&s.root)
            .map(|r| r.display().to_string())
            .unwrap_or_else(|_| "SKILL.md".into());
    let setup_needed = !missing.is_empty();
    let mut v = json!({
        "success": true,
        "name": s.name,
        "description": s.description,
        "tags": tags,
        "related_skills": related,
        "content": content,
        "path": rel,
        "skill_dir": if s.single() { Value::Null } else { json!(s.dir.display().to_string()) },
        "linked_files": if linked.is_empty() { Value::Null } else { Value::Object(linked) },
        "usage_hint": if !s.single() && store::SUPPORT_DIRS.iter().any(|d| s.dir.join(d).is_dir()) {
            json!("Supporting files are listed in linked_files: load one with skill_view(name, file_path).")
        } else { Value::Null },
        "required_environment_variables": required,
        "required_commands": [],
        "missing_required_environment_variables": missing,
        "missing_credential_files": [],
        "missing_required_commands": [],
        "setup_needed": setup_needed,
        "setup_skipped": false,
        "readiness_status": if setup_needed { "setup_needed" } else { "available" },
    });
    if setup_needed {
        v["setup_help"] =
            json!("Ask the user to set the missing environment variables before using this skill.");
    }
    if let Some(c) = s.front.get("compatibility") {
        v["compatibility"] = c.clone();
    }
    if let Some(m) = s.front.get("metadata") {
        v["metadata"] = m.clone();
    }
    (v, false)
}

fn view_file(s: &Skill, fp: &str) -> (Value, bool) {
    let rel = Path::new(fp);
    if rel.is_absolute()
        || rel
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return (
            json!({"success": false, "error": format!("file_path '{fp}' must be a relative path inside the skill (no '..')")}),
            true,
        );
    }
    let p = s.dir.join(rel);
    let inside = std::fs::canonicalize(&p)
        .ok()
        .zip(std::fs::canonicalize(&s.dir).ok())
        .is_some_and(|(a, b)| a.starts_with(b));
    if !p.is_file() || !inside {
        return (
            json!({"success": false, "error": format!("File '{fp}' not found in skill '{}'.", s.name),
                   "available_files": store::linked_files(&s.dir)}),
            true,
        );
    }
    let file_type = rel
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    match std::fs::read(&p) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => (
                json!({"success": true, "name": s.name, "file": fp, "content": text, "file_type": file_type}),
                false,
            ),
            Err(e) => {
                let n = e.into_bytes().len();
                let base = rel
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (
                    json!({"success": true, "name": s.name, "file": fp,
                           "content": format!("[Binary file: {base}, size: {n} bytes]"),
                           "file_type": file_type, "is_binary": true}),
                    false,
                )
            }
        },
        Err(e) => (
            json!({"success": false, "error": format!("cannot read {fp}: {e}")}),
            true,
        ),
    }
}
