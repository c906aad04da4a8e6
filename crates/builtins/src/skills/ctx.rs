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

    /// Skills named `name` (`skill`, `category/skill` or `category:skill`).
    pub fn find(&self, name: &str) -> Vec<Skill> {
        let name = name.trim().replace(':', "/");
        let (cat, base) = match name.rsplit_once('/') {
            Some((c, b)) => (Some(c.to_string()), b.to_string()),
            None => (None, name.clone()),
        };
        self.all()
            .into_iter()
            .filter(|s| {
                let dir_name = s
                    .dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (dir_name == base || s.name == base)
                    && cat
                        .as_deref()
                        .is_none_or(|c| s.category.as_deref() == Some(c))
            })
            .collect()
    }
}
