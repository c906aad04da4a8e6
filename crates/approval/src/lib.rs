//! Command approval engine: analyse a shell command, explain what it does and
//! decide `allow`, `ask` or `block` before anything runs.
//!
//! This module is the single gate every command-running tool goes through
//! (`Runtime::approve_command` calls [`Engine::check`]).
//!
//! # Pipeline
//!
//! 1. [`normalize`]: strip ANSI escapes, control and invisible characters,
//!    fold Unicode look-alikes (NFKC plus a small confusables table). Because
//!    folding can itself create shell syntax, both the raw and the normalised
//!    text are analysed and the stricter verdict wins.
//! 2. [`parse`]: a hand-written, error-tolerant parser for the POSIX/bash
//!    grammar agents emit (quoting, `$'..'`, substitutions, heredocs, pipes,
//!    lists, redirections, subshells, groups, compound commands, functions).
//! 3. [`analyze`]: walks the tree in execution order with a variable
//!    environment, performs the expansions that matter (braces, tilde,
//!    parameters, `$IFS` splitting, trivial `$(echo x)`), and unwraps wrappers
//!    (`sudo`, `env`, `timeout`, `xargs`, `find -exec`, ...) and shell payloads
//!    (`bash -c`, `eval`, `ssh host '...'`, heredocs and literal text piped
//!    into shells) recursively. The result is the list of programs
//!    ([`analyze::Exec`]) that would run, each with argv, redirections and pipe
//!    source.
//! 4. [`rules`]: a table of rules (key, description, tier, matcher) applied to
//!    every program. Words that are data (echo arguments, commit messages,
//!    grep patterns, heredoc bodies fed to `cat`, comments) are never treated
//!    as commands because only real programs are matched. A regex floor is
//!    consulted only when parsing failed. Before any rule sees a program,
//!    GNU long-option abbreviations are expanded ([`options`]); the rule
//!    families by class of danger ([`families`]) explain what the matched
//!    command does; the catalog rules ([`catalog`]: ATT&CK techniques,
//!    GTFOBins and LOLBAS functions, identity and control planes) name the
//!    account or scope affected. PowerShell and cmd syntax is read by
//!    [`winshell`]. Shared types live in [`types`] (a leaf module).
//!
//! Coverage against MITRE ATT&CK is generated into
//! `docs/approval-coverage.md` by `tests/coverage.rs` from the rule table
//! and `coverage/attack.json`, with a corpus per technique.
//!
//! # Why a hand-written parser and not tree-sitter-bash
//!
//! * Speed: the whole check (normalise, parse, analyse, rules) runs in a few
//!   microseconds for typical commands (see `BENCH.md`); tree-sitter parsing
//!   alone costs more than that, before the tree walk.
//! * The analysis needs bash *semantics* (quote removal, ANSI-C strings,
//!   parameter operators, field splitting, heredoc expansion rules), which a
//!   syntax tree does not give: we would re-implement word evaluation on top
//!   of tree-sitter nodes anyway.
//! * Error behaviour is ours to define: anything not understood is reported
//!   and turns the verdict to at least `ask`; tree-sitter silently produces
//!   `ERROR` nodes with recovery heuristics we would have to second-guess.
//! * No C code in the build, and a pure-Rust target for fuzzing.
//!
//! tree-sitter-bash is still used, as a test-only second grammar:
//! `tests/differential.rs` checks that every program it finds in the
//! corpora is one the engine's analysis reports.
//!
//! Limits (nesting depth, node count, program count, input size) keep the
//! analysis bounded; exceeding them yields `ask`, never `allow`, and never
//! `block` merely for being long.
//!
//! # What is seen through
//!
//! * Wrappers: `sudo`, `doas`, `su -c`, `runuser`, `pkexec`, `env` (incl.
//!   `-S`), `nice`, `ionice`, `timeout`, `nohup`, `setsid`, `stdbuf`,
//!   `xargs`, `command`, `builtin`, `exec`, `time`, `watch`, `flock`,
//!   `chroot`, `unbuffer`, `strace`, `systemd-run`, `script -c`, `busybox`,
//!   `npx`/`npm exec`, `parallel`, `coproc`, `docker`/`kubectl exec`,
//!   `find -exec`, absolute or relative program paths, `.exe` suffixes.
//! * Payloads: `sh|bash|zsh|... -c` (with `$0 $1 ...`), `eval`, `trap`,
//!   `alias`, `ssh host CMD`, `rsync -e`, `git -c core.pager=`/`alias.x=!`,
//!   `git submodule foreach`, `git rebase --exec`, `ssh -o ProxyCommand=`,
//!   `tar --to-command=`, `vim -c ':!..'`, `PROMPT_COMMAND=`/`GIT_SSH_COMMAND=`,
//!   `$(...)`, backticks, `<(...)`, unquoted heredoc bodies, heredocs /
//!   here-strings / literal `echo|printf|cat` text fed to shells, `at`,
//!   files written by `echo ... > x.sh` then run, spawn calls inside
//!   interpreter code (`os.system("..")`, `subprocess.run([...])`,
//!   `system ".."`, backticks, `execSync('..')`, awk `system()`,
//!   AppleScript `do shell script`).
//! * Spelling: quotes and escapes, `$'..'`, brace expansion, `$IFS`,
//!   parameter operators (`${X:-..}`, `${X%%..}`, `${X/a/b}`, substrings,
//!   case changes), variables assigned earlier, `for` loop values, `cd`
//!   before relative deletes, ANSI/control/invisible characters, NFKC and
//!   cross-script look-alikes, flag bundles and permutations, `//`, `/./`,
//!   `/..`, `~`, `$HOME`, `${HOME}`, Windows drive paths.
//!
//! Anything computed at run time (unset variables, command output) is a
//! marker; a program name built from it is `dynamic-command` (ask), a shell
//! payload built from it is `dynamic-payload` (ask).
//!
//! # Presumption, program knowledge and postures (issue 37)
//!
//! A program the engine does not know ([`knowledge::INERT`], wrapper
//! handling, shells, interpreters) has its arguments presumed executed:
//! argument lists starting with a program and arguments holding a command
//! line are analysed (what is found that way asks, never blocks). Options
//! of known programs that run code are data in [`knowledge::PROGRAMS`].
//! Literal `$(..)` kept for later evaluation (array subscripts, `${x@P}`,
//! `PS4`) and script text written to files are analysed too.
//! [`EngineConfig::posture`] (`approvals.posture`) selects `deny-list`,
//! `known-safe` or `sandboxed` ([`posture`]); with a posture, privilege,
//! system installs, persistence and process inspection ask in every
//! posture, inline scripts are judged by their content, and with
//! [`EngineConfig::read_scripts`] the scripts a command runs are read and
//! judged at decision time. Without a posture the compatibility judgement
//! pinned by the public case file is kept. See `docs/approval-postures.md`.
//!
//! # Host configuration
//!
//! [`EngineConfig`] (documented there with its JSON shape): host rules and
//! named rule packs ([`packs`]), tier changes of existing rules, exemptions,
//! and the `shell` (`posix`, `powershell`, `cmd`). Every reason names the
//! pack that decided (`builtin`, `host` or the pack's name). The policy
//! layer ([`policy`]) adds modes, session and persistent approvals.
//!
//! # Sandbox
//!
//! [`Engine::check_with`] takes [`CheckOptions`]: when the command runs in
//! a sandbox, effects it contains (writes inside the workspace, network use
//! without a network) need no prompt and are reported in
//! [`CheckResult::contained`] with the reason ([`sandbox`]);
//! [`CheckResult::explain`] describes the whole decision.

// `unsafe` lives only at the boundary (crates/ffi, crates/exec/src/sys.rs).
#![deny(unsafe_code)]

pub mod analyze;
mod argv;
pub mod catalog;
pub mod ctx;
pub mod effects;
pub mod families;
pub mod knowledge;
pub mod names;
pub mod normalize;
pub mod options;
pub mod packs;
pub mod parse;
pub mod paths;
pub mod policy;
pub mod posture;
pub mod redact;
pub mod rules;
pub mod runners;
pub mod sandbox;
pub mod sources;
pub mod types;
pub mod winshell;
pub mod words;

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

pub use packs::PackConfig;
pub use policy::{
    AllowEntry, Answer, ApprovalContext, ApprovalRequest, Decision, Mode, NonInteractive, Policy,
    PolicyConfig, ReviewAnswer,
};
pub use redact::redact_secrets;
pub use rules::{Matcher, Rule};
pub use sandbox::{CheckOptions, SandboxFacts};
pub use types::{Posture, RuleConfig, Verdict};

/// Inputs longer than this are not parsed (only the regex floor runs).
pub const MAX_INPUT: usize = 256 * 1024;

/// One rule that matched, with the simple command it matched on.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Reason {
    pub rule: String,
    /// What the matched command does (the rule's explanation).
    pub description: String,
    pub tier: Verdict,
    pub command: String,
    /// The pack that decided: `"builtin"`, `"host"` (top-level config
    /// rules/tiers) or a host pack's name.
    pub pack: String,
    /// Why the sandbox contains this effect (only in
    /// [`CheckResult::contained`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// The (redacted) argv of the program the rule matched; empty for
    /// findings about the whole command. Not serialised.
    #[serde(skip)]
    pub argv: Vec<String>,
}

/// The full explanation returned by `ht_command_check`.
#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub commands: Vec<Vec<String>>,
    pub normalized: Vec<String>,
    /// Reasons whose effect the sandbox contains ([`Engine::check_with`]);
    /// they did not count towards `verdict`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub contained: Vec<Reason>,
}

/// Keys of the rules behind `reasons`, in report order, deduplicated.
pub fn rule_keys(reasons: &[Reason]) -> Vec<String> {
    let mut seen = HashSet::new();
    reasons
        .iter()
        .filter(|r| seen.insert(r.rule.as_str()))
        .map(|r| r.rule.clone())
        .collect()
}

impl CheckResult {
    /// Keys of the rules that matched, in report order, deduplicated.
    pub fn rule_keys(&self) -> Vec<String> {
        rule_keys(&self.reasons)
    }

    /// JSON text of this result.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }

    /// A human-readable account of the decision: the verdict, then one line
    /// per reason (tier, pack/rule, what the command does, the command),
    /// then what the sandbox contains and why.
    pub fn explain(&self) -> String {
        let mut s = format!(
            "{}\n",
            match self.verdict {
                Verdict::Allow => "allow: nothing risky found",
                Verdict::Ask => "ask: needs approval",
                Verdict::Block => "block: never run by the agent",
            }
        );
        for r in &self.reasons {
            s.push_str(&format!(
                "  {:<5} {}/{}: {} -- {}\n",
                format!("{:?}", r.tier).to_lowercase(),
                r.pack,
                r.rule,
                r.description,
                r.command
            ));
        }
        for r in &self.contained {
            s.push_str(&format!(
                "  contained {}/{}: {} -- {} ({})\n",
                r.pack,
                r.rule,
                r.description,
                r.command,
                r.sandbox.as_deref().unwrap_or("contained by the sandbox")
            ));
        }
        s
    }
}

/// The shell the agent's commands are run by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shell {
    /// bash / sh (PowerShell or cmd syntax is still recognised and judged).
    #[default]
    Posix,
    /// Windows PowerShell / pwsh: every command is read as PowerShell.
    Powershell,
    /// Windows `cmd.exe`: every command is read as cmd.
    Cmd,
}

/// Engine configuration (what [`Engine::from_config`] takes).
///
/// ```json
/// {
///   "shell": "posix",
///   "rules": [{"key": "no-terraform-apply", "description": "terraform apply changes infrastructure",
///              "tier": "ask", "argv_prefix": ["terraform", "apply"]}],
///   "tiers": {"git-destructive": "block"},
///   "exempt": ["shell-c"],
///   "packs": [
///     {"name": "acme-prod",
///      "rules": [{"key": "acme-tenant-delete", "tier": "block",
///                 "description": "acmectl tenant delete removes a customer's data",
///                 "argv_prefix": ["acmectl", "tenant", "delete"]},
///                {"key": "acme-prod-context", "tier": "ask",
///                 "description": "kubectl against the production cluster",
///                 "pattern": "--context[= ]prod"}],
///      "tiers": {"cloud-destroy": "block", "shell-c": "allow"}}
///   ]
/// }
/// ```
///
/// * `shell`: `posix` (default), `powershell` or `cmd` for hosts whose agent
///   runs on Windows (see [`winshell`]).
/// * `rules` / `tiers` at the top level form the pack `"host"`; `packs` are
///   applied in order after it. A rule's `argv_prefix` compares the first
///   word by basename and the rest exactly (`*` matches any word);
///   `pattern` is a regex over each program's argv joined with spaces,
///   without words that are data (echo/printf arguments, grep patterns,
///   commit/PR messages). Exactly one of the two; `tier` is `ask` or
///   `block`; in packs `description` is required (it is the explanation
///   shown for a match).
/// * `tiers` changes the tier of an existing rule (built-in, host or an
///   earlier pack): `allow` turns it off, `ask`/`block` set it. Built-in
///   `block` rules cannot be lowered.
/// * `exempt` turns rules off by key (built-in `block` rules excepted, the
///   exemption is ignored for them).
///
/// Errors name the field (`packs[0].rules[1].pattern: invalid regex ...`).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EngineConfig {
    #[serde(default)]
    pub rules: Vec<RuleConfig>,
    #[serde(default)]
    pub exempt: Vec<String>,
    #[serde(default)]
    pub shell: Shell,
    #[serde(default)]
    pub tiers: BTreeMap<String, Verdict>,
    #[serde(default)]
    pub packs: Vec<PackConfig>,
    /// The approval posture (`approvals.posture`: `deny-list`,
    /// `known-safe`, `sandboxed`). Absent: the compatibility judgement
    /// (the original's, pinned by the public case file). Present: the
    /// generalised judgement (see [`posture`]).
    #[serde(default)]
    pub posture: Option<Posture>,
    /// The project directory commands run in (their working directory is
    /// inside it); relative paths are judged against it.
    #[serde(default)]
    pub workspace: Option<String>,
    /// A Python virtual environment (or conda env) is active for the
    /// commands (`VIRTUAL_ENV` / `CONDA_PREFIX` set): `pip install` stays
    /// in it.
    #[serde(default)]
    pub virtualenv: bool,
    /// With a `posture` and a `workspace`: read the script a command runs
    /// (`bash FILE`, `source FILE`, `./FILE`, `python3 FILE`, `node FILE`)
    /// at decision time and judge its content; a script that cannot be
    /// read or is larger than 256 KiB asks (`script-unseen`).
    #[serde(default)]
    pub read_scripts: bool,
}

/// The rule engine. Cheap to share (`Arc<Engine>`), immutable after construction.
#[derive(Debug)]
pub struct Engine {
    rules: Vec<Rule>,
    exempt: HashSet<String>,
    shell: Shell,
    /// Rule key → index in `rules`.
    index: HashMap<String, usize>,
    posture: Option<Posture>,
    workspace: Option<String>,
    virtualenv: bool,
    read_scripts: bool,
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

/// Rule keys of findings from the Windows reader that have no matcher of
/// their own.
fn winshell_rows() -> Vec<(&'static str, Verdict, &'static str)> {
    vec![
        (
            "windows-boot-registry",
            Verdict::Block,
            "delete boot configuration entries or a registry hive",
        ),
        (
            "shadow-copy-delete",
            Verdict::Block,
            "delete volume shadow copies or the backup catalog (restore points)",
        ),
        (
            "windows-system-change",
            Verdict::Ask,
            "change Windows boot, registry, Defender or security settings",
        ),
    ]
}

impl Engine {
    /// The engine with the built-in rules.
    pub fn new() -> Engine {
        let builtin = |key: &str, tier, desc: &str, matcher| Rule {
            key: key.to_string(),
            description: desc.to_string(),
            tier,
            matcher,
            builtin: true,
            pack: packs::BUILTIN.to_string(),
        };
        let rules: Vec<Rule> = rules::builtin_rows()
            .into_iter()
            .map(|(key, tier, desc, m)| {
                builtin(
                    key,
                    tier,
                    desc,
                    match m {
                        Some(f) => Matcher::Exec(f),
                        None => Matcher::Finding,
                    },
                )
            })
            .chain(
                families::family_rows()
                    .into_iter()
                    .map(|(key, tier, desc, f)| builtin(key, tier, desc, Matcher::Explain(f))),
            )
            .chain(
                catalog::catalog_rows()
                    .into_iter()
                    .map(|(key, tier, desc, f)| builtin(key, tier, desc, Matcher::Describe(f))),
            )
            .chain(
                winshell_rows()
                    .into_iter()
                    .map(|(key, tier, desc)| builtin(key, tier, desc, Matcher::Finding)),
            )
            .collect();
        let index = rules
            .iter()
            .enumerate()
            .map(|(i, r)| (r.key.clone(), i))
            .collect();
        Engine {
            rules,
            exempt: HashSet::new(),
            shell: Shell::Posix,
            index,
            posture: None,
            workspace: None,
            virtualenv: false,
            read_scripts: false,
        }
    }

    /// Built-in rules plus host rules, packs, tier changes and exemptions.
    /// Errors name the bad field. Built-in `block` rules cannot be exempted
    /// (the exemption is ignored for them) nor lowered (an error).
    pub fn from_config(cfg: &EngineConfig) -> Result<Engine, String> {
        let mut e = Engine::new();
        packs::check_names(&cfg.packs)?;
        packs::apply(
            &mut e.rules,
            &mut e.index,
            packs::HOST,
            "",
            &cfg.rules,
            &cfg.tiers,
            false,
        )?;
        for (k, p) in cfg.packs.iter().enumerate() {
            packs::apply(
                &mut e.rules,
                &mut e.index,
                p.name.trim(),
                &format!("packs[{k}]."),
                &p.rules,
                &p.tiers,
                true,
            )?;
        }
        e.exempt = cfg.exempt.iter().cloned().collect();
        e.shell = cfg.shell;
        e.posture = cfg.posture;
        e.workspace = cfg.workspace.clone();
        e.virtualenv = cfg.virtualenv;
        e.read_scripts = cfg.read_scripts;
        Ok(e)
    }

    /// Parse a JSON engine config (`deny_unknown_fields`).
    pub fn from_json(json: &str) -> Result<Engine, String> {
        let cfg: EngineConfig =
            serde_json::from_str(json).map_err(|e| format!("approval config: {e}"))?;
        Engine::from_config(&cfg)
    }

    /// The rule table (built-in first, then host rules and packs).
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// This engine with a posture (see [`EngineConfig::posture`]), the
    /// project directory commands run in and whether a Python virtual
    /// environment is active.
    pub fn with_posture(
        mut self,
        posture: Posture,
        workspace: Option<String>,
        virtualenv: bool,
    ) -> Engine {
        self.posture = Some(posture);
        self.workspace = workspace;
        self.virtualenv = virtualenv;
        self
    }

    /// This engine reading the scripts commands run (see
    /// [`EngineConfig::read_scripts`]).
    pub fn reading_scripts(mut self, on: bool) -> Engine {
        self.read_scripts = on;
        self
    }

    /// The posture (`None`: the compatibility judgement).
    pub fn posture(&self) -> Option<Posture> {
        self.posture
    }

    /// The shell commands are read as.
    pub fn shell(&self) -> Shell {
        self.shell
    }

    fn rule(&self, key: &str) -> Option<&Rule> {
        self.index.get(key).map(|&i| &self.rules[i])
    }

    fn exempted(&self, r: &Rule) -> bool {
        r.tier == Verdict::Allow
            || (self.exempt.contains(&r.key) && !(r.builtin && r.tier == Verdict::Block))
    }

    /// Analyse `command` and decide (as on the host).
    pub fn check(&self, command: &str) -> CheckResult {
        self.check_inner(command, &CheckOptions::default())
    }

    /// Analyse `command` with extra facts: when it runs in a sandbox,
    /// effects the sandbox contains (writes inside the workspace, network use
    /// without a network) need no prompt; they are listed in
    /// [`CheckResult::contained`] with the reason. Everything else is judged
    /// as on the host.
    pub fn check_with(&self, command: &str, opts: &CheckOptions) -> CheckResult {
        self.check_inner(command, opts)
    }

    fn check_inner(&self, command: &str, opts: &CheckOptions) -> CheckResult {
        let mut acc = Acc::default();
        if command.len() > MAX_INPUT {
            let head: String = command.chars().take(256).collect();
            // never `block` merely for being long: `ask`, without the floor
            acc.push(self.rule("parse-error"), "command too long to analyse", &[]);
            acc.normalized.push(format!("{head}..."));
            return acc.finish();
        }
        let norm = normalize::normalize(command);
        let win = match self.shell {
            Shell::Posix => None,
            Shell::Powershell => Some(winshell::Dialect::PowerShell),
            Shell::Cmd => Some(winshell::Dialect::Cmd),
        };
        if let Some(d) = win {
            if norm.text != command {
                self.check_windows(command, d, &mut acc, false);
            }
            self.check_windows(&norm.text, d, &mut acc, true);
            return acc.finish();
        }
        if norm.text != command {
            self.check_text(command, &mut acc, false, opts);
        }
        self.check_text(&norm.text, &mut acc, true, opts);
        acc.finish()
    }

    /// The scripts the programs of `a` run, read now and judged by their
    /// content: shell scripts with the whole analysis, other languages by
    /// the shell commands their code spawns. Unreadable scripts ask.
    fn judge_scripts(&self, a: &analyze::Analysis, acc: &mut Acc, opts: &CheckOptions) {
        let Some(ws) = self.workspace.as_deref() else {
            return;
        };
        if acc.script_depth == 0 {
            acc.modified = modified_files(a, ws);
        }
        // relative `cd`s before a program (the analyser only follows
        // absolute ones)
        let mut rel = ws.to_string();
        // Whether a program that could create files has run before this
        // exec in the same command line (a `cd` creates none).
        let mut after_others = false;
        for e in &a.execs {
            let ran_before = after_others;
            if !matches!(
                e.name.as_str(),
                "cd" | "pushd" | "true" | ":" | "echo" | "set"
            ) {
                after_others = true;
            }
            if (e.name == "cd" || e.name == "pushd") && e.cwd.is_none() {
                if let Some(t) = e
                    .argv
                    .get(1)
                    .filter(|t| !t.starts_with('-') && !t.contains(analyze::DYN))
                {
                    rel = if t.starts_with('/') {
                        t.clone()
                    } else {
                        words::norm_path(&format!("{rel}/{t}"))
                    };
                }
                continue;
            }
            if e.name == "git" {
                self.judge_git_config(e, &rel, acc, opts);
                self.judge_git_hooks(e, a, &rel, acc, opts);
                continue;
            }
            if matches!(e.name.as_str(), "make" | "gmake") {
                self.judge_makefile(e, &rel, acc, opts);
                continue;
            }
            if e.name == "xargs" {
                self.judge_xargs_input(e, a, &rel, acc, opts);
                continue;
            }
            let dir = e
                .cwd
                .as_deref()
                .filter(|c| c.starts_with('/'))
                .unwrap_or(&rel)
                .to_string();
            let modified = acc.modified.clone();
            let reader = |p: &str| -> Option<String> {
                match modified.iter().find(|m| m.path == p) {
                    Some(m) => m.content.clone(),
                    None => read_small(p),
                }
            };
            let written: Vec<String> = modified.iter().map(|m| m.path.clone()).collect();
            if let Some(plan) = runners::plan(e, &dir, &reader, &written) {
                self.judge_plan(e, &plan, &reader, acc, opts);
            }
            for s in scripts_of(e, &rel) {
                match s {
                    Script::Unseen(why) => {
                        if let Some(r) = self.rule("script-unseen")
                            && !self.exempted(r)
                        {
                            acc.push(Some(r), &why, &e.argv);
                        }
                    }
                    Script::File(path, shown) => {
                        self.judge_script_file(e, a, &path, &shown, ran_before, acc, opts);
                    }
                }
            }
        }
    }

    /// The project files a build or test runner executes
    /// ([`runners::plan`]): shell lines analysed, code judged by the
    /// commands it spawns (build-time code must be plain in known-safe), a
    /// project file the same command changed with content not known asks.
    fn judge_plan(
        &self,
        e: &analyze::Exec,
        plan: &runners::Plan,
        read: &dyn Fn(&str) -> Option<String>,
        acc: &mut Acc,
        opts: &CheckOptions,
    ) {
        let Some(rule) = self
            .rule("runs-workspace-code")
            .filter(|r| !self.exempted(r))
        else {
            return;
        };
        let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
        let changed: Vec<Modified> = acc
            .modified
            .iter()
            .filter(|m| {
                !m.single
                    && m.content.is_none()
                    && plan
                        .watch
                        .iter()
                        .any(|w| runners::name_matches(w, &name(&m.path)))
            })
            .cloned()
            .collect();
        for m in changed.iter().take(4) {
            acc.push(
                Some(rule),
                &format!(
                    "{} runs {}, changed in this command with content not known",
                    e.name, m.path
                ),
                &e.argv,
            );
        }
        acc.script_depth += 1;
        for r in plan.runs.iter().take(128) {
            match r {
                runners::Run::Shell { line, .. } => {
                    if acc.script_depth < 3 {
                        self.check_text(line, acc, false, opts);
                    }
                }
                runners::Run::Code { file, lang, build } => {
                    let Some(text) = read(file) else { continue };
                    for sh in analyze::shell_strings_in_code(lang, &text) {
                        self.check_text(&sh, acc, false, opts);
                    }
                    for w in runners::spawned_in_code(lang, &text) {
                        self.check_text(&words::display_argv(&w), acc, false, opts);
                    }
                    let plain = if matches!(*lang, "rust" | "go") {
                        runners::rust_go_plain(&text)
                    } else {
                        effects::inline_code_is_plain(&text)
                    };
                    if *build && !plain && self.posture == Some(Posture::KnownSafe) {
                        acc.push(
                            Some(rule),
                            &format!(
                                "{} runs {file}: build-time code that spawns, deletes, opens sockets or loads code",
                                e.name
                            ),
                            &e.argv,
                        );
                    }
                }
                runners::Run::Risky { file, why } => {
                    acc.push(
                        Some(rule),
                        &format!("{} runs {file}: {why}", e.name),
                        &e.argv,
                    );
                }
                runners::Run::Unseen { why } => {
                    if self.posture == Some(Posture::KnownSafe) {
                        acc.push(Some(rule), &format!("{}: {why}", e.name), &e.argv);
                    }
                }
            }
        }
        acc.script_depth -= 1;
    }

    /// `xargs [-a FILE] sh -c` (no script after `-c`, or `{}`): the lines
    /// xargs reads are the scripts. Read from a file (or the text this
    /// command wrote to it) they are judged; from a pipe they are unseen.
    fn judge_xargs_input(
        &self,
        e: &analyze::Exec,
        a: &analyze::Analysis,
        dir: &str,
        acc: &mut Acc,
        opts: &CheckOptions,
    ) {
        let argv = &e.argv;
        let mut i = 1;
        let mut file: Option<String> = None;
        while i < argv.len() {
            let w = argv[i].as_str();
            if matches!(w, "-a" | "--arg-file") {
                file = argv.get(i + 1).cloned();
                i += 2;
                continue;
            }
            if let Some(f) = w.strip_prefix("--arg-file=") {
                file = Some(f.to_string());
            } else if matches!(w, "-I" | "-L" | "-n" | "-P" | "-s" | "-d" | "-E" | "-i")
                && w.len() == 2
            {
                i += 2;
                continue;
            } else if !w.starts_with('-') {
                break;
            }
            i += 1;
        }
        let inner = &argv[i.min(argv.len())..];
        let Some(prog) = inner.first() else { return };
        let pname = analyze::cmd_name(prog);
        let code_flag = |f: &str| {
            if analyze::is_shell(&pname) {
                f.starts_with('-') && !f.starts_with("--") && f.contains('c')
            } else if analyze::is_interpreter(&pname) {
                matches!(f, "-c" | "-e" | "-E" | "--eval")
            } else {
                false
            }
        };
        let Some(ci) = inner.iter().position(|f| code_flag(f)) else {
            return;
        };
        let script = inner.get(ci + 1);
        if script.is_some_and(|s| !s.contains("{}") && !s.contains(analyze::DYN)) {
            return;
        }
        let file = file.or_else(|| {
            e.redirs
                .iter()
                .rev()
                .find(|r| r.op == parse::RedirOp::In && r.fd.is_none_or(|f| f == 0))
                .map(|r| r.target.clone())
        });
        let text = file.as_ref().and_then(|f| {
            let n = words::norm_path(f);
            a.written
                .iter()
                .rev()
                .find(|(w, _)| *w == n)
                .map(|(_, c)| c.clone())
                .or_else(|| {
                    let p = if f.starts_with('/') {
                        f.clone()
                    } else {
                        format!("{dir}/{f}")
                    };
                    std::fs::metadata(&p)
                        .ok()
                        .filter(|m| m.is_file() && m.len() <= 256 * 1024)
                        .and_then(|_| std::fs::read_to_string(&p).ok())
                })
        });
        let Some(text) = text else {
            if let Some(r) = self.rule("script-unseen")
                && !self.exempted(r)
            {
                acc.push(
                    Some(r),
                    &format!("the commands xargs reads for {prog}"),
                    &e.argv,
                );
            }
            return;
        };
        acc.script_depth += 1;
        for line in text.lines().take(256) {
            let unquoted: String = line.chars().filter(|c| !matches!(c, '\'' | '"')).collect();
            if analyze::is_shell(&pname) {
                self.check_text(line, acc, false, opts);
                self.check_text(&unquoted, acc, false, opts);
            } else {
                for sh in analyze::shell_strings_in_code(&pname, &unquoted) {
                    self.check_text(&sh, acc, false, opts);
                }
            }
        }
        acc.script_depth -= 1;
    }

    /// One script file an exec runs, read now and judged by its content.
    #[allow(clippy::too_many_arguments)]
    fn judge_script_file(
        &self,
        e: &analyze::Exec,
        a: &analyze::Analysis,
        path: &str,
        shown: &str,
        ran_before: bool,
        acc: &mut Acc,
        opts: &CheckOptions,
    ) {
        let path = path.to_string();
        let shown = shown.to_string();
        {
            let sed = matches!(e.name.as_str(), "sed" | "gsed");
            let by_path = !(analyze::is_shell(&e.name)
                || analyze::is_interpreter(&e.name)
                || sed
                || matches!(e.name.as_str(), "source" | "."));
            // written by this command line: a single literal write was
            // analysed when written (as shell); literal writes and appends
            // are judged joined; any other write leaves it unseen
            let npath = words::norm_path(&path);
            let modified = acc.modified.iter().find(|m| m.path == npath).cloned();
            if let Some(m) = &modified
                && m.content.is_none()
            {
                if let Some(r) = self.rule("script-unseen")
                    && !self.exempted(r)
                {
                    acc.push(
                        Some(r),
                        &format!(
                            "{shown} ({path}), changed in this command with content not known"
                        ),
                        &e.argv,
                    );
                }
                return;
            }
            let literal = modified.as_ref().and_then(|m| m.content.clone());
            let single = modified.as_ref().is_some_and(|m| m.single);
            let shellish =
                analyze::is_shell(&e.name) || matches!(e.name.as_str(), "source" | ".") || by_path;
            if literal.is_none()
                && a.written.iter().any(|(w, _)| {
                    *w == words::norm_path(&shown) || path.ends_with(w.trim_start_matches("./"))
                })
            {
                return;
            }
            // a single literal write run directly as shell was analysed
            // when written; sourced or imported by another script, or a
            // shebang, it is judged here
            if single
                && shellish
                && a.written
                    .iter()
                    .any(|(w, _)| path.ends_with(w.trim_start_matches("./")))
                && literal.as_deref().is_some_and(|t| !t.starts_with("#!"))
            {
                return;
            }
            // a program run by its path: a missing file runs nothing, a
            // compiled binary is judged like any program
            if by_path && literal.is_none() {
                let head = std::fs::File::open(&path).ok().map(|mut f| {
                    use std::io::Read;
                    let mut b = [0u8; 4];
                    let n = f.read(&mut b).unwrap_or(0);
                    b[..n].to_vec()
                });
                let binary = |b: &[u8]| {
                    b.starts_with(b"\x7fELF")
                        || b.starts_with(b"MZ")
                        || b.starts_with(&[0xcf, 0xfa, 0xed, 0xfe])
                        || b.starts_with(&[0xca, 0xfe, 0xba, 0xbe])
                };
                if head.as_deref().is_none_or(binary) {
                    return;
                }
            }
            let text = literal.or_else(|| read_small(&path));
            let Some(text) = text else {
                // A script that does not exist runs nothing: unless an
                // earlier program of this command line could make it (and
                // writes by this command were judged above), there is
                // nothing to ask about. A virtual environment's activate
                // script is the usual exception (`python3 -m venv v &&
                // . v/bin/activate`): its maker writes a fixed script.
                let missing = std::fs::symlink_metadata(&path)
                    .is_err_and(|err| err.kind() == std::io::ErrorKind::NotFound);
                let activate = std::path::Path::new(&path)
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("activate"))
                    && path.contains("/bin/");
                if missing && (!ran_before || activate) {
                    return;
                }
                if let Some(r) = self.rule("script-unseen")
                    && !self.exempted(r)
                {
                    acc.push(Some(r), &format!("{shown} ({path})"), &e.argv);
                }
                return;
            };
            acc.script_depth += 1;
            let shebang = text.lines().next().unwrap_or("").to_string();
            let lang = if analyze::is_shell(&e.name) || matches!(e.name.as_str(), "source" | ".") {
                "sh".to_string()
            } else if analyze::is_interpreter(&e.name) {
                e.name.clone()
            } else if by_path && shebang.starts_with("#!") {
                // the kernel runs `interp [one-arg] FILE ARGS` (env -S
                // splits its argument like a shell): a plain shell or
                // interpreter reads the file as its language, anything
                // else is judged as the command it is
                let v = shebang_argv(&shebang);
                let simple = v.len() == 1
                    && (analyze::is_shell(&analyze::cmd_name(&v[0]))
                        || analyze::is_interpreter(&analyze::cmd_name(&v[0])));
                if !simple {
                    let mut cmd = v;
                    // a system interpreter by its name (so it is not taken
                    // for a script run by its path)
                    if ["/usr/", "/bin/", "/sbin/"]
                        .iter()
                        .any(|d| cmd[0].starts_with(d))
                    {
                        cmd[0] = analyze::cmd_name(&cmd[0]);
                    }
                    cmd.push(path.clone());
                    cmd.extend(e.argv.iter().skip(1).cloned());
                    self.check_text(&words::display_argv(&cmd), acc, false, opts);
                    acc.script_depth -= 1;
                    return;
                }
                analyze::cmd_name(&v[0])
            } else {
                "sh".to_string()
            };
            if sed {
                // a sed script file: judged as the same script given inline
                let quoted = format!("'{}'", text.replace('\'', "'\\''"));
                self.check_text(&format!("sed -e {quoted} /dev/null"), acc, false, opts);
            } else if analyze::is_shell(&lang) {
                self.check_text(&text, acc, false, opts);
            } else {
                if lang.starts_with("python") && acc.script_depth < 3 {
                    // the workspace modules it imports run too
                    let dir = path.rsplit_once('/').map_or(".", |x| x.0);
                    for m in python_local_imports(&text, dir) {
                        if let Script::File(p, sh) = m
                            && p != path
                        {
                            self.judge_script_file(e, a, &p, &sh, ran_before, acc, opts);
                        }
                    }
                }
                if matches!(lang.as_str(), "node" | "nodejs" | "bun" | "deno")
                    && acc.script_depth < 3
                {
                    // the workspace modules it requires run too
                    let dir = path.rsplit_once('/').map_or(".", |x| x.0).to_string();
                    for m in node_local_requires(&text, &dir) {
                        if let Script::File(p, sh) = m
                            && p != path
                        {
                            self.judge_script_file(e, a, &p, &sh, ran_before, acc, opts);
                        }
                    }
                }
                for sh in analyze::shell_strings_in_code(&lang, &text) {
                    self.check_text(&sh, acc, false, opts);
                }
                // Code that reads another process's environment or memory
                // itself (no shell command to judge): named in its text.
                static PROC_READ: once_cell::sync::Lazy<regex::Regex> =
                    once_cell::sync::Lazy::new(|| {
                        regex::Regex::new(r#"/proc/[^\s'"]*/(environ|mem)\b"#)
                            .expect("proc read regex")
                    });
                let reads_process = PROC_READ.is_match(&text)
                    || text.contains("process_vm_readv")
                    || text.contains("PTRACE_ATTACH")
                    || text.contains("PTRACE_SEIZE");
                if reads_process
                    && let Some(r) = self.rule("process-inspect")
                    && !self.exempted(r)
                {
                    acc.push(Some(r), &format!("{shown} ({path})"), &e.argv);
                }
            }
            acc.script_depth -= 1;
        }
    }

    /// The recipes `make` would run for the requested targets (the first
    /// target when none is named) and their prerequisites, from the
    /// Makefile in the working directory (`-C DIR`, `-f FILE`): each recipe
    /// line is judged as the shell command it is. Make variables become an
    /// inert word; a missing or unreadable makefile asks.
    fn judge_makefile(&self, e: &analyze::Exec, dir: &str, acc: &mut Acc, opts: &CheckOptions) {
        let a = &e.argv;
        let mut base = dir.to_string();
        let mut file: Option<String> = None;
        let mut targets: Vec<String> = Vec::new();
        let mut i = 1;
        while i < a.len() {
            let w = a[i].as_str();
            match w {
                "-C" | "--directory" => {
                    if let Some(d) = a.get(i + 1) {
                        base = if d.starts_with('/') {
                            d.clone()
                        } else {
                            format!("{base}/{d}")
                        };
                    }
                    i += 2;
                    continue;
                }
                "-f" | "--file" | "--makefile" => {
                    file = a.get(i + 1).cloned();
                    i += 2;
                    continue;
                }
                "-j" | "-l" | "-o" | "-W" | "-I" | "--eval" | "-E" => {
                    i += 2;
                    continue;
                }
                _ => {}
            }
            if !w.starts_with('-') && !w.contains('=') {
                targets.push(w.to_string());
            }
            i += 1;
        }
        if file
            .as_deref()
            .is_some_and(|f| f == "-" || f.starts_with("/dev/"))
        {
            return; // the stdin makefile is judged by the knowledge base
        }
        let path = match &file {
            Some(f) if f.starts_with('/') => f.clone(),
            Some(f) => format!("{base}/{f}"),
            None => ["GNUmakefile", "makefile", "Makefile"]
                .iter()
                .map(|n| format!("{base}/{n}"))
                .find(|p| std::path::Path::new(p).is_file())
                .unwrap_or_else(|| format!("{base}/Makefile")),
        };
        let text = std::fs::metadata(&path)
            .ok()
            .filter(|m| m.is_file() && m.len() <= 256 * 1024)
            .and_then(|_| std::fs::read_to_string(&path).ok());
        let Some(text) = text else {
            if let Some(r) = self.rule("script-unseen")
                && !self.exempted(r)
            {
                acc.push(Some(r), &format!("make: {path}"), &e.argv);
            }
            return;
        };
        // rules: target -> (prerequisites, recipe lines)
        let mut rules: Vec<(Vec<String>, Vec<String>, Vec<String>)> = Vec::new();
        for line in text.lines() {
            if let Some(r) = line.strip_prefix('\t') {
                if let Some(last) = rules.last_mut() {
                    last.2.push(r.to_string());
                }
                continue;
            }
            let t = line.trim_end();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let Some((head, rest)) = t.split_once(':') else {
                rules.push((Vec::new(), Vec::new(), Vec::new()));
                continue;
            };
            if rest.starts_with('=')
                || head.contains('=')
                || head.starts_with('.')
                    && !head.contains(' ')
                    && head.chars().any(|c| c.is_ascii_uppercase())
            {
                rules.push((Vec::new(), Vec::new(), Vec::new()));
                continue;
            }
            let (deps, inline) = match rest.split_once(';') {
                Some((d, r)) => (d, Some(r.trim().to_string())),
                None => (rest, None),
            };
            rules.push((
                head.split_whitespace().map(str::to_string).collect(),
                deps.split_whitespace().map(str::to_string).collect(),
                inline.into_iter().collect(),
            ));
        }
        if targets.is_empty()
            && let Some(first) = rules
                .iter()
                .find_map(|r| r.0.first().filter(|t| !t.contains('%')))
        {
            targets.push(first.clone());
        }
        let mut seen: Vec<String> = Vec::new();
        let mut lines: Vec<String> = Vec::new();
        while let Some(t) = targets.pop() {
            if seen.contains(&t) || seen.len() >= 64 {
                continue;
            }
            seen.push(t.clone());
            for r in rules.iter().filter(|r| r.0.contains(&t)) {
                targets.extend(r.1.iter().cloned());
                lines.extend(r.2.iter().cloned());
            }
        }
        acc.script_depth += 1;
        for l in lines.iter().take(256) {
            let cmd = make_recipe_to_shell(l);
            self.check_text(&cmd, acc, false, opts);
        }
        acc.script_depth -= 1;
    }

    /// The repository's own git config (`.git/config` of the working
    /// directory): an alias this command calls (`git st` with `alias.st =
    /// !cmd`) and keys that run programs for every command (`core.pager`,
    /// `core.fsmonitor`, `core.sshCommand`, `credential.helper`, ...) are
    /// judged by their value, so `git config alias.st '!cmd'` followed by a
    /// separate `git st` is seen.
    fn judge_git_config(&self, e: &analyze::Exec, dir: &str, acc: &mut Acc, opts: &CheckOptions) {
        let sub = rules::git_sub(&e.argv).map(|(_, s)| s.to_string());
        let cfg = e
            .argv
            .windows(2)
            .find(|w| w[0] == "-C")
            .map(|w| {
                if w[1].starts_with('/') {
                    w[1].clone()
                } else {
                    format!("{dir}/{}", w[1])
                }
            })
            .unwrap_or_else(|| dir.to_string());
        let path = format!("{cfg}/.git/config");
        let Some(text) = std::fs::metadata(&path)
            .ok()
            .filter(|m| m.is_file() && m.len() <= 256 * 1024)
            .and_then(|_| std::fs::read_to_string(&path).ok())
        else {
            return;
        };
        let mut section = String::new();
        acc.script_depth += 1;
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with('#') || t.starts_with(';') || t.is_empty() {
                continue;
            }
            if let Some(h) = t.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
                section = match h.split_once(' ') {
                    Some((a, b)) => format!("{}.{}", a.trim(), b.trim().trim_matches('"')),
                    None => h.trim().to_string(),
                }
                .to_ascii_lowercase();
                continue;
            }
            let Some((k, v)) = t.split_once('=') else {
                continue;
            };
            let key = format!("{section}.{}", k.trim().to_ascii_lowercase());
            let v = v.trim().trim_matches('"').to_string();
            let Some(run) = knowledge::git_code_key(&key, &v) else {
                continue;
            };
            // an alias only runs when it is the command's subcommand
            if let Some(name) = key.strip_prefix("alias.")
                && sub.as_deref() != Some(name)
            {
                continue;
            }
            // a plain tool name (`pager = less`, `helper = store`) is judged
            // by the analysis below; a path, a shell line or an opaque key
            // (hooksPath, include.path) asks
            let opaque = run != knowledge::Run::Shell
                || v.starts_with('!')
                || v.contains(['/', ';', '|', '&', '$', '`', '>', '<']);
            if opaque
                && let Some(r) = self.rule("code-config")
                && !self.exempted(r)
            {
                acc.push_why(
                    Some(r),
                    Some("the repository's git config runs a program for this command"),
                    &format!("{key} = {v} ({path})"),
                    &e.argv,
                    None,
                );
            }
            if run == knowledge::Run::Shell {
                self.check_text(v.trim_start_matches('!'), acc, false, opts);
            }
        }
        acc.script_depth -= 1;
    }

    /// Git's hooks and the files this very command line writes into a
    /// `.git` directory before running git: the hooks a subcommand runs
    /// (every non-sample file of `.git/hooks`, for subcommands that make
    /// commits, move refs or check out) are judged as the scripts they
    /// are; a config or hook written earlier in the same command asks.
    fn judge_git_hooks(
        &self,
        e: &analyze::Exec,
        a: &analyze::Analysis,
        dir: &str,
        acc: &mut Acc,
        opts: &CheckOptions,
    ) {
        let me = a
            .execs
            .iter()
            .position(|x| std::ptr::eq(x, e))
            .unwrap_or(a.execs.len());
        let wrote_git = a.execs[..me].iter().find_map(|x| {
            rules::write_targets(x).into_iter().find_map(|(t, _)| {
                let n = words::norm_path(&t);
                (n.contains("/.git/")
                    || n.starts_with(".git/")
                    || n.ends_with("/.git")
                    || n == ".git")
                    .then_some(t)
            })
        });
        if let Some(t) = wrote_git
            && let Some(r) = self.rule("code-config")
            && !self.exempted(r)
        {
            acc.push_why(
                Some(r),
                Some("this command writes git's config or hooks, then runs git"),
                &format!("{t} then {}", rules::display_exec(e)),
                &e.argv,
                None,
            );
        }
        let Some((_, sub)) = rules::git_sub(&e.argv) else {
            return;
        };
        if !matches!(
            sub,
            "commit"
                | "merge"
                | "pull"
                | "push"
                | "rebase"
                | "am"
                | "checkout"
                | "switch"
                | "cherry-pick"
                | "revert"
                | "reset"
                | "gc"
                | "fetch"
                | "branch"
                | "tag"
                | "update-ref"
                | "stash"
                | "worktree"
                | "clone"
                | "send-email"
                | "receive-pack"
                | "maintenance"
                | "restore"
        ) {
            return;
        }
        let repo = e
            .argv
            .windows(2)
            .find(|w| w[0] == "-C")
            .map(|w| {
                if w[1].starts_with('/') {
                    w[1].clone()
                } else {
                    format!("{dir}/{}", w[1])
                }
            })
            .unwrap_or_else(|| dir.to_string());
        let hooks = format!("{repo}/.git/hooks");
        let Ok(rd) = std::fs::read_dir(&hooks) else {
            return;
        };
        let mut names: Vec<String> = rd
            .filter_map(|x| x.ok())
            .filter_map(|x| x.file_name().into_string().ok())
            .filter(|n| !n.ends_with(".sample") && !n.starts_with('.'))
            .collect();
        names.sort();
        for n in names.iter().take(32) {
            let p = format!("{hooks}/{n}");
            self.judge_script_file(e, a, &p, &format!(".git/hooks/{n}"), false, acc, opts);
        }
    }

    /// In the sandboxed posture, why the sandbox contains an `ask` reason
    /// that the per-rule sandbox judgement did not contain.
    fn sandboxed_posture(&self, facts: &SandboxFacts, rule: &str, tier: Verdict) -> Option<String> {
        if self.posture != Some(Posture::Sandboxed) || tier != Verdict::Ask {
            return None;
        }
        posture::sandboxed_contains(rule, facts.network)
    }

    fn push_windows(&self, w: &winshell::WinAnalysis, acc: &mut Acc) {
        for f in &w.findings {
            if let Some(r) = self.rule(f.rule)
                && !self.exempted(r)
            {
                acc.push_why(Some(r), Some(f.why), &f.command, &[], None);
            }
        }
    }

    fn check_windows(&self, text: &str, d: winshell::Dialect, acc: &mut Acc, primary: bool) {
        let w = winshell::analyze(text, d);
        if primary {
            acc.normalized.push(redact_secrets(text));
            for c in &w.commands {
                if acc.commands.len() < 256 && !acc.commands.contains(c) {
                    acc.commands.push(redact_argv(c));
                }
            }
        }
        self.push_windows(&w, acc);
    }

    fn check_text(&self, text: &str, acc: &mut Acc, primary: bool, opts: &CheckOptions) {
        let sandbox = opts.sandbox.as_ref();
        let a = analyze::analyze(text);
        // values assigned to secret-looking variables are scrubbed wherever
        // expansion copied them (`TOKEN=abc; curl -H "X: $TOKEN"`)
        for (name, value) in &a.assigned {
            if value.chars().count() >= 4
                && !value.contains(analyze::DYN)
                && redact::is_secret_name(name)
                && !acc.secrets.contains(value)
            {
                acc.secrets.push(value.clone());
                acc.redacted.clear();
            }
        }
        if primary {
            acc.normalized.push(redact_secrets(text));
            for p in &a.payloads {
                if acc.normalized.len() < 32 {
                    acc.normalized
                        .push(redact_secrets(&p.replace(analyze::DYN, "$?")));
                }
            }
        }
        let ctx = ctx::RuleCtx {
            analysis: &a,
            targets: rules::through_links(&a, a.execs.iter().map(rules::write_targets).collect()),
            single: rules::analysis_is_single(&a) && !text.contains(['\n', ';', '&', '|']),
            posture: self.posture,
            workspace: self.workspace.as_deref(),
            virtualenv: self.virtualenv,
            text,
        };
        for (i, e) in a.execs.iter().enumerate() {
            // the redacted argv, computed once for the report and every reason
            let mut red: Option<Vec<String>> = None;
            if !e.argv.is_empty() && acc.commands.len() < 256 {
                let argv = acc.scrub_argv(redact_argv(&e.argv));
                red = Some(argv.clone());
                let dup = if acc.commands.len() < 16 {
                    acc.commands.contains(&argv)
                } else {
                    !acc.seen.insert(argv.clone())
                };
                if !dup {
                    if acc.commands.len() == 15 {
                        acc.seen.extend(acc.commands.iter().cloned());
                        acc.seen.insert(argv.clone());
                    }
                    acc.commands.push(argv);
                }
            }
            let mut display: Option<String> = None;
            let mut pattern_text: Option<String> = None;
            for r in &self.rules {
                let mut why: Option<&'static str> = None;
                let mut described: Option<String> = None;
                let hit = match &r.matcher {
                    Matcher::Describe(f) => {
                        described = f(&ctx, i, e);
                        described.is_some()
                    }
                    Matcher::Exec(f) => f(&ctx, i, e),
                    Matcher::Explain(f) => {
                        why = f(&ctx, i, e);
                        why.is_some()
                    }
                    Matcher::Finding => false,
                    Matcher::ArgvPrefix(p) => rules::prefix_matches(p, e),
                    Matcher::Pattern(re) => {
                        let text = pattern_text.get_or_insert_with(|| rules::pattern_text(e));
                        !text.is_empty() && re.is_match(text)
                    }
                };
                if hit && !self.exempted(r) {
                    let d = display.get_or_insert_with(|| rules::display_exec(e));
                    let why = described.as_deref().or(why);
                    // An everyday effect that acts only over the network
                    // (an upload, a cloud change) is contained by a sandbox
                    // without a network, and by nothing else.
                    let over_network = why.is_some_and(effects::acts_over_network);
                    let contained = sandbox.and_then(|s| {
                        if over_network {
                            return sandbox::without_network(s);
                        }
                        sandbox::contained(s, &r.key, r.tier, e, &ctx.targets[i], &a.execs)
                            .or_else(|| self.sandboxed_posture(s, &r.key, r.tier))
                    });
                    let red = red.get_or_insert_with(|| acc.scrub_argv(redact_argv(&e.argv)));
                    acc.presumed = e.presumed;
                    acc.push_reason(Some(r), why, d, red, contained);
                    acc.presumed = false;
                }
            }
            // a runner of project code is known-safe only when the files
            // it runs are read (`read_scripts` with a workspace)
            if self.posture == Some(Posture::KnownSafe)
                && (!posture::known_safe(e)
                    || (runners::is_runner(e) && !(self.read_scripts && self.workspace.is_some())))
                && let Some(r) = self.rule("not-known-safe")
                && !self.exempted(r)
            {
                let d = rules::display_exec(e);
                acc.push(Some(r), &d, &e.argv);
            }
            // the script of `powershell -c ...` / `cmd /c ...`
            if matches!(e.name.as_str(), "powershell" | "pwsh" | "cmd") && e.argv.len() > 1 {
                let payload = if e.name == "cmd" {
                    winshell::cmd_payload(&e.argv[1..]).map(|p| (winshell::Dialect::Cmd, p))
                } else {
                    winshell::ps_payload(&e.argv[1..]).map(|p| (winshell::Dialect::PowerShell, p))
                };
                if let Some((d, p)) = payload {
                    self.push_windows(&winshell::analyze(&p, d), acc);
                }
            }
        }
        if self.read_scripts && self.posture.is_some() && acc.script_depth < 2 {
            self.judge_scripts(&a, acc, opts);
        }
        for f in &a.findings {
            let (cmd, argv) = match f.exec.and_then(|i| a.execs.get(i)) {
                Some(e) => (rules::display_exec(e), e.argv.clone()),
                None => (f.text.clone(), Vec::new()),
            };
            if self.posture.is_some()
                && matches!(f.rule, "dynamic-payload" | "dynamic-command")
                && rules::safe_eval(text)
            {
                continue;
            }
            if let Some(r) = self.rule(f.rule)
                && !self.exempted(r)
            {
                let contained = sandbox.and_then(|s| self.sandboxed_posture(s, &r.key, r.tier));
                acc.presumed = f
                    .exec
                    .and_then(|i| a.execs.get(i))
                    .is_some_and(|e| e.presumed);
                acc.push_why(Some(r), None, &cmd, &argv, contained);
                acc.presumed = false;
            }
        }
        // PowerShell / cmd syntax typed at a POSIX prompt: read it as such too
        let windows = winshell::detect(text);
        if let Some(d) = windows {
            self.push_windows(&winshell::analyze(text, d), acc);
        }
        if let Some(err) = &a.error {
            if windows.is_none()
                && let Some(r) = self.rule("parse-error")
                && !self.exempted(r)
            {
                acc.push(Some(r), &format!("{err}: {}", truncate(text, 200)), &[]);
            }
            // the floor is for syntax the parser could not follow, not for
            // inputs that merely exceeded a size or depth budget
            let budget = err.contains("too complex") || err.contains("too deep");
            if !budget {
                if rules::floor_match(text) {
                    acc.push(self.rule("floor"), truncate(text, 200), &[]);
                }
                for p in &a.payloads {
                    if rules::floor_match(p) {
                        acc.push(self.rule("floor"), truncate(p, 200), &[]);
                    }
                }
            }
        }
    }
}

/// A make recipe line as the shell sees it: `@`/`-`/`+` prefixes dropped,
/// `$$` is `$`, make variables and functions become the inert word
/// `MAKEVAR` (their value is not known here).
fn make_recipe_to_shell(line: &str) -> String {
    let l = line.trim_start().trim_start_matches(['@', '-', '+']);
    let b = l.as_bytes();
    let mut out = String::with_capacity(l.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' {
            match b.get(i + 1) {
                Some(b'$') => {
                    out.push('$');
                    i += 2;
                    continue;
                }
                Some(&open @ (b'(' | b'{')) => {
                    let close = if open == b'(' { b')' } else { b'}' };
                    let mut depth = 0;
                    let mut j = i + 1;
                    while j < b.len() {
                        if b[j] == open {
                            depth += 1;
                        } else if b[j] == close {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        j += 1;
                    }
                    out.push_str("MAKEVAR");
                    i = j + 1;
                    continue;
                }
                Some(c)
                    if c.is_ascii_alphanumeric()
                        || matches!(c, b'@' | b'<' | b'^' | b'*' | b'?') =>
                {
                    out.push_str("MAKEVAR");
                    i += 2;
                    continue;
                }
                _ => {}
            }
        }
        let ch = l[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// What an exec runs from files: a script to read (absolute path to read,
/// path as written), or a script it runs whose content cannot be seen.
#[derive(Debug, PartialEq, Eq)]
enum Script {
    File(String, String),
    Unseen(String),
}

/// Where an interpreter's main program comes from.
enum Src {
    Operand(String),
    Stdin,
    Nothing,
}

/// The scripts an exec runs, failing closed: every way a shell or an
/// interpreter can be handed a program (an operand after any options, a
/// script on stdin from `< FILE`, a glob, `-m MODULE` of the workspace,
/// preloaded files `node -r ./x`, `ruby -r ./x`, `awk -f`, `sed -f`,
/// `php -f`) yields the file to read, and a program whose text is not
/// there to read yields `Unseen`. Inline code (`-c`, `-e`) is the
/// analyser's.
fn scripts_of(e: &analyze::Exec, ws: &str) -> Vec<Script> {
    let Some(first) = e.argv.first() else {
        return Vec::new();
    };
    let base = e
        .cwd
        .as_deref()
        .filter(|c| c.starts_with('/'))
        .unwrap_or(ws)
        .to_string();
    let abs = |p: &str| -> Option<String> {
        if let Some(rest) = p.strip_prefix("~/") {
            Some(format!("{}/{rest}", std::env::var("HOME").ok()?))
        } else if p.starts_with('/') {
            Some(p.to_string())
        } else {
            Some(format!("{base}/{p}"))
        }
    };
    let name = e.name.as_str();
    let shell = analyze::is_shell(name) || matches!(name, "source" | ".");
    let interp = analyze::is_interpreter(name);
    if first.contains('/') && !shell && !interp {
        // a program run by its path: only scripts outside the system dirs
        if ["/usr/", "/bin/", "/sbin/", "/opt/", "/snap/"]
            .iter()
            .any(|d| first.starts_with(d))
            || first.contains(analyze::DYN)
        {
            return Vec::new();
        }
        return abs(first)
            .map(|a| vec![Script::File(a, first.clone())])
            .unwrap_or_default();
    }
    let mut out = Vec::new();
    let lang = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let a = &e.argv;
    // value of a short option: the rest of its word or the next word
    let src = if matches!(name, "source" | ".") {
        match a.get(1) {
            Some(w) => Src::Operand(w.clone()),
            None => Src::Nothing,
        }
    } else if shell {
        let mut i = 1;
        let mut stdin = false;
        let mut src = None;
        while i < a.len() {
            let w = a[i].as_str();
            if w == "--" || w == "-" {
                i += 1;
                break;
            }
            if w.starts_with("--") {
                match w {
                    "--rcfile" | "--init-file" => {
                        if let Some(f) = a.get(i + 1) {
                            out.extend(abs(f).map(|p| Script::File(p, f.clone())));
                        }
                        i += 2;
                    }
                    "--version" | "--help" => {
                        src = Some(Src::Nothing);
                        break;
                    }
                    _ => i += 1,
                }
                continue;
            }
            if (w.starts_with('-') || w.starts_with('+')) && w.len() > 1 {
                let f = &w[1..];
                if f.contains('c') {
                    src = Some(Src::Nothing);
                    break;
                }
                stdin |= f.contains('s');
                i += if f.contains(['o', 'O']) { 2 } else { 1 };
                continue;
            }
            break;
        }
        src.unwrap_or_else(|| match a.get(i) {
            Some(w) if !stdin => Src::Operand(w.clone()),
            _ => Src::Stdin,
        })
    } else if lang.starts_with("python") || lang == "py" || lang == "pypy" {
        let mut i = 1;
        let mut src = None;
        'args: while i < a.len() {
            let w = a[i].as_str();
            if w == "-" {
                src = Some(Src::Stdin);
                break;
            }
            if w == "--" {
                src = Some(a.get(i + 1).map_or(Src::Stdin, |s| Src::Operand(s.clone())));
                break;
            }
            if let Some(long) = w.strip_prefix("--") {
                if matches!(long, "version" | "help") {
                    src = Some(Src::Nothing);
                    break;
                }
                i += if long == "check-hash-based-pycs" {
                    2
                } else {
                    1
                };
                continue;
            }
            if let Some(f) = w.strip_prefix('-').filter(|f| !f.is_empty()) {
                for (k, ch) in f.char_indices() {
                    let rest = &f[k + 1..];
                    let val = || {
                        if rest.is_empty() {
                            a.get(i + 1).cloned()
                        } else {
                            Some(rest.to_string())
                        }
                    };
                    match ch {
                        'c' => {
                            // inline code: its local imports are read
                            if let Some(code) = val() {
                                out.extend(python_local_imports(&code, &base));
                            }
                            src = Some(Src::Nothing);
                            break 'args;
                        }
                        'm' => {
                            // a module of the workspace runs its file
                            if let Some(m) = val() {
                                let rel = m.replace('.', "/");
                                for cand in [format!("{rel}.py"), format!("{rel}/__main__.py")] {
                                    if std::path::Path::new(&format!("{base}/{cand}")).is_file() {
                                        out.push(Script::File(format!("{base}/{cand}"), cand));
                                        break;
                                    }
                                }
                            }
                            src = Some(Src::Nothing);
                            break 'args;
                        }
                        'W' | 'X' => {
                            i += if rest.is_empty() { 2 } else { 1 };
                            continue 'args;
                        }
                        'h' | 'V' => {
                            src = Some(Src::Nothing);
                            break 'args;
                        }
                        _ => {}
                    }
                }
                i += 1;
                continue;
            }
            src = Some(Src::Operand(w.to_string()));
            break;
        }
        src.unwrap_or(Src::Stdin)
    } else if matches!(lang, "node" | "nodejs" | "bun") {
        let mut i = 1;
        let mut src = None;
        while i < a.len() {
            let w = a[i].as_str();
            let (opt, inline_val) = match w.split_once('=') {
                Some((o, v)) if w.starts_with("--") => (o, Some(v.to_string())),
                _ => (w, None),
            };
            match opt {
                "-e" | "--eval" | "-p" | "--print" | "-pe" => {
                    src = Some(Src::Nothing);
                    i += if inline_val.is_some() { 1 } else { 2 };
                    continue;
                }
                "-r" | "--require" | "--import" | "--loader" | "--experimental-loader" => {
                    let v = inline_val.or_else(|| a.get(i + 1).cloned());
                    if let Some(v) = v.filter(|v| v.starts_with(['.', '/', '~'])) {
                        out.extend(node_module_file(&v, &abs));
                    }
                    i += if w.contains('=') { 1 } else { 2 };
                    continue;
                }
                "-v" | "--version" | "-h" | "--help" => {
                    src.get_or_insert(Src::Nothing);
                    break;
                }
                "-" => {
                    src.get_or_insert(Src::Stdin);
                    break;
                }
                "--" => {
                    if src.is_none() {
                        src = Some(a.get(i + 1).map_or(Src::Stdin, |s| Src::Operand(s.clone())));
                    }
                    break;
                }
                _ if w.starts_with('-') => i += 1,
                _ => {
                    src.get_or_insert(Src::Operand(w.to_string()));
                    break;
                }
            }
        }
        src.unwrap_or(Src::Stdin)
    } else if matches!(lang, "perl" | "ruby") {
        let mut i = 1;
        let mut src = None;
        'args: while i < a.len() {
            let w = a[i].as_str();
            if w == "-" {
                break;
            }
            if w == "--" {
                src = Some(a.get(i + 1).map_or(Src::Stdin, |s| Src::Operand(s.clone())));
                break;
            }
            if w.starts_with("--") {
                if matches!(w, "--version" | "--help") {
                    src = Some(Src::Nothing);
                    break;
                }
                i += 1;
                continue;
            }
            if let Some(f) = w.strip_prefix('-').filter(|f| !f.is_empty()) {
                for (k, ch) in f.char_indices() {
                    let rest = &f[k + 1..];
                    match ch {
                        'e' | 'E' if lang == "perl" || ch == 'e' => {
                            src = Some(Src::Nothing);
                            i += if rest.is_empty() { 2 } else { 1 };
                            continue 'args;
                        }
                        'v' | 'h' => {
                            src = Some(Src::Nothing);
                            break 'args;
                        }
                        'r' if lang == "ruby" => {
                            let v = if rest.is_empty() {
                                i += 1;
                                a.get(i).cloned()
                            } else {
                                Some(rest.to_string())
                            };
                            if let Some(v) = v.filter(|v| v.starts_with(['.', '/', '~'])) {
                                let f = if v.ends_with(".rb") {
                                    v
                                } else {
                                    format!("{v}.rb")
                                };
                                out.extend(abs(&f).map(|p| Script::File(p, f.clone())));
                            }
                            i += 1;
                            continue 'args;
                        }
                        'I' | 'C' if rest.is_empty() => {
                            i += 2;
                            continue 'args;
                        }
                        'M' | 'm' | 'I' | 'x' | 'i' | 'l' | '0' | 'C' | 'd' | 'D' | 'F' | 'E'
                        | 'K' | 'T' | 'W' => {
                            i += 1;
                            continue 'args;
                        }
                        _ => {}
                    }
                }
                i += 1;
                continue;
            }
            src.get_or_insert(Src::Operand(w.to_string()));
            break;
        }
        src.unwrap_or(Src::Stdin)
    } else if matches!(lang, "awk" | "gawk" | "mawk" | "nawk") {
        // `-f FILE` / `-E FILE` / `--file=FILE`: the program's files
        let mut i = 1;
        while i < a.len() {
            let w = a[i].as_str();
            let f = match w {
                "-f" | "-E" | "--file" | "--exec" => {
                    i += 1;
                    a.get(i).cloned()
                }
                _ => w
                    .strip_prefix("--file=")
                    .or_else(|| w.strip_prefix("--exec="))
                    .map(str::to_string),
            };
            if let Some(f) = f {
                out.push(file_or_unseen(&f, &abs, &base));
            }
            i += 1;
        }
        Src::Nothing
    } else if lang == "php" {
        let mut src = Src::Stdin;
        let mut i = 1;
        while i < a.len() {
            let w = a[i].as_str();
            match w {
                "-r" | "-S" | "-v" | "-h" | "-i" | "-m" | "-l" | "-a" => {
                    src = Src::Nothing;
                    break;
                }
                "-f" => {
                    src = a
                        .get(i + 1)
                        .map_or(Src::Nothing, |f| Src::Operand(f.clone()));
                    break;
                }
                "-c" | "-d" | "-t" | "-z" => i += 2,
                _ if w.starts_with('-') => i += 1,
                _ => {
                    src = Src::Operand(w.to_string());
                    break;
                }
            }
        }
        src
    } else if interp {
        if a[1..].iter().any(|w| {
            w.starts_with('-')
                && !w.starts_with("--")
                && (w.contains('c') || w.contains('e') || w == "-m")
        }) {
            Src::Nothing
        } else {
            rules::script_operand(e).map_or(Src::Nothing, |s| Src::Operand(s.to_string()))
        }
    } else if matches!(name, "sed" | "gsed") {
        for f in knowledge::sed_scripts(a).1 {
            out.push(file_or_unseen(&f, &abs, &base));
        }
        Src::Nothing
    } else {
        Src::Nothing
    };
    let src = match src {
        Src::Operand(w) if w == "-" || w == "/dev/stdin" => Src::Stdin,
        s => s,
    };
    match src {
        Src::Operand(w) => {
            if w.starts_with("/dev/") || w.starts_with("/proc/") {
                // a process substitution or a device: judged by the rules
            } else {
                out.push(file_or_unseen(&w, &abs, &base));
            }
        }
        Src::Stdin => {
            // the script on stdin: a file redirected there is read; a
            // heredoc and a pipe are the analyser's
            if e.stdin_text.is_none()
                && let Some(r) = e
                    .redirs
                    .iter()
                    .rev()
                    .find(|r| r.op == parse::RedirOp::In && r.fd.is_none_or(|f| f == 0))
                && !r.target.starts_with("/dev/fd/")
                && r.target != "/dev/null"
            {
                out.push(file_or_unseen(&r.target, &abs, &base));
            }
        }
        Src::Nothing => {}
    }
    out
}

/// A script word: a literal path to read, a glob expanded in its
/// directory (the first match runs), or `Unseen` when it is computed at
/// run time.
fn file_or_unseen(w: &str, abs: &dyn Fn(&str) -> Option<String>, base: &str) -> Script {
    if w.contains(analyze::DYN) {
        return Script::Unseen(format!(
            "{} (computed at run time)",
            w.replace(analyze::DYN, "$?")
        ));
    }
    if w.contains(['*', '?', '[']) {
        let (dir, pat) = match w.rsplit_once('/') {
            Some((d, p)) => (d.to_string(), p.to_string()),
            None => (String::new(), w.to_string()),
        };
        let dir_abs = if dir.is_empty() {
            Some(base.to_string())
        } else {
            abs(&dir)
        };
        let mut names: Vec<String> = dir_abs
            .as_deref()
            .filter(|d| !d.contains(['*', '?', '[']))
            .and_then(|d| std::fs::read_dir(d).ok())
            .map(|rd| {
                rd.filter_map(|x| x.ok())
                    .filter_map(|x| x.file_name().into_string().ok())
                    .filter(|n| {
                        (pat.starts_with('.') || !n.starts_with('.'))
                            && rules::glob_can_match(&pat, n)
                    })
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        return match (names.first(), dir_abs) {
            (Some(n), Some(d)) => {
                let shown = if dir.is_empty() {
                    n.clone()
                } else {
                    format!("{dir}/{n}")
                };
                Script::File(format!("{d}/{n}"), shown)
            }
            _ => Script::Unseen(format!("{w} (a glob)")),
        };
    }
    match abs(w) {
        Some(p) => Script::File(p, w.to_string()),
        None => Script::Unseen(w.to_string()),
    }
}

/// `node -r ./x`: the file a relative module name loads.
fn node_module_file(v: &str, abs: &dyn Fn(&str) -> Option<String>) -> Option<Script> {
    let p = abs(v)?;
    for (cand, shown) in [
        (p.clone(), v.to_string()),
        (format!("{p}.js"), format!("{v}.js")),
        (format!("{p}.mjs"), format!("{v}.mjs")),
        (format!("{p}.cjs"), format!("{v}.cjs")),
        (format!("{p}/index.js"), format!("{v}/index.js")),
    ] {
        if std::path::Path::new(&cand).is_file() {
            return Some(Script::File(cand, shown));
        }
    }
    Some(Script::File(p, v.to_string()))
}

/// The workspace modules Python code imports (`import helper`, `from
/// pkg.mod import x`, `importlib.import_module("helper")`): their files
/// run too. Only files that exist next to the code are returned.
fn python_local_imports(code: &str, dir: &str) -> Vec<Script> {
    use once_cell::sync::Lazy;
    static IMPORT: Lazy<regex::Regex> = Lazy::new(|| {
        regex::Regex::new(
            r#"(?m)(?:^|;)\s*(?:from\s+([A-Za-z_][\w.]*)\s+import\b|import\s+([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*))|(?:import_module|__import__)\(\s*['"]([\w.]+)['"]"#,
        )
        .expect("python import regex")
    });
    let mut out = Vec::new();
    for c in IMPORT.captures_iter(code) {
        let names: Vec<&str> = [c.get(1), c.get(2), c.get(3)]
            .into_iter()
            .flatten()
            .flat_map(|m| m.as_str().split(','))
            .map(str::trim)
            .collect();
        for n in names {
            let rel = n.replace('.', "/");
            for cand in [format!("{rel}.py"), format!("{rel}/__init__.py")] {
                let p = format!("{dir}/{cand}");
                if std::path::Path::new(&p).is_file()
                    && !out
                        .iter()
                        .any(|s| matches!(s, Script::File(q, _) if *q == p))
                {
                    out.push(Script::File(p, cand));
                    break;
                }
            }
            if out.len() >= 16 {
                return out;
            }
        }
    }
    out
}

/// The argv the kernel builds from a `#!` line (without the script):
/// `#!interp rest` passes `rest` as one argument; `env -S` / `env
/// --split-string` splits it like a shell and drops `env`; `env prog`
/// drops `env`.
fn shebang_argv(line: &str) -> Vec<String> {
    let rest = line.trim_start_matches("#!").trim();
    let (interp, opt) = match rest.find([' ', '\t']) {
        Some(k) => (&rest[..k], rest[k..].trim()),
        None => (rest, ""),
    };
    if analyze::cmd_name(interp) == "env" {
        let split = opt
            .strip_prefix("--split-string")
            .map(|r| r.trim_start_matches('='))
            .or_else(|| opt.strip_prefix("-S"));
        let words: Vec<String> = match split {
            Some(r) => split_words(r.trim()),
            None => opt.split_whitespace().map(str::to_string).collect(),
        };
        if words.is_empty() {
            return vec![interp.to_string()];
        }
        return words;
    }
    let mut v = vec![interp.to_string()];
    if !opt.is_empty() {
        v.push(opt.to_string());
    }
    v
}

/// Shell-like word splitting (quotes and backslashes) of a short text.
fn split_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut q: Option<char> = None;
    let mut it = s.chars();
    while let Some(c) = it.next() {
        match (q, c) {
            (None, '\'' | '"') => {
                q = Some(c);
                any = true;
            }
            (Some(x), c) if c == x => q = None,
            (Some('"') | None, '\\') => {
                if let Some(n) = it.next() {
                    cur.push(n);
                }
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (_, c) => cur.push(c),
        }
        if out.len() > 64 {
            break;
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The workspace modules JavaScript code loads (`require('./x')`, `import
/// .. from './x'`, `import('./x')`): their files run too.
fn node_local_requires(code: &str, dir: &str) -> Vec<Script> {
    use once_cell::sync::Lazy;
    static REQ: Lazy<regex::Regex> = Lazy::new(|| {
        regex::Regex::new(r#"(?:require|import)\s*\(\s*['"](\.{1,2}/[^'"]+)['"]|\bfrom\s+['"](\.{1,2}/[^'"]+)['"]|\bimport\s+['"](\.{1,2}/[^'"]+)['"]"#)
            .expect("node require regex")
    });
    let abs = |p: &str| Some(words::norm_path(&format!("{dir}/{p}")));
    let mut out = Vec::new();
    for c in REQ.captures_iter(code).take(16) {
        let Some(m) = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3)) else {
            continue;
        };
        if let Some(s) = node_module_file(m.as_str(), &abs) {
            out.push(s);
        }
    }
    out
}

/// A project file's text, when it is a regular file of at most 256 KiB.
fn read_small(p: &str) -> Option<String> {
    std::fs::metadata(p)
        .ok()
        .filter(|m| m.is_file() && m.len() <= 256 * 1024)
        .and_then(|_| std::fs::read_to_string(p).ok())
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Redact an argv (one quick check for the whole argv first, word by word:
/// the same as the quick check of the joined argv without building it).
fn redact_argv(argv: &[String]) -> Vec<String> {
    let dynamic = argv.iter().any(|w| w.contains(analyze::DYN));
    let n = argv.len();
    let may = || {
        argv.iter().enumerate().any(|(i, w)| {
            redact::may_contain_secret(w)
                // ` -pX` and ` -u ` span the word boundary in the joined text
                || (i > 0
                    && ((w.len() > 2 && (w.starts_with("-p") || w.starts_with("-P")))
                        || ((w == "-u" || w == "-U") && i + 1 < n)))
        })
    };
    if !dynamic && !may() {
        return argv.to_vec();
    }
    let words: Vec<String> = argv.iter().map(|w| w.replace(analyze::DYN, "$?")).collect();
    redact::redact_argv_words(&words)
}

#[derive(Default)]
struct Acc {
    /// Secret values assigned in the command, scrubbed from the output.
    secrets: Vec<String>,
    /// Redactions already computed in this check (`command` -> redacted):
    /// several rules matching one program redact the same text once.
    redacted: Vec<(String, String)>,
    seen: HashSet<Vec<String>>,
    reasons: Vec<Reason>,
    contained: Vec<Reason>,
    commands: Vec<Vec<String>>,
    normalized: Vec<String>,
    /// The reason being pushed is about a presumed command: capped at ask.
    presumed: bool,
    /// Scripts being judged by content (nesting bound).
    script_depth: u8,
    /// Files the command line being judged writes (absolute path, the
    /// joined literal text when every write was literal, whether it was a
    /// single literal write): a script, module or project file among them
    /// is judged by that text, or asks when its content is not known.
    modified: Vec<Modified>,
}

#[derive(Clone, Debug)]
struct Modified {
    path: String,
    content: Option<String>,
    single: bool,
}

/// The files `a` writes, resolved against `dir` (and relative `cd`s):
/// literal writes and appends joined in order; any other write (`sed -i`,
/// `tee`, `cp`, `npm pkg set`, ...) leaves the content unknown.
fn modified_files(a: &analyze::Analysis, dir: &str) -> Vec<Modified> {
    let mut out: Vec<Modified> = Vec::new();
    let mut lits: Vec<(String, String)> = a.written.clone();
    lits.reverse();
    let mut rel = dir.to_string();
    for e in &a.execs {
        if (e.name == "cd" || e.name == "pushd") && e.cwd.is_none() {
            if let Some(t) = e
                .argv
                .get(1)
                .filter(|t| !t.starts_with('-') && !t.contains(analyze::DYN))
            {
                rel = if t.starts_with('/') {
                    t.clone()
                } else {
                    words::norm_path(&format!("{rel}/{t}"))
                };
            }
            continue;
        }
        let base = e
            .cwd
            .as_deref()
            .filter(|c| c.starts_with('/'))
            .unwrap_or(&rel)
            .to_string();
        let literal_writer = e.argv.first().is_some_and(|_| {
            matches!(e.name.as_str(), "echo" | "printf")
                || (e.name == "cat" && e.argv.len() == 1 && e.stdin_text.is_some())
        });
        for (t, kind) in rules::write_targets(e) {
            if matches!(kind, ctx::WriteKind::Delete | ctx::WriteKind::Create)
                || t == "/dev/null"
                || t.contains(analyze::DYN)
            {
                continue;
            }
            let n = words::norm_path(&t);
            let abs = if n.starts_with('/') || n.starts_with('~') {
                n.clone()
            } else {
                words::norm_path(&format!("{base}/{n}"))
            };
            let lit = if literal_writer && let Some(k) = lits.iter().rposition(|(p, _)| *p == n) {
                Some(lits.remove(k).1)
            } else {
                None
            };
            let append = kind == ctx::WriteKind::Append;
            match out.iter_mut().find(|m| m.path == abs) {
                Some(m) => {
                    m.single = false;
                    m.content = match (m.content.take(), lit) {
                        (Some(mut old), Some(new)) if append => {
                            if !old.is_empty() && !old.ends_with('\n') {
                                old.push('\n');
                            }
                            old.push_str(&new);
                            Some(old)
                        }
                        (_, Some(new)) if kind == ctx::WriteKind::Overwrite => Some(new),
                        _ => None,
                    };
                }
                None => out.push(Modified {
                    path: abs,
                    // an append to a file that already exists joins text
                    // not seen here
                    single: lit.is_some() && !append,
                    content: lit.filter(|_| !append),
                }),
            }
            if out.len() >= 64 {
                return out;
            }
        }
    }
    out
}

impl Acc {
    fn scrub(&self, s: String) -> String {
        let mut s = s;
        for v in &self.secrets {
            if s.contains(v.as_str()) {
                s = s.replace(v.as_str(), "***");
            }
        }
        s
    }

    fn scrub_argv(&self, argv: Vec<String>) -> Vec<String> {
        if self.secrets.is_empty() {
            return argv;
        }
        argv.into_iter().map(|w| self.scrub(w)).collect()
    }

    /// `command` with markers shown as `$?`, secrets redacted and assigned
    /// secret values scrubbed (memoised within one check).
    fn redact_command(&mut self, command: &str) -> String {
        if let Some((_, r)) = self.redacted.iter().find(|(c, _)| c == command) {
            return r.clone();
        }
        let shown = if command.contains(analyze::DYN) {
            std::borrow::Cow::Owned(command.replace(analyze::DYN, "$?"))
        } else {
            std::borrow::Cow::Borrowed(command)
        };
        let r = self.scrub(redact_secrets(&shown));
        if self.redacted.len() < 32 {
            self.redacted.push((command.to_string(), r.clone()));
        }
        r
    }

    fn push(&mut self, rule: Option<&Rule>, command: &str, argv: &[String]) {
        self.push_why(rule, None, command, argv, None)
    }

    /// Record a reason; `why` (what this command does) replaces the rule's
    /// generic description when the matcher gave one.
    fn push_why(
        &mut self,
        rule: Option<&Rule>,
        why: Option<&str>,
        command: &str,
        argv: &[String],
        sandbox: Option<String>,
    ) {
        let red = if argv.is_empty() {
            Vec::new()
        } else {
            self.scrub_argv(redact_argv(argv))
        };
        self.push_reason(rule, why, command, &red, sandbox);
    }

    /// [`Acc::push_why`] with the argv already redacted and scrubbed.
    fn push_reason(
        &mut self,
        rule: Option<&Rule>,
        why: Option<&str>,
        command: &str,
        red: &[String],
        sandbox: Option<String>,
    ) {
        let Some(r) = rule else { return };
        if (if sandbox.is_some() {
            &self.contained
        } else {
            &self.reasons
        })
        .len()
            >= 64
        {
            return;
        }
        let command = self.redact_command(command);
        let tier = if self.presumed {
            r.tier.min(Verdict::Ask)
        } else {
            r.tier
        };
        let list = if sandbox.is_some() {
            &mut self.contained
        } else {
            &mut self.reasons
        };
        if let Some(x) = list
            .iter_mut()
            .find(|x| x.rule == r.key && x.command == command)
        {
            // the same finding, seen again for real after a presumption
            x.tier = x.tier.max(tier);
            return;
        }
        let reason = Reason {
            rule: r.key.clone(),
            description: why.map_or_else(|| r.description.clone(), str::to_string),
            tier,
            command,
            pack: r.pack.clone(),
            argv: red.to_vec(),
            sandbox: sandbox.clone(),
        };
        if sandbox.is_some() {
            self.contained.push(reason);
        } else {
            self.reasons.push(reason);
        }
    }

    fn finish(mut self) -> CheckResult {
        if !self.secrets.is_empty() {
            let n = std::mem::take(&mut self.normalized);
            self.normalized = n.into_iter().map(|t| self.scrub(t)).collect();
        }
        // strongest first, stable otherwise
        self.reasons.sort_by_key(|r| std::cmp::Reverse(r.tier));
        let verdict = self
            .reasons
            .iter()
            .map(|r| r.tier)
            .max()
            .unwrap_or(Verdict::Allow);
        CheckResult {
            verdict,
            reasons: self.reasons,
            commands: self.commands,
            normalized: self.normalized,
            contained: self.contained,
        }
    }
}
