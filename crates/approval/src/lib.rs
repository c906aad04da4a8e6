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
//!    consulted only when parsing failed.
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
//! # Host configuration
//!
//! ```json
//! {"rules": [{"key": "no-terraform-apply", "description": "terraform apply",
//!             "tier": "ask", "argv_prefix": ["terraform", "apply"]},
//!            {"key": "no-prod", "tier": "block", "pattern": "--context[= ]prod"}],
//!  "exempt": ["shell-c"]}
//! ```
//!
//! `argv_prefix` compares the first word by basename (so `/usr/bin/git`
//! matches `git`) and the rest exactly (`*` matches any word); `pattern` is a
//! regex over each program's argv joined with spaces, excluding words that
//! are data (echo/printf arguments, grep patterns, commit/PR messages).
//! `exempt` removes rules by key, except built-in `block` rules. The policy
//! layer ([`policy`]) adds modes, session and persistent approvals.

pub mod analyze;
pub mod normalize;
pub mod options;
pub mod parse;
pub mod policy;
pub mod redact;
pub mod rules;
pub mod words;

use std::collections::HashSet;

use regex::Regex;
use serde::{Deserialize, Serialize};

pub use policy::{
    AllowEntry, Answer, ApprovalContext, ApprovalRequest, Decision, Mode, NonInteractive, Policy,
    PolicyConfig, ReviewAnswer,
};
pub use redact::redact_secrets;
pub use rules::{Matcher, Rule};

/// Inputs longer than this are not parsed (only the regex floor runs).
pub const MAX_INPUT: usize = 256 * 1024;

/// The engine's decision for one command line. Ordered: `Allow < Ask < Block`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Ask,
    Block,
}

/// One rule that matched, with the simple command it matched on.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Reason {
    pub rule: String,
    pub description: String,
    pub tier: Verdict,
    pub command: String,
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
}

/// Host rule in the engine config.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    pub key: String,
    #[serde(default)]
    pub description: String,
    /// `ask` or `block`.
    pub tier: Verdict,
    #[serde(default)]
    pub argv_prefix: Option<Vec<String>>,
    #[serde(default)]
    pub pattern: Option<String>,
}

/// Engine configuration: extra rules and exempted rule keys.
/// `{"rules": [{"key","description","tier","argv_prefix"|"pattern"}], "exempt": ["key", ...]}`
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EngineConfig {
    #[serde(default)]
    pub rules: Vec<RuleConfig>,
    #[serde(default)]
    pub exempt: Vec<String>,
}

/// The rule engine. Cheap to share (`Arc<Engine>`), immutable after construction.
#[derive(Debug)]
pub struct Engine {
    rules: Vec<Rule>,
    exempt: HashSet<String>,
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl Engine {
    /// The engine with the built-in rules.
    pub fn new() -> Engine {
        let rules = rules::builtin_rows()
            .into_iter()
            .map(|(key, tier, desc, m)| Rule {
                key: key.to_string(),
                description: desc.to_string(),
                tier,
                matcher: match m {
                    Some(f) => Matcher::Exec(f),
                    None => Matcher::Finding,
                },
                builtin: true,
            })
            .collect();
        Engine {
            rules,
            exempt: HashSet::new(),
        }
    }

    /// Built-in rules plus host rules and exemptions. Errors name the bad
    /// rule. Built-in `block` rules cannot be exempted (the exemption is
    /// ignored for them).
    pub fn from_config(cfg: &EngineConfig) -> Result<Engine, String> {
        let mut e = Engine::new();
        let mut keys: HashSet<String> = e.rules.iter().map(|r| r.key.clone()).collect();
        for rc in &cfg.rules {
            if rc.key.trim().is_empty() {
                return Err("approval rule with an empty key".into());
            }
            if !keys.insert(rc.key.clone()) {
                return Err(format!("duplicate approval rule key '{}'", rc.key));
            }
            if rc.tier == Verdict::Allow {
                return Err(format!(
                    "approval rule '{}': tier must be 'ask' or 'block' (use \"exempt\" to allow)",
                    rc.key
                ));
            }
            let matcher = match (&rc.argv_prefix, &rc.pattern) {
                (Some(p), None) if !p.is_empty() => Matcher::ArgvPrefix(p.clone()),
                (None, Some(pat)) => Matcher::Pattern(
                    Regex::new(pat)
                        .map_err(|err| format!("approval rule '{}': bad pattern: {err}", rc.key))?,
                ),
                _ => {
                    return Err(format!(
                        "approval rule '{}': give exactly one of a non-empty \"argv_prefix\" or \"pattern\"",
                        rc.key
                    ));
                }
            };
            e.rules.push(Rule {
                key: rc.key.clone(),
                description: if rc.description.is_empty() {
                    format!("host rule {}", rc.key)
                } else {
                    rc.description.clone()
                },
                tier: rc.tier,
                matcher,
                builtin: false,
            });
        }
        e.exempt = cfg.exempt.iter().cloned().collect();
        Ok(e)
    }

    /// Parse a JSON engine config (`deny_unknown_fields`).
    pub fn from_json(json: &str) -> Result<Engine, String> {
        let cfg: EngineConfig =
            serde_json::from_str(json).map_err(|e| format!("approval config: {e}"))?;
        Engine::from_config(&cfg)
    }

    /// The rule table (built-in first, then host rules).
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    fn rule(&self, key: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.key == key)
    }

    fn exempted(&self, r: &Rule) -> bool {
        self.exempt.contains(&r.key) && !(r.builtin && r.tier == Verdict::Block)
    }

    /// Analyse `command` and decide.
    pub fn check(&self, command: &str) -> CheckResult {
        let mut acc = Acc::default();
        if command.len() > MAX_INPUT {
            let head: String = command.chars().take(256).collect();
            // never `block` merely for being long: `ask`, without the floor
            acc.push(self.rule("parse-error"), "command too long to analyse", &[]);
            acc.normalized.push(format!("{head}..."));
            return acc.finish();
        }
        let norm = normalize::normalize(command);
        if norm.text != command {
            self.check_text(command, &mut acc, false);
        }
        self.check_text(&norm.text, &mut acc, true);
        acc.finish()
    }

    fn check_text(&self, text: &str, acc: &mut Acc, primary: bool) {
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
        let ctx = rules::RuleCtx {
            analysis: &a,
            targets: a.execs.iter().map(rules::write_targets).collect(),
            single: rules::analysis_is_single(&a) && !text.contains(['\n', ';', '&', '|']),
        };
        for (i, e) in a.execs.iter().enumerate() {
            if !e.argv.is_empty() && acc.commands.len() < 256 {
                let argv = acc.scrub_argv(redact_argv(&e.argv));
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
                let hit = match &r.matcher {
                    Matcher::Exec(f) => f(&ctx, i, e),
                    Matcher::Finding => false,
                    Matcher::ArgvPrefix(p) => rules::prefix_matches(p, e),
                    Matcher::Pattern(re) => {
                        let text = pattern_text.get_or_insert_with(|| rules::pattern_text(e));
                        !text.is_empty() && re.is_match(text)
                    }
                };
                if hit && !self.exempted(r) {
                    let d = display.get_or_insert_with(|| rules::display_exec(e));
                    acc.push(Some(r), d, &e.argv);
                }
            }
        }
        for f in &a.findings {
            let (cmd, argv) = match f.exec.and_then(|i| a.execs.get(i)) {
                Some(e) => (rules::display_exec(e), e.argv.clone()),
                None => (f.text.clone(), Vec::new()),
            };
            if let Some(r) = self.rule(f.rule)
                && !self.exempted(r)
            {
                acc.push(Some(r), &cmd, &argv);
            }
        }
        if let Some(err) = &a.error {
            if let Some(r) = self.rule("parse-error")
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

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Redact an argv (one quick check for the whole argv first).
fn redact_argv(argv: &[String]) -> Vec<String> {
    let dynamic = argv.iter().any(|w| w.contains(analyze::DYN));
    if !dynamic && !redact::may_contain_secret(&argv.join(" ")) {
        return argv.to_vec();
    }
    let words: Vec<String> = argv.iter().map(|w| w.replace(analyze::DYN, "$?")).collect();
    redact::redact_argv_words(&words)
}

#[derive(Default)]
struct Acc {
    /// Secret values assigned in the command, scrubbed from the output.
    secrets: Vec<String>,
    seen: HashSet<Vec<String>>,
    reasons: Vec<Reason>,
    commands: Vec<Vec<String>>,
    normalized: Vec<String>,
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

    fn push(&mut self, rule: Option<&Rule>, command: &str, argv: &[String]) {
        let Some(r) = rule else { return };
        if self.reasons.len() >= 64 {
            return;
        }
        let command = self.scrub(redact_secrets(&command.replace(analyze::DYN, "$?")));
        if self
            .reasons
            .iter()
            .any(|x| x.rule == r.key && x.command == command)
        {
            return;
        }
        self.reasons.push(Reason {
            rule: r.key.clone(),
            description: r.description.clone(),
            tier: r.tier,
            command,
            argv: self.scrub_argv(redact_argv(argv)),
        });
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
        }
    }
}
