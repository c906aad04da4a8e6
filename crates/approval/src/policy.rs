//! Approval policy: pure decision logic on top of a [`CheckResult`], with no
//! host I/O. The runtime wires prompts, reviewer callbacks, timeouts and
//! prompt merging around it:
//!
//! ```text
//! let check = engine.check(cmd);
//! match policy.decide(&check, cmd, &ctx) {
//!     Decision::Allow => run,
//!     Decision::Deny(msg) => error result for the model,
//!     Decision::AskHost(req) => {
//!         // req.smart: ask the reviewer first, then policy.review(&req, answer, &ctx)
//!         // otherwise: send req to the host (merge identical req.fingerprint),
//!         // a timeout is Answer::Deny; then policy.record(&req, answer)
//!     }
//! }
//! ```
//!
//! Rules of the game:
//! * `block` is never bypassed: not by mode `off`, allowlists, session
//!   approvals, reviewers or hooks.
//! * Deny prefixes from the config win over everything else.
//! * Mode `off` allows `ask`-tier commands; `manual` asks the host; `smart`
//!   lets a reviewer approve/deny/escalate first (never persisted; anything
//!   unreadable is escalate).
//! * No handler or a non-interactive context: `ask` means deny unless the
//!   config says `non_interactive: "allow"` ("silence is not consent").
//! * Session approvals are per (session, rule key). `always` stores a *narrow*
//!   rule derived from the parsed argv (e.g. `git push --force`; the exact
//!   argv for opaque code such as `bash -c ...` or path-dependent rules such
//!   as `rm -r`), in an allowlist file written atomically (temp + rename),
//!   loaded at start, listable and editable.
//! * An approval is bound to the exact command text of its request.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::analyze::{cmd_name, is_interpreter, is_shell};
use super::{CheckResult, Reason, RuleConfig, Verdict, redact_secrets};

/// Approval mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Manual,
    Smart,
    Off,
}

/// What `ask` means when nobody can answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NonInteractive {
    #[default]
    Deny,
    Allow,
}

fn default_timeout() -> u64 {
    60
}

/// The `"approvals"` config section.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub allowlist_path: Option<PathBuf>,
    #[serde(default)]
    pub non_interactive: NonInteractive,
    /// Seconds to wait for a host answer; a timeout is a deny.
    #[serde(default = "default_timeout")]
    pub timeout: u64,
    /// Argv prefixes that are always denied (first word by basename; `*`
    /// matches any word). They win over allowlists and mode `off`.
    #[serde(default)]
    pub deny: Vec<Vec<String>>,
    /// Extra engine rules (see [`super::EngineConfig`]).
    #[serde(default)]
    pub rules: Vec<RuleConfig>,
    /// Rule keys the engine ignores (built-in `block` rules excepted).
    #[serde(default)]
    pub exempt: Vec<String>,
    /// The shell commands run in (see [`super::Shell`]).
    #[serde(default)]
    pub shell: super::Shell,
    /// Tier changes of existing rules (see [`super::EngineConfig`]).
    #[serde(default)]
    pub tiers: std::collections::BTreeMap<String, Verdict>,
    /// Host rule packs (see [`super::EngineConfig`]).
    #[serde(default)]
    pub packs: Vec<super::PackConfig>,
    /// The approval posture (see [`super::EngineConfig::posture`]).
    #[serde(default)]
    pub posture: Option<super::Posture>,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            mode: Mode::Manual,
            allowlist_path: None,
            non_interactive: NonInteractive::Deny,
            timeout: default_timeout(),
            deny: Vec::new(),
            rules: Vec::new(),
            exempt: Vec::new(),
            shell: super::Shell::Posix,
            tiers: Default::default(),
            packs: Vec::new(),
            posture: None,
        }
    }
}

impl PolicyConfig {
    /// The engine a runtime (and `hermes-tools check`) uses: this config's
    /// rules with the posture it names, `deny-list` when it names none;
    /// relative paths and scripts judged against `workspace`, scripts read
    /// at decision time, and whether a virtual environment is active (so
    /// `pip install` inside one does not count as a system install).
    pub fn runtime_engine_config(&self, workspace: Option<String>) -> super::EngineConfig {
        let mut ec = self.engine_config();
        ec.posture = Some(self.posture.unwrap_or_default());
        ec.workspace = workspace;
        ec.virtualenv = ["VIRTUAL_ENV", "CONDA_PREFIX"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
        ec.read_scripts = true;
        ec
    }

    /// The engine part of this config.
    pub fn engine_config(&self) -> super::EngineConfig {
        super::EngineConfig {
            rules: self.rules.clone(),
            exempt: self.exempt.clone(),
            shell: self.shell,
            tiers: self.tiers.clone(),
            packs: self.packs.clone(),
            posture: self.posture,
            workspace: None,
            virtualenv: false,
            read_scripts: false,
        }
    }
}

/// Who is asking, and who could answer.
#[derive(Clone, Debug, Default)]
pub struct ApprovalContext {
    pub session_id: String,
    /// A human may be present (dispatch context `"interactive"`, default true
    /// at the runtime's discretion).
    pub interactive: bool,
    /// The host registered an approval handler.
    pub has_handler: bool,
    /// The host registered a smart reviewer.
    pub has_reviewer: bool,
}

/// A pending question for the host (or the reviewer).
#[derive(Clone, Debug, Serialize)]
pub struct ApprovalRequest {
    /// Hash of (session, exact command): identical parallel requests share it
    /// and can be merged into one prompt.
    pub fingerprint: String,
    pub session_id: String,
    /// The exact command text this approval is bound to (not redacted: never
    /// send this field to a host; use `command_redacted`).
    #[serde(skip)]
    pub command: String,
    pub command_redacted: String,
    pub verdict: Verdict,
    /// Reasons still needing approval (after session/allowlist filtering).
    pub reasons: Vec<Reason>,
    pub commands: Vec<Vec<String>>,
    /// Narrow allowlist entries `always` would store.
    pub suggested_scope: Vec<AllowEntry>,
    /// Whether `always` is offered.
    pub allow_always: bool,
    /// Ask the smart reviewer first.
    pub smart: bool,
}

impl ApprovalRequest {
    /// Is this approval for exactly `command`?
    pub fn matches_command(&self, command: &str) -> bool {
        self.command == command
    }

    /// Rule keys this request is about.
    pub fn rule_keys(&self) -> Vec<String> {
        super::rule_keys(&self.reasons)
    }

    /// JSON for the host: the structured analysis plus the raw text clearly
    /// marked as untrusted data (redacted).
    pub fn to_host_json(&self) -> serde_json::Value {
        serde_json::json!({
            "fingerprint": self.fingerprint,
            "session_id": self.session_id,
            "verdict": self.verdict,
            "rules": self.rule_keys(),
            "reasons": self.reasons,
            "commands": self.commands,
            "untrusted_command_text": self.command_redacted,
            "suggested_scope": self.suggested_scope,
            "allow_always": self.allow_always,
            "choices": if self.allow_always { vec!["once", "session", "always", "deny"] } else { vec!["once", "session", "deny"] },
        })
    }
}

/// Outcome of [`Policy::decide`].
#[derive(Clone, Debug)]
pub enum Decision {
    Allow,
    Deny(String),
    AskHost(Box<ApprovalRequest>),
}

/// The host's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    Once,
    Session,
    Always,
    Deny,
}

impl Answer {
    /// Parse `once|session|always|deny` (case-insensitive); anything else is
    /// `None` (callers treat it as deny).
    pub fn parse(s: &str) -> Option<Answer> {
        match s.trim().to_ascii_lowercase().as_str() {
            "once" | "o" => Some(Answer::Once),
            "session" | "s" => Some(Answer::Session),
            "always" | "a" => Some(Answer::Always),
            "deny" | "d" | "no" => Some(Answer::Deny),
            _ => None,
        }
    }
}

/// The smart reviewer's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewAnswer {
    Approve,
    Deny,
    Escalate,
}

impl ReviewAnswer {
    /// Exactly `approve` / `deny` (trimmed, case-insensitive); anything else
    /// is escalate.
    pub fn parse(s: &str) -> ReviewAnswer {
        match s.trim().to_ascii_lowercase().as_str() {
            "approve" => ReviewAnswer::Approve,
            "deny" => ReviewAnswer::Deny,
            _ => ReviewAnswer::Escalate,
        }
    }
}

/// One persistent allowlist entry: rule `rule` is approved for programs
/// whose argv starts with `argv_prefix` (or equals it when `exact`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowEntry {
    pub rule: String,
    pub argv_prefix: Vec<String>,
    #[serde(default)]
    pub exact: bool,
    #[serde(default)]
    pub added_at: u64,
    #[serde(default)]
    pub note: String,
}

impl AllowEntry {
    fn covers(&self, reason: &Reason) -> bool {
        if self.rule != reason.rule && self.rule != "*" {
            return false;
        }
        // an allowlist entry for `git` must not approve a planted `./git`:
        // a program given by a relative or unusual path must match exactly
        let prog = reason.argv.first().map(|s| s.as_str()).unwrap_or("");
        if prog.contains('/')
            && !is_system_bin(prog)
            && self.argv_prefix.first().map(|s| s.as_str()) != Some(prog)
        {
            return false;
        }
        argv_matches(&self.argv_prefix, &reason.argv, self.exact)
    }
}

/// A program path in a standard system binary directory.
fn is_system_bin(p: &str) -> bool {
    const DIRS: &[&str] = &[
        "/usr/bin/",
        "/bin/",
        "/usr/local/bin/",
        "/usr/sbin/",
        "/sbin/",
        "/opt/homebrew/bin/",
        "/usr/local/sbin/",
        "/snap/bin/",
    ];
    DIRS.iter().any(|d| {
        p.strip_prefix(d)
            .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
    })
}

fn argv_matches(prefix: &[String], argv: &[String], exact: bool) -> bool {
    if prefix.is_empty() || argv.len() < prefix.len() || (exact && argv.len() != prefix.len()) {
        return false;
    }
    if cmd_name(&prefix[0]) != cmd_name(&argv[0]) {
        return false;
    }
    prefix[1..]
        .iter()
        .zip(&argv[1..])
        .all(|(p, a)| p == "*" || p == a)
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AllowFile {
    version: u32,
    entries: Vec<AllowEntry>,
}

#[derive(Default)]
struct State {
    session: HashSet<(String, String)>,
    allow: Vec<AllowEntry>,
}

/// The approval policy. Thread-safe; share it behind an `Arc`.
pub struct Policy {
    cfg: PolicyConfig,
    state: Mutex<State>,
}

/// Rules about opaque code or specific paths: `always` stores the exact argv.
const EXACT_RULES: &[&str] = &[
    "shell-c",
    "inline-script",
    "pipe-to-shell",
    "dynamic-command",
    "dynamic-payload",
    "process-substitution-exec",
    "exec-created-file",
    "reverse-shell",
    "rm-recursive",
    "rm-forced-outside",
    "bulk-delete",
    "shred",
    "dd",
    "system-file-write",
    "sensitive-file-write",
    "project-config-overwrite",
    "credential-read",
    "exfiltration",
    "chmod-chown",
    "sql-destructive",
    "cloud-metadata",
    "parse-error",
];

/// Rules for which `always` is not offered at all.
const NEVER_ALWAYS: &[&str] = &[
    "parse-error",
    "dynamic-command",
    "dynamic-payload",
    "reverse-shell",
];

impl Policy {
    /// Build a policy, loading the allowlist file if it exists.
    pub fn new(cfg: PolicyConfig) -> Result<Policy, String> {
        let mut st = State::default();
        if let Some(p) = &cfg.allowlist_path {
            st.allow = load_allowlist(p)?;
        }
        Ok(Policy {
            cfg,
            state: Mutex::new(st),
        })
    }

    pub fn config(&self) -> &PolicyConfig {
        &self.cfg
    }

    pub fn mode(&self) -> Mode {
        self.cfg.mode
    }

    /// How long to wait for a host answer.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.cfg.timeout)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn denied_by_config(&self, check: &CheckResult) -> Option<String> {
        for d in &self.cfg.deny {
            for argv in &check.commands {
                if argv_matches(d, argv, false) {
                    return Some(format!(
                        "BLOCKED: this command matches the configured deny rule '{}'. Do not retry it or work around it.",
                        d.join(" ")
                    ));
                }
            }
        }
        None
    }

    /// Decide what to do with an analysed command.
    pub fn decide(&self, check: &CheckResult, command: &str, ctx: &ApprovalContext) -> Decision {
        if check.verdict == Verdict::Block {
            let why: Vec<&str> = check
                .reasons
                .iter()
                .filter(|r| r.tier == Verdict::Block)
                .map(|r| r.description.as_str())
                .collect();
            return Decision::Deny(format!(
                "BLOCKED (hardline): {}. This command is never run by the agent; if it is really intended, a human must run it outside the agent.",
                why.join("; ")
            ));
        }
        if let Some(msg) = self.denied_by_config(check) {
            return Decision::Deny(msg);
        }
        if check.verdict == Verdict::Allow {
            return Decision::Allow;
        }
        if self.cfg.mode == Mode::Off {
            return Decision::Allow;
        }
        let pending: Vec<Reason> = {
            let st = self.lock();
            check
                .reasons
                .iter()
                .filter(|r| r.tier == Verdict::Ask)
                .filter(|r| {
                    !st.session
                        .contains(&(ctx.session_id.clone(), r.rule.clone()))
                })
                .filter(|r| !st.allow.iter().any(|e| e.covers(r)))
                .cloned()
                .collect()
        };
        if pending.is_empty() {
            return Decision::Allow;
        }
        let nobody = !ctx.interactive
            || !(ctx.has_handler || (self.cfg.mode == Mode::Smart && ctx.has_reviewer));
        if nobody {
            return match self.cfg.non_interactive {
                NonInteractive::Allow => Decision::Allow,
                NonInteractive::Deny => Decision::Deny(format!(
                    "BLOCKED: command needs approval ({}) but no one can approve it here (non-interactive context or no approval handler). Do not retry it or work around it.",
                    describe(&pending)
                )),
            };
        }
        Decision::AskHost(Box::new(self.request(check, command, ctx, pending)))
    }

    fn request(
        &self,
        check: &CheckResult,
        command: &str,
        ctx: &ApprovalContext,
        pending: Vec<Reason>,
    ) -> ApprovalRequest {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        ctx.session_id.hash(&mut h);
        command.hash(&mut h);
        // A bare shell or interpreter (`curl ... | sh` matches on `sh`) would make
        // `always` mean "any script piped into sh": never offer it then.
        let allow_always = !pending.iter().any(|r| {
            NEVER_ALWAYS.contains(&r.rule.as_str()) || r.argv.is_empty() || bare_runner(&r.argv)
        });
        let mut scope: Vec<AllowEntry> = Vec::new();
        for r in &pending {
            if let Some(e) = derive_entry(r)
                && !scope.contains(&e)
            {
                scope.push(e);
            }
        }
        ApprovalRequest {
            fingerprint: format!("{:016x}", h.finish()),
            session_id: ctx.session_id.clone(),
            command: command.to_string(),
            command_redacted: redact_secrets(command),
            verdict: check.verdict,
            reasons: pending,
            commands: check.commands.clone(),
            suggested_scope: scope,
            allow_always,
            smart: self.cfg.mode == Mode::Smart && ctx.has_reviewer,
        }
    }

    /// Apply the smart reviewer's answer. Approve is not persisted; escalate
    /// goes to the human (or deny when nobody can answer).
    pub fn review(
        &self,
        req: &ApprovalRequest,
        answer: ReviewAnswer,
        ctx: &ApprovalContext,
    ) -> Decision {
        if req.verdict == Verdict::Block {
            return Decision::Deny("BLOCKED (hardline)".into());
        }
        match answer {
            ReviewAnswer::Approve => Decision::Allow,
            ReviewAnswer::Deny => Decision::Deny(format!(
                "BLOCKED by the approval reviewer: {}. Do not retry this command.",
                describe(&req.reasons)
            )),
            ReviewAnswer::Escalate => {
                if ctx.interactive && ctx.has_handler {
                    let mut r = req.clone();
                    r.smart = false;
                    Decision::AskHost(Box::new(r))
                } else {
                    match self.cfg.non_interactive {
                        NonInteractive::Allow => Decision::Allow,
                        NonInteractive::Deny => Decision::Deny(format!(
                            "BLOCKED: the reviewer escalated ({}) and no one can approve it here.",
                            describe(&req.reasons)
                        )),
                    }
                }
            }
        }
    }

    /// Record the host's answer for `req`. Returns whether the command may
    /// run. `always` falls back to `session` when not offered.
    pub fn record(&self, req: &ApprovalRequest, answer: Answer) -> Result<Decision, String> {
        self.record_scoped(req, answer, None)
    }

    /// Like [`Policy::record`], with an edited scope for `always`
    /// (the host may narrow or widen the suggested prefixes, but never to a
    /// bare shell, interpreter or privilege wrapper).
    pub fn record_scoped(
        &self,
        req: &ApprovalRequest,
        answer: Answer,
        scope: Option<Vec<AllowEntry>>,
    ) -> Result<Decision, String> {
        if req.verdict == Verdict::Block {
            return Ok(Decision::Deny("BLOCKED (hardline)".into()));
        }
        match answer {
            Answer::Deny => Ok(Decision::Deny(
                "BLOCKED: the user denied this command. The user has NOT consented; do not retry it, rephrase it, or reach the same outcome another way.".into(),
            )),
            Answer::Once => Ok(Decision::Allow),
            Answer::Session | Answer::Always => {
                {
                    let mut st = self.lock();
                    // opaque findings (parse errors, run-time computed commands)
                    // are never approved wholesale: session acts as once
                    for k in req.rule_keys() {
                        if !NEVER_ALWAYS.contains(&k.as_str()) {
                            st.session.insert((req.session_id.clone(), k));
                        }
                    }
                }
                if answer == Answer::Always && req.allow_always {
                    let entries = scope.unwrap_or_else(|| req.suggested_scope.clone());
                    for e in &entries {
                        validate_entry(e)?;
                    }
                    let now = SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .map(|d| d.as_secs())
                        .unwrap_or(0);
                    let mut st = self.lock();
                    for mut e in entries {
                        if e.added_at == 0 {
                            e.added_at = now;
                        }
                        if !st.allow.iter().any(|x| x.rule == e.rule && x.argv_prefix == e.argv_prefix && x.exact == e.exact) {
                            st.allow.push(e);
                        }
                    }
                    let list = st.allow.clone();
                    drop(st);
                    self.save(&list)?;
                }
                Ok(Decision::Allow)
            }
        }
    }

    /// Forget the session approvals of `session_id`.
    pub fn clear_session(&self, session_id: &str) {
        self.lock().session.retain(|(s, _)| s != session_id);
    }

    /// Session approvals of `session_id` (rule keys).
    pub fn session_rules(&self, session_id: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .lock()
            .session
            .iter()
            .filter(|(s, _)| s == session_id)
            .map(|(_, k)| k.clone())
            .collect();
        v.sort();
        v
    }

    /// The persistent allowlist.
    pub fn allowlist(&self) -> Vec<AllowEntry> {
        self.lock().allow.clone()
    }

    /// Replace the allowlist (validated) and save it.
    pub fn set_allowlist(&self, entries: Vec<AllowEntry>) -> Result<(), String> {
        for e in &entries {
            validate_entry(e)?;
        }
        self.lock().allow = entries.clone();
        self.save(&entries)
    }

    /// Remove entry `index`; returns it.
    pub fn remove_allow_entry(&self, index: usize) -> Result<AllowEntry, String> {
        let (e, list) = {
            let mut st = self.lock();
            if index >= st.allow.len() {
                return Err(format!("no allowlist entry {index}"));
            }
            let e = st.allow.remove(index);
            (e, st.allow.clone())
        };
        self.save(&list)?;
        Ok(e)
    }

    fn save(&self, entries: &[AllowEntry]) -> Result<(), String> {
        match &self.cfg.allowlist_path {
            Some(p) => save_allowlist(p, entries),
            None => Ok(()),
        }
    }
}

fn describe(rs: &[Reason]) -> String {
    let mut seen = HashSet::new();
    rs.iter()
        .filter(|r| seen.insert(r.description.clone()))
        .map(|r| r.description.clone())
        .collect::<Vec<_>>()
        .join("; ")
}

fn is_plain_word(w: &str) -> bool {
    !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The narrow allowlist entry for one reason.
pub fn derive_entry(r: &Reason) -> Option<AllowEntry> {
    if r.argv.is_empty() || NEVER_ALWAYS.contains(&r.rule.as_str()) {
        return None;
    }
    let argv = &r.argv;
    if EXACT_RULES.contains(&r.rule.as_str()) {
        return Some(AllowEntry {
            rule: r.rule.clone(),
            argv_prefix: argv.clone(),
            exact: true,
            added_at: 0,
            note: String::new(),
        });
    }
    let mut prefix = vec![cmd_name(&argv[0])];
    let mut saw_opt = false;
    for w in &argv[1..] {
        if prefix.len() >= 4 {
            break;
        }
        if w.starts_with('-') && w.len() > 1 && !w.contains('=') {
            prefix.push(w.clone());
            saw_opt = true;
        } else if !saw_opt && is_plain_word(w) {
            prefix.push(w.clone());
        } else {
            break;
        }
    }
    Some(AllowEntry {
        rule: r.rule.clone(),
        argv_prefix: prefix,
        exact: false,
        added_at: 0,
        note: String::new(),
    })
}

/// A shell or interpreter with nothing after it: it runs whatever it is fed.
fn bare_runner(argv: &[String]) -> bool {
    argv.len() == 1 && {
        let n = cmd_name(&argv[0]);
        is_shell(&n) || is_interpreter(&n)
    }
}

fn validate_entry(e: &AllowEntry) -> Result<(), String> {
    if bare_runner(&e.argv_prefix) {
        return Err(format!(
            "allowlist entry '{}' is too broad: a bare shell or interpreter runs whatever it is fed",
            e.argv_prefix.join(" ")
        ));
    }
    if e.rule.trim().is_empty() || e.argv_prefix.is_empty() || e.argv_prefix[0].is_empty() {
        return Err("allowlist entry needs a rule and a non-empty argv_prefix".into());
    }
    let n = cmd_name(&e.argv_prefix[0]);
    let wrapper = is_shell(&n)
        || is_interpreter(&n)
        || matches!(
            n.as_str(),
            "sudo"
                | "doas"
                | "su"
                | "env"
                | "eval"
                | "exec"
                | "xargs"
                | "command"
                | "nohup"
                | "timeout"
                | "ssh"
        );
    if wrapper && !e.exact && e.argv_prefix.len() < 3 {
        return Err(format!(
            "allowlist entry '{}' is too broad: a shell, interpreter or wrapper needs the exact command",
            e.argv_prefix.join(" ")
        ));
    }
    if e.rule == "*" && e.argv_prefix.len() < 2 {
        return Err("an allowlist entry for every rule needs at least two argv words".into());
    }
    Ok(())
}

fn load_allowlist(p: &Path) -> Result<Vec<AllowEntry>, String> {
    match std::fs::read_to_string(p) {
        Ok(text) => {
            if text.trim().is_empty() {
                return Ok(Vec::new());
            }
            let f: AllowFile = serde_json::from_str(&text)
                .map_err(|e| format!("allowlist {}: {e}", p.display()))?;
            for e in &f.entries {
                validate_entry(e).map_err(|m| format!("allowlist {}: {m}", p.display()))?;
            }
            Ok(f.entries)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(format!("allowlist {}: {e}", p.display())),
    }
}

/// Write the allowlist atomically: temp file in the same directory, fsync,
/// rename over the target.
fn save_allowlist(p: &Path, entries: &[AllowEntry]) -> Result<(), String> {
    use std::io::Write;
    let f = AllowFile {
        version: 1,
        entries: entries.to_vec(),
    };
    let text = serde_json::to_string_pretty(&f).map_err(|e| e.to_string())?;
    let dir = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("allowlist dir {}: {e}", dir.display()))?;
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = p
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "allowlist".into());
    let tmp = dir.join(format!(".{name}.tmp.{}.{n}", std::process::id()));
    let res = (|| -> std::io::Result<()> {
        let mut fh = std::fs::File::create(&tmp)?;
        fh.write_all(text.as_bytes())?;
        fh.write_all(b"\n")?;
        fh.sync_all()?;
        std::fs::rename(&tmp, p)?;
        Ok(())
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("allowlist {}: {e}", p.display()));
    }
    Ok(())
}
