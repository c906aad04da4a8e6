//! The skills toolset's shared state: its directories, the guard's engine
//! and settings, and where writes go. Read by the tool modules; imports
//! none of them.

use serde::Deserialize;
use std::path::PathBuf;
use std::sync::Arc;

use super::store::{self, Skill};
use crate::activity::Activity;
use hermes_exec::fs::HostFs;

/// The `"skills": {...}` section of the runtime config.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SkillsConfig {
    /// More folders to find skills in (read-only for discovery order:
    /// the main skills_dir wins on a name clash).
    pub external_dirs: Vec<String>,
    /// Scan agent-created skills with the guard before they are written.
    pub guard_agent_created: bool,
    /// Substitute ${HERMES_SKILL_DIR} and ${HERMES_SESSION_ID} in skill_view.
    pub template_vars: bool,
    /// Skills hidden from skills_list and skill_view (by name).
    pub disabled: Vec<String>,
}

impl Default for SkillsConfig {
    fn default() -> Self {
        SkillsConfig {
            external_dirs: Vec::new(),
            guard_agent_created: true,
            template_vars: true,
            disabled: Vec::new(),
        }
    }
}

pub struct SkillsCtx {
    /// Where skill_manage creates skills.
    pub dir: PathBuf,
    pub external: Vec<PathBuf>,
    pub cfg: SkillsConfig,
    pub engine: hermes_approval::Engine,
    pub fs: HostFs,
    pub activity: Arc<Activity>,
}

impl SkillsCtx {
    pub fn new(dir: PathBuf, cfg: SkillsConfig, activity: Arc<Activity>) -> SkillsCtx {
        SkillsCtx {
            external: cfg.external_dirs.iter().map(PathBuf::from).collect(),
            dir,
            cfg,
            engine: hermes_approval::Engine::new(),
            fs: HostFs::local(),
            activity,
        }
    }

    /// Create the main skills folder if missing (as the original does).
    pub fn fs_ready(&self) -> bool {
        use hermes_exec::fs::FileSystem;
        self.fs.create_dir_all(&self.dir).is_ok()
    }

    pub fn roots(&self) -> Vec<PathBuf> {
        let mut r = vec![self.dir.clone()];
        r.extend(self.external.iter().cloned());
        r
    }

    pub fn all(&self) -> Vec<Skill> {
        let mut all = store::discover(&self.roots());
        all.retain(|s| !self.cfg.disabled.contains(&s.name));
        all
    }

    /// Skills named `name` (`skill`, `category/skill` or `category:skill`):
    /// the folder at that path under a skills root, every skill whose
    /// folder name or front matter `name` is the name, and single-file
    /// `<name>.md` skills, from every root (a name found in two roots is
    /// two answers: the caller refuses to guess). Disabled skills and those
    /// of other platforms are included; the caller says why it will not
    /// use them.
    pub fn find(&self, name: &str) -> Vec<Skill> {
        let name = name.trim().replace(':', "/");
        let (cat, base) = match name.rsplit_once('/') {
            Some((c, b)) => (Some(c.to_string()), b.to_string()),
            None => (None, name.clone()),
        };
        let mut out: Vec<Skill> = Vec::new();
        let mut seen: Vec<PathBuf> = Vec::new();
        let mut push = |s: Skill, out: &mut Vec<Skill>| {
            let key = std::fs::canonicalize(&s.md).unwrap_or_else(|_| s.md.clone());
            if !seen.contains(&key) {
                seen.push(key);
                out.push(s);
            }
        };
        let every = store::discover_every(&self.roots());
        for root in self.roots() {
            let direct = root.join(&name);
            if direct.join("SKILL.md").is_file() {
                if let Some(s) = store::load(&direct, &root) {
                    push(s, &mut out);
                }
            } else if direct.with_extension("md").is_file()
                && let Some(s) = store::load_md(&direct.with_extension("md"), &root)
            {
                push(s, &mut out);
            }
            for s in every.iter().filter(|s| s.root == root) {
                let dir_name = s
                    .dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if (dir_name == base || s.name == base)
                    && cat
                        .as_deref()
                        .is_none_or(|c| s.category.as_deref() == Some(c))
                {
                    push(s.clone(), &mut out);
                }
            }
            if cat.is_none() {
                for md in store::single_files(&root, &base) {
                    if let Some(s) = store::load_md(&md, &root) {
                        push(s, &mut out);
                    }
                }
            }
        }
        out
    }

    /// Whether a skill is switched off in the config (by name).
    pub fn disabled(&self, s: &Skill) -> bool {
        self.cfg.disabled.contains(&s.name)
    }
}
