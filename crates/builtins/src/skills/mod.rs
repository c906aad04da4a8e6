//! The built-in `skills` toolset: `skills_list`, `skill_view` and
//! `skill_manage` over skill folders (`[category/]name/SKILL.md` plus
//! references/, templates/, scripts/, assets/) in the configured skills
//! directories, and the skills guard a host can run on a folder before
//! installing it ([`scan_folder`]).
//!
//! Layout: `store` (discovery, front matter, rules), `guard` (scanning),
//! `ctx` (shared state), `view` and `manage` (the tools); this file only
//! declares the tools and registers them.

pub mod ctx;
pub mod guard;
pub mod manage;
pub mod nofollow;
pub mod store;
pub mod view;

use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

pub use ctx::{SkillsConfig, SkillsCtx};
use hermes_core::core::Core;
use hermes_core::error::Result;
use hermes_core::registry::{build_entry, parse_spec};
use hermes_core::{Blocking, BlockingTool, RunCtx, ToolOutput};

#[derive(Clone, Copy)]
enum Which {
    List,
    View,
    Manage,
}

struct SkillsTool {
    ctx: Arc<SkillsCtx>,
    which: Which,
}

impl BlockingTool for SkillsTool {
    fn run(&self, args: Value, ctx: &RunCtx) -> ToolOutput {
        self.ctx.activity.bump(&ctx.context.task_id);
        let (v, is_error) = match self.which {
            Which::List => view::list(&self.ctx, &args),
            Which::View => view::view(&self.ctx, &args, &ctx.context.session_id),
            Which::Manage => manage::run(&self.ctx, &args),
        };
        ToolOutput {
            text: v.to_string(),
            is_error,
        }
    }
}

/// Scan a skill folder before installing it: the guard's report
/// (`verdict`, `decision` for `trust`, `findings`).
pub fn scan_folder(dir: &Path, trust: &str) -> Value {
    let engine = hermes_approval::Engine::new();
    let trust = match trust {
        "builtin" | "trusted" | "community" | "agent-created" => trust,
        _ => "community",
    };
    guard::report(trust, guard::scan_dir(&engine, dir))
}

const LIST_DESC: &str = "List the installed skills (name, description, category), optionally \
only one category. Skills are reusable instructions for specific tasks: load a relevant one with \
skill_view before starting such a task.";

const VIEW_DESC: &str = "Load a skill: its full SKILL.md with metadata and the list of its \
supporting files, or with file_path one supporting file (e.g. 'references/api.md'). name may be \
'skill' or 'category/skill'.";

const MANAGE_DESC: &str = "Create and maintain skills (reusable instructions for tasks that \
recur). Actions: create (content = full SKILL.md starting with YAML front matter holding name and \
description, then the instructions; optional category), edit (replace SKILL.md), patch \
(old_string -> new_string in SKILL.md or file_path), delete (absorbed_into = the skill that now \
covers it, or ''), write_file / remove_file (file_path under references/, templates/, scripts/ or \
assets/; file_content). Names: lowercase letters, digits, '.', '_', '-'.";

pub fn specs() -> Vec<Value> {
    vec![
        json!({"name": "skills_list", "toolset": "skills", "emoji": "📚", "parallel_safe": true,
        "schema": {"name": "skills_list", "description": LIST_DESC, "parameters": {
            "type": "object",
            "properties": {"category": {"type": "string", "description": "Only skills of this category."}},
            "required": []
        }}}),
        json!({"name": "skill_view", "toolset": "skills", "emoji": "📚", "parallel_safe": true,
        "schema": {"name": "skill_view", "description": VIEW_DESC, "parameters": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Skill name or category/name."},
                "file_path": {"type": "string", "description": "A supporting file inside the skill; omit for SKILL.md."}
            },
            "required": ["name"]
        }}}),
        json!({"name": "skill_manage", "toolset": "skills", "emoji": "📝",
        "schema": {"name": "skill_manage", "description": MANAGE_DESC, "parameters": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["create", "patch", "edit", "delete", "write_file", "remove_file"]},
                "name": {"type": "string", "description": "Skill name (lowercase, [a-z0-9._-], up to 64)."},
                "content": {"type": "string", "description": "Full SKILL.md (create, edit)."},
                "old_string": {"type": "string", "description": "Text to find (patch)."},
                "new_string": {"type": "string", "description": "Replacement (patch; may be empty)."},
                "replace_all": {"type": "boolean", "description": "Patch every match."},
                "category": {"type": "string", "description": "Category folder (create)."},
                "file_path": {"type": "string", "description": "Supporting file path (write_file, remove_file; patch: defaults to SKILL.md)."},
                "file_content": {"type": "string", "description": "Content of the supporting file (write_file)."},
                "absorbed_into": {"type": "string", "description": "delete: the skill that absorbed this one, or ''."}
            },
            "required": ["action", "name"]
        }}}),
    ]
}

/// Register the skills toolset into `core`.
pub fn install(ctx: SkillsCtx, core: &Core) -> Result<Arc<SkillsCtx>> {
    let ctx = Arc::new(ctx);
    let mut entries = Vec::new();
    for (spec, which) in specs()
        .into_iter()
        .zip([Which::List, Which::View, Which::Manage])
    {
        let tool = SkillsTool {
            ctx: ctx.clone(),
            which,
        };
        entries.push(build_entry(
            parse_spec(&spec.to_string())?,
            Arc::new(Blocking(Arc::new(tool))),
            None,
        )?);
    }
    core.register_many(entries, false)?;
    Ok(ctx)
}
