//! Where skills are and what they say: discovery under the skills
//! directories (`[category/]name/SKILL.md`, support folders never scanned
//! as skills), front matter parsing (YAML between the leading `---` lines,
//! with a maintained YAML crate), and the checks a SKILL.md must pass.
//! No tool logic: `skills_list`, `skill_view` and `skill_manage` build on it.

use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

pub const SUPPORT_DIRS: &[&str] = &["references", "templates", "scripts", "assets"];
const SKIP_DIRS: &[&str] = &[
    ".git",
    ".github",
    ".hub",
    ".archive",
    ".venv",
    "venv",
    "node_modules",
    "site-packages",
    "__pycache__",
    ".tox",
    ".nox",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
];
pub const MAX_NAME: usize = 64;
pub const MAX_DESCRIPTION: usize = 1024;
pub const MAX_SKILL_CHARS: usize = 100_000;
pub const MAX_FILE_BYTES: usize = 1 << 20;

/// One discovered skill.
#[derive(Clone, Debug)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub category: Option<String>,
    /// The skill's folder.
    pub dir: PathBuf,
    /// The root it was found under.
    pub root: PathBuf,
    pub front: Map<String, Value>,
    /// The skill's text: `dir/SKILL.md`, or for a single-file skill
    /// (`<name>.md` without a folder of its own) that file.
    pub md: PathBuf,
}

impl Skill {
    /// A single-file skill (`<name>.md`): no folder, no supporting files.
    pub fn single(&self) -> bool {
        self.md.file_name().is_some_and(|n| n != "SKILL.md")
    }
}

/// Split `text` into (front matter YAML, body). `None` when the text does
/// not start with a closed `---` block.
pub fn split_front(text: &str) -> Option<(&str, &str)> {
    let t = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = t.strip_prefix("---")?;
    let rest = rest
        .strip_prefix("\r\n")
        .or_else(|| rest.strip_prefix('\n'))?;
    let mut pos = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..pos], &rest[pos + line.len()..]));
        }
        pos += line.len();
    }
    None
}

/// The front matter as a JSON object (empty when absent or unparsable; a
/// naive `key: value` split as the original's fallback).
pub fn front_matter(text: &str) -> Map<String, Value> {
    let Some((yaml, _)) = split_front(text) else {
        return Map::new();
    };
    match serde_yaml_ng::from_str::<Value>(yaml) {
        Ok(Value::Object(m)) => m,
        _ => {
            let mut m = Map::new();
            for line in yaml.lines() {
                if let Some((k, v)) = line.split_once(':')
                    && !k.starts_with(' ')
                {
                    m.insert(
                        k.trim().to_string(),
                        Value::String(v.trim().trim_matches('"').to_string()),
                    );
                }
            }
            m
        }
    }
}

/// Why a SKILL.md text is not acceptable (create, edit, patch).
pub fn validate_skill_md(text: &str) -> Result<Map<String, Value>, String> {
    if text.chars().count() > MAX_SKILL_CHARS {
        return Err(format!(
            "SKILL.md is {} characters: at most {MAX_SKILL_CHARS}. Move details into references/ files.",
            text.chars().count()
        ));
    }
    let t = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !t.starts_with("---") {
        return Err("SKILL.md must start with YAML front matter ('---' on the first line, then name: and description:, then '---')".into());
    }
    let Some((yaml, body)) = split_front(t) else {
        return Err("the front matter is not closed: add a line '---' after it".into());
    };
    let front = match serde_yaml_ng::from_str::<Value>(yaml) {
        Ok(Value::Object(m)) => m,
        Ok(_) => return Err("the front matter must be a YAML mapping (key: value lines)".into()),
        Err(e) => return Err(format!("the front matter is not valid YAML: {e}")),
    };
    match front.get("name").and_then(Value::as_str) {
        Some(n) if !n.trim().is_empty() => {
            if n.chars().count() > MAX_NAME {
                return Err(format!(
                    "front matter name is longer than {MAX_NAME} characters"
                ));
            }
        }
        _ => return Err("the front matter needs a 'name'".into()),
    }
    match front.get("description").and_then(Value::as_str) {
        Some(d) if !d.trim().is_empty() => {
            if d.chars().count() > MAX_DESCRIPTION {
                return Err(format!(
                    "front matter description is longer than {MAX_DESCRIPTION} characters"
                ));
            }
        }
        _ => return Err("the front matter needs a 'description'".into()),
    }
    if body.trim().is_empty() {
        return Err("SKILL.md needs a body after the front matter (the instructions)".into());
    }
    Ok(front)
}

/// Skill and category names: `^[a-z0-9][a-z0-9._-]*$`, at most 64.
pub fn valid_name(kind: &str, name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        })
        && name != "."
        && !name.contains("..");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid {kind} '{name}': use lowercase letters, digits, '.', '_' and '-', starting with a letter or digit, at most {MAX_NAME} characters"
        ))
    }
}

fn description_of(front: &Map<String, Value>, text: &str) -> String {
    let d = front
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            let body = split_front(text).map(|(_, b)| b).unwrap_or(text);
            body.lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_string)
        })
        .unwrap_or_default();
    if d.chars().count() > MAX_DESCRIPTION {
        let mut t: String = d.chars().take(MAX_DESCRIPTION - 3).collect();
        t.push_str("...");
        t
    } else {
        d
    }
}

pub fn platform_ok(front: &Map<String, Value>) -> bool {
    let Some(Value::Array(list)) = front.get("platforms") else {
        return true;
    };
    let here = if cfg!(target_os = "macos") {
        "macos"
    } else if cfg!(windows) {
        "windows"
    } else {
        "linux"
    };
    list.iter()
        .any(|p| p.as_str().is_some_and(|s| s.eq_ignore_ascii_case(here)))
}

/// Read a skill from its folder.
pub fn load(dir: &Path, root: &Path) -> Option<Skill> {
    load_md(&dir.join("SKILL.md"), root)
}

/// Read a skill from its markdown file: `<folder>/SKILL.md`, or a
/// single-file `<name>.md` (named after the file).
pub fn load_md(md: &Path, root: &Path) -> Option<Skill> {
    let single = md.file_name()? != "SKILL.md";
    let dir = if single { md } else { md.parent()? };
    let text = std::fs::read(md).ok()?;
    let text = String::from_utf8_lossy(&text[..text.len().min(64 * 1024)]).into_owned();
    let front = front_matter(&text);
    let dir_name = if single {
        md.file_stem()?.to_string_lossy().into_owned()
    } else {
        dir.file_name()?.to_string_lossy().into_owned()
    };
    let name: String = front
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| dir_name.clone())
        .chars()
        .take(MAX_NAME)
        .collect();
    let rel = md.parent()?.strip_prefix(root).ok()?;
    let rel = if single {
        rel.join(&dir_name)
    } else {
        rel.to_path_buf()
    };
    let category = if rel.components().count() >= 2 {
        rel.components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
    } else {
        None
    };
    Some(Skill {
        description: description_of(&front, &text),
        name,
        category,
        dir: md.parent()?.to_path_buf(),
        root: root.to_path_buf(),
        front,
        md: md.to_path_buf(),
    })
}

/// Every skill under `roots` (earlier roots win on a name clash), sorted by
/// (category, name); skills for other platforms left out.
pub fn discover(roots: &[PathBuf]) -> Vec<Skill> {
    let mut out: Vec<Skill> = Vec::new();
    for s in discover_every(roots) {
        if platform_ok(&s.front) && !out.iter().any(|o| o.name == s.name) {
            out.push(s);
        }
    }
    out.sort_by(|a, b| {
        (a.category.as_deref().unwrap_or(""), &a.name)
            .cmp(&(b.category.as_deref().unwrap_or(""), &b.name))
    });
    out
}

/// Every skill folder under `roots`, in root order, with no name clash
/// resolved and no platform left out (what a lookup by name chooses from).
pub fn discover_every(roots: &[PathBuf]) -> Vec<Skill> {
    let mut out: Vec<Skill> = Vec::new();
    for root in roots {
        let mut stack = vec![(root.clone(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            if dir.join("SKILL.md").is_file() && dir != *root {
                if let Some(s) = load(&dir, root) {
                    out.push(s);
                }
                // support folders and nested content of a skill are not skills
                continue;
            }
            if depth >= 4 {
                continue;
            }
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut dirs: Vec<PathBuf> = Vec::new();
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if SKIP_DIRS.contains(&name.as_str()) {
                    continue;
                }
                if e.path().is_dir() {
                    dirs.push(e.path());
                }
            }
            // depth first, in name order (a stable answer)
            dirs.sort();
            for d in dirs.into_iter().rev() {
                stack.push((d, depth + 1));
            }
        }
    }
    out
}

/// Single-file skills `<name>.md` under `root` (not SKILL.md, not in a
/// skill's supporting folders), as the original's legacy flat layout.
pub fn single_files(root: &Path, name: &str) -> Vec<PathBuf> {
    let want = format!("{name}.md");
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let in_skill = dir != root && dir.join("SKILL.md").is_file();
        for e in rd.flatten() {
            let fname = e.file_name().to_string_lossy().into_owned();
            let p = e.path();
            if p.is_dir() {
                if depth < 4
                    && !SKIP_DIRS.contains(&fname.as_str())
                    && !(in_skill && SUPPORT_DIRS.contains(&fname.as_str()))
                {
                    stack.push((p, depth + 1));
                }
            } else if fname == want && want != "SKILL.md" && p.is_file() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Supporting files of a skill, by folder (relative paths).
pub fn linked_files(dir: &Path) -> Map<String, Value> {
    let mut m = Map::new();
    for sub in SUPPORT_DIRS {
        let base = dir.join(sub);
        if !base.is_dir() {
            continue;
        }
        let mut files = Vec::new();
        let mut stack = vec![base];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if let Ok(rel) = p.strip_prefix(dir) {
                    files.push(rel.display().to_string());
                }
            }
        }
        files.sort();
        if !files.is_empty() {
            m.insert(sub.to_string(), Value::from(files));
        }
    }
    m
}

/// A supporting-file path a skill may have: relative, no `..`, under one
/// of the four folders (or SKILL.md itself when `allow_skill_md`).
pub fn check_file_path(p: &str, allow_skill_md: bool) -> Result<PathBuf, String> {
    let p = p.trim();
    if p.is_empty() {
        return Err("file_path is required".into());
    }
    let path = Path::new(p);
    if path.is_absolute() || p.starts_with('~') {
        return Err(format!(
            "file_path '{p}' must be relative to the skill folder"
        ));
    }
    if path
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(format!("file_path '{p}' must not contain '..'"));
    }
    if allow_skill_md && p == "SKILL.md" {
        return Ok(path.to_path_buf());
    }
    let first = path
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    if !SUPPORT_DIRS.contains(&first.as_str()) || path.components().count() < 2 {
        return Err(format!(
            "file_path '{p}' must be under references/, templates/, scripts/ or assets/"
        ));
    }
    Ok(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_and_validation() {
        let ok = "---\nname: demo\ndescription: Does things\ntags: [a, b]\n---\n# Demo\nBody\n";
        let f = validate_skill_md(ok).unwrap();
        assert_eq!(f["name"], "demo");
        assert_eq!(f["tags"][1], "b");
        assert!(validate_skill_md("# no front\n").is_err());
        assert!(validate_skill_md("---\nname: x\n").is_err());
        assert!(
            validate_skill_md("---\nname: x\n---\nbody")
                .unwrap_err()
                .contains("description")
        );
        assert!(validate_skill_md("---\nname: x\ndescription: y\n---\n\n").is_err());
        assert!(valid_name("name", "my-skill.v2").is_ok());
        assert!(valid_name("name", "My Skill").is_err());
        assert!(valid_name("name", "-x").is_err());
        assert!(check_file_path("references/a.md", false).is_ok());
        assert!(check_file_path("../x", false).is_err());
        assert!(check_file_path("/etc/x", false).is_err());
        assert!(check_file_path("other/x", false).is_err());
    }
}
