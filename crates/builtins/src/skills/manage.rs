//! `skill_manage`: create, edit, patch and delete skills, and write or
//! remove their supporting files, with the original's name rules and size
//! limits. SKILL.md must stay valid (front matter with name and
//! description, a body) after every change; supporting files live only
//! under references/, templates/, scripts/ and assets/; absolute paths and
//! `..` are refused; every write is atomic; new and changed text passes the
//! skills guard (agent-created trust) first.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

use super::ctx::SkillsCtx;
use super::guard;
use super::nofollow;
use super::store::{self, Skill};
use crate::fuzzy;
use hermes_exec::fs::FileSystem;

type Out = (Value, bool);

fn fail(msg: impl Into<String>) -> Out {
    (json!({"success": false, "error": msg.into()}), true)
}

fn s<'a>(args: &'a Value, k: &str) -> Option<&'a str> {
    args.get(k).and_then(Value::as_str)
}

pub fn run(sc: &SkillsCtx, args: &Value) -> Out {
    let action = s(args, "action").unwrap_or("");
    let name = s(args, "name").unwrap_or("").trim();
    if let Err(e) = store::valid_name("skill name", name) {
        return fail(e);
    }
    match action {
        "create" => create(sc, name, args),
        "edit" => edit(sc, name, args),
        "patch" => patch(sc, name, args),
        "delete" => delete(sc, name, args),
        "write_file" => write_file(sc, name, args),
        "remove_file" => remove_file(sc, name, args),
        other => fail(format!(
            "unknown action '{other}': use create, patch, edit, delete, write_file or remove_file"
        )),
    }
}

/// Run the guard on a text the agent wants to store; Err when it blocks.
fn guard_text(sc: &SkillsCtx, file: &str, text: &str) -> Result<(), Out> {
    if !sc.cfg.guard_agent_created {
        return Ok(());
    }
    let mut findings = Vec::new();
    guard::scan_text(&sc.engine, file, text, &mut findings);
    let report = guard::report("agent-created", findings);
    if report["decision"] == "allow" {
        return Ok(());
    }
    Err((
        json!({"success": false,
               "error": format!("The skills guard refused this content (verdict {}): skills are loaded as instructions later, so they must not contain these. Remove them and try again.", report["verdict"].as_str().unwrap_or("")),
               "guard": report}),
        true,
    ))
}

/// The one skill `name` names; with a folder unless `single_ok`.
fn one_of(sc: &SkillsCtx, name: &str, single_ok: bool) -> Result<Skill, Out> {
    let found = sc.find(name);
    let skill = match found.len() {
        0 => return Err(fail(format!("Skill '{name}' not found."))),
        1 => found.into_iter().next().expect("one"),
        n => {
            return Err((
                json!({"success": false,
                       "error": format!("Skill name '{name}' matches {n} skills (in the local skills folder and skills.external_dirs): refusing to guess. Name it by its folder ('category/name'), or rename one of them."),
                       "matches": found.iter().map(|s| s.md.display().to_string()).collect::<Vec<_>>()}),
                true,
            ));
        }
    };
    if skill.single() && !single_ok {
        return Err(fail(format!(
            "Skill '{name}' is a single file ({}), not a skill folder: skill_manage only deletes it. Create a folder skill to edit it.",
            skill.md.display()
        )));
    }
    Ok(skill)
}

fn one(sc: &SkillsCtx, name: &str) -> Result<Skill, Out> {
    one_of(sc, name, false)
}

/// The refusal of a path inside a skill that is or goes through a symlink.
fn link_refusal(name: &str, fp: &str) -> Out {
    fail(format!(
        "'{fp}' in skill '{name}' is a symbolic link or goes through one: refused. skill_manage changes files only inside the skill's own folder; replace the link with a real folder or file first."
    ))
}

fn io_fail(name: &str, fp: &str, what: &str, e: &std::io::Error) -> Out {
    if nofollow::is_link_refusal(e) {
        link_refusal(name, fp)
    } else {
        fail(format!("cannot {what} {fp} in skill '{name}': {e}"))
    }
}

/// Write `rel` of a skill atomically, beneath its folder, never through a
/// symlink (see [`nofollow`]).
fn write(skill_dir: &Path, name: &str, rel: &Path, text: &str) -> Result<(), Out> {
    nofollow::write(skill_dir, rel, text.as_bytes())
        .map_err(|e| io_fail(name, &rel.display().to_string(), "write", &e))
}

fn create(sc: &SkillsCtx, name: &str, args: &Value) -> Out {
    let Some(content) = s(args, "content") else {
        return fail(
            "content is required for create (the full SKILL.md: front matter, then the body)",
        );
    };
    let category = s(args, "category").map(str::trim).filter(|c| !c.is_empty());
    if let Some(c) = category
        && let Err(e) = store::valid_name("category", c)
    {
        return fail(e);
    }
    let front = match store::validate_skill_md(content) {
        Ok(f) => f,
        Err(e) => return fail(e),
    };
    if !sc.find(name).is_empty() {
        return fail(format!(
            "A skill named '{name}' already exists: use edit or patch to change it."
        ));
    }
    if let Err(e) = guard_text(sc, "SKILL.md", content) {
        return e;
    }
    let rel: PathBuf = match category {
        Some(c) => Path::new(c).join(name),
        None => PathBuf::from(name),
    };
    let dir = sc.dir.join(&rel);
    if dir.exists() {
        return fail(format!("{} already exists", dir.display()));
    }
    let md = dir.join("SKILL.md");
    if let Err(e) = sc.fs.create_dir_all(&dir) {
        return fail(format!("cannot create {}: {e}", dir.display()));
    }
    if let Err(e) = write(&dir, name, Path::new("SKILL.md"), content) {
        return e;
    }
    let desc: String = front
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .chars()
        .take(120)
        .collect();
    let mut v = json!({
        "success": true,
        "message": format!("Skill '{name}' created."),
        "path": rel.display().to_string(),
        "skill_md": md.display().to_string(),
        "_change": {"description": desc},
        "hint": "Add supporting files with skill_manage(action='write_file', file_path='references/...').",
    });
    if let Some(c) = category {
        v["category"] = json!(c);
    }
    (v, false)
}

fn edit(sc: &SkillsCtx, name: &str, args: &Value) -> Out {
    let Some(content) = s(args, "content") else {
        return fail("content is required for edit (the full new SKILL.md)");
    };
    let skill = match one(sc, name) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let front = match store::validate_skill_md(content) {
        Ok(f) => f,
        Err(e) => return fail(e),
    };
    if let Err(e) = guard_text(sc, "SKILL.md", content) {
        return e;
    }
    if let Err(e) = write(&skill.dir, name, Path::new("SKILL.md"), content) {
        return e;
    }
    (
        json!({"success": true, "message": format!("Skill '{name}' updated."),
               "path": skill.dir.display().to_string(),
               "_change": {"description": front.get("description").cloned().unwrap_or(Value::Null)}}),
        false,
    )
}

fn patch(sc: &SkillsCtx, name: &str, args: &Value) -> Out {
    let Some(old) = s(args, "old_string") else {
        return fail("old_string is required for patch");
    };
    let Some(new) = s(args, "new_string") else {
        return fail("new_string is required for patch (may be empty)");
    };
    let replace_all = args
        .get("replace_all")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let skill = match one(sc, name) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let fp = s(args, "file_path")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .unwrap_or("SKILL.md");
    let rel = match store::check_file_path(fp, true) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    // read whole (a cut text written back would lose its tail)
    const PATCH_READ_LIMIT: usize = 64 << 20;
    let text = match nofollow::read(&skill.dir, &rel, PATCH_READ_LIMIT + 1)
        .map(|b| String::from_utf8(b).map_err(|_| ()))
    {
        Ok(Ok(t)) if t.len() > PATCH_READ_LIMIT => {
            return fail(format!("'{fp}' in skill '{name}' is too large to patch"));
        }
        Ok(Ok(t)) => t,
        Ok(Err(())) => return fail(format!("'{fp}' in skill '{name}' is not UTF-8 text")),
        Err(e) if nofollow::is_link_refusal(&e) => return link_refusal(name, fp),
        Err(_) => {
            return (
                json!({"success": false, "error": format!("File '{fp}' not found in skill '{name}'."),
                       "available_files": store::linked_files(&skill.dir)}),
                true,
            );
        }
    };
    let replaced = match fuzzy::find_and_replace(&text, old, new, replace_all) {
        Ok(r) => r,
        Err(e) => {
            let preview: String = text.chars().take(500).collect();
            return (
                json!({"success": false, "error": e.message(), "file_preview": preview}),
                true,
            );
        }
    };
    if fp == "SKILL.md"
        && let Err(e) = store::validate_skill_md(&replaced.content)
    {
        return fail(format!(
            "the patched SKILL.md would be invalid, nothing was changed: {e}"
        ));
    }
    if let Err(e) = guard_text(sc, fp, &replaced.content) {
        return e;
    }
    if let Err(e) = write(&skill.dir, name, &rel, &replaced.content) {
        return e;
    }
    let cut = |t: &str| t.chars().take(200).collect::<String>();
    (
        json!({"success": true,
               "message": format!("Patched {fp} of skill '{name}' ({} replacement{}).", replaced.count, if replaced.count == 1 { "" } else { "s" }),
               "_change": {"old": cut(old), "new": cut(new)}}),
        false,
    )
}

fn delete(sc: &SkillsCtx, name: &str, args: &Value) -> Out {
    let skill = match one_of(sc, name, true) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let absorbed = s(args, "absorbed_into").map(str::trim).unwrap_or("");
    if !absorbed.is_empty() {
        if absorbed == name {
            return fail("absorbed_into must name another skill");
        }
        if sc.find(absorbed).is_empty() {
            return fail(format!(
                "absorbed_into: skill '{absorbed}' does not exist (name the umbrella skill that now covers this one, or '' to just delete)"
            ));
        }
    }
    if skill.single() {
        if let Err(e) = sc.fs.remove_file(&skill.md) {
            return fail(format!("cannot delete {}: {e}", skill.md.display()));
        }
    } else {
        if skill.dir == skill.root || !skill.dir.starts_with(&skill.root) {
            return fail(format!(
                "Skill '{name}' is not inside a skills folder: not deleted"
            ));
        }
        if let Err(e) = sc.fs.remove_dir_all(&skill.dir) {
            return fail(format!("cannot delete {}: {e}", skill.dir.display()));
        }
    }
    if let Some(parent) = skill.dir.parent()
        && !skill.single()
        && parent != skill.root
        && parent.starts_with(&skill.root)
    {
        let only_desc = std::fs::read_dir(parent)
            .map(|rd| rd.flatten().all(|e| e.file_name() == "DESCRIPTION.md"))
            .unwrap_or(false);
        if only_desc {
            let _ = std::fs::remove_dir_all(parent);
        }
    }
    let msg = if absorbed.is_empty() {
        format!("Skill '{name}' deleted.")
    } else {
        format!("Skill '{name}' deleted (absorbed into '{absorbed}').")
    };
    (json!({"success": true, "message": msg}), false)
}

fn write_file(sc: &SkillsCtx, name: &str, args: &Value) -> Out {
    let Some(fp) = s(args, "file_path") else {
        return fail("file_path is required for write_file");
    };
    let Some(content) = s(args, "file_content") else {
        return fail("file_content is required for write_file");
    };
    let rel = match store::check_file_path(fp, false) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if content.len() > store::MAX_FILE_BYTES || content.chars().count() > store::MAX_SKILL_CHARS {
        return fail(format!(
            "file_content is too large: at most {} bytes and {} characters",
            store::MAX_FILE_BYTES,
            store::MAX_SKILL_CHARS
        ));
    }
    let skill = match one(sc, name) {
        Ok(s) => s,
        Err(e) => return e,
    };
    if let Err(e) = guard_text(sc, fp, content) {
        return e;
    }
    let path = skill.dir.join(&rel);
    if let Err(e) = write(&skill.dir, name, &rel, content) {
        return e;
    }
    (
        json!({"success": true, "message": format!("Wrote {fp} in skill '{name}'."), "path": path.display().to_string()}),
        false,
    )
}

fn remove_file(sc: &SkillsCtx, name: &str, args: &Value) -> Out {
    let Some(fp) = s(args, "file_path") else {
        return fail("file_path is required for remove_file");
    };
    let rel = match store::check_file_path(fp, false) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let skill = match one(sc, name) {
        Ok(s) => s,
        Err(e) => return e,
    };
    match nofollow::is_file(&skill.dir, &rel) {
        Ok(true) => {}
        Err(e) if nofollow::is_link_refusal(&e) => return link_refusal(name, fp),
        _ => {
            return (
                json!({"success": false, "error": format!("File '{fp}' not found in skill '{name}'."),
                       "available_files": store::linked_files(&skill.dir)}),
                true,
            );
        }
    }
    if let Err(e) = nofollow::remove(&skill.dir, &rel) {
        return io_fail(name, fp, "remove", &e);
    }
    // remove now-empty folders up to the skill folder
    let mut dir = rel.parent().map(Path::to_path_buf);
    while let Some(d) = dir {
        if d.as_os_str().is_empty() || nofollow::remove_empty_dir(&skill.dir, &d).is_err() {
            break;
        }
        dir = d.parent().map(Path::to_path_buf);
    }
    (
        json!({"success": true, "message": format!("Removed {fp} from skill '{name}'.")}),
        false,
    )
}
