//! From a parse tree to the list of programs that would actually run.
//!
//! The analyser walks the AST in execution order, keeping a small variable
//! environment so that `X=r; ${X}m` and `for c in rm; do $c ...` resolve. For
//! every simple command it performs bash's expansions that matter for safety
//! (brace expansion, tilde, parameters with the common operators, `$IFS`
//! splitting, trivial `$(echo x)` / `$(printf ...)` substitutions, quote
//! removal) and then *unwraps* it: wrappers (`sudo`, `env`, `timeout`,
//! `xargs`, `find -exec`, `ssh host ...`, ...) yield the inner argv, and shell
//! payloads (`bash -c`, `eval`, `su -c`, heredocs or literal text piped into a
//! shell, `watch`, `trap`, `alias`, ...) are re-parsed and analysed
//! recursively. Every program on the way is recorded as an [`Exec`] so the
//! rules see both the wrapper and what it runs.
//!
//! Values that cannot be known statically (unset variables, command output)
//! become the marker character [`DYN`]; a command name containing it is a
//! "dynamic command" and paths containing it are treated as unknown.

use super::parse::{self, Cmd, List, Parsed, Part, RedirOp, Sep, Simple, Word};
pub use crate::names::{cmd_name, is_interpreter, is_shell};
use crate::words::ARRAY_SEP;

/// Stands for a value the analyser cannot know (unset variable, command output).
pub use crate::words::DYN;
/// The path a process substitution expands to.
pub const PROCSUB_PATH: &str = "/dev/fd/63";

const MAX_EXECS: usize = 4_000;
const MAX_BRACE: usize = 64;
const MAX_FOR_VALUES: usize = 8;
/// Presumed analyses per command (each may nest further ones).
const MAX_PRESUMED: usize = 16;
/// Bytes of presumed text parsed per command.
const MAX_PRESUMED_BYTES: usize = 4 * 1024;

#[derive(Clone, Debug)]
pub struct RedirT {
    pub fd: Option<u32>,
    pub op: RedirOp,
    pub target: String,
}

/// One program that would run.
#[derive(Clone, Debug, Default)]
pub struct Exec {
    pub argv: Vec<String>,
    /// Basename of `argv[0]`, lowercased, without `.exe`; empty for a bare
    /// redirection.
    pub name: String,
    pub redirs: Vec<RedirT>,
    /// Upstream program in a pipeline.
    pub stdin_from: Option<usize>,
    /// Text fed through a heredoc or here-string.
    pub stdin_text: Option<String>,
    /// Extra arguments are appended at run time (`xargs`, `find -exec`).
    pub bulk: bool,
    pub depth: usize,
    /// The wrapper or shell that launched this program.
    pub via: Option<String>,
    /// The command name comes from an unknown expansion or a glob.
    pub dynamic_name: bool,
    /// Runs in the background (`&`).
    pub background: bool,
    /// Working directory when known from an earlier `cd` (normalised).
    pub cwd: Option<String>,
    /// Indices of argv words that carry the value of a secret-looking
    /// variable (`$AWS_SECRET_ACCESS_KEY`, `${GITHUB_TOKEN}`).
    pub secret_args: Vec<usize>,
    /// Variables assigned for this program only (`A=1 cmd`, `env A=1 cmd`).
    pub env: Vec<(String, String)>,
    /// Found by presumption (an unknown program's argument, a script being
    /// written): what it matches asks, never blocks.
    pub presumed: bool,
}

/// A structural finding made during analysis (not from the rule table
/// matchers): keyed by rule key.
#[derive(Clone, Debug)]
pub struct Finding {
    pub rule: &'static str,
    pub exec: Option<usize>,
    pub text: String,
}

#[derive(Debug, Default)]
pub struct Analysis {
    pub execs: Vec<Exec>,
    pub findings: Vec<Finding>,
    /// Payload texts that were re-parsed (shell `-c`, eval, heredocs...).
    pub payloads: Vec<String>,
    pub error: Option<String>,
    /// Secret-looking values assigned in the command (for redaction).
    pub assigned: Vec<(String, String)>,
    /// Files written with literal content (normalised path, content).
    pub written: Vec<(String, String)>,
}

#[derive(Clone, Debug)]
enum Val {
    Known(String),
    Unknown,
}

#[derive(Clone, Default)]
struct Ctx {
    stdin_from: Option<usize>,
    stdin_text: Option<String>,
    redirs: Vec<RedirT>,
    bulk: bool,
    depth: usize,
    via: Option<String>,
    background: bool,
    presumed: bool,
}

impl Ctx {
    /// The context of code nested in this command (a substitution, a
    /// presumed or named command, a script written to a file): one level
    /// deeper, reached `via` it, with none of the outer command's stdin or
    /// redirections.
    fn nested(&self, via: String) -> Ctx {
        let mut ic = self.clone();
        ic.depth += 1;
        ic.via = Some(via);
        ic.stdin_from = None;
        ic.stdin_text = None;
        ic.redirs = Vec::new();
        ic
    }
}

pub struct Analyzer {
    vars: Vars,
    /// Directory set by an earlier `cd`/`pushd` to a known absolute path.
    cwd: Option<String>,
    /// Literal contents written to files earlier (`echo ... > x.sh`).
    files: Vec<(String, String)>,
    out: Analysis,
    heredoc_tables: Vec<Vec<parse::Heredoc>>,
    /// Functions defined so far (`f() { ...; }`), run again when called.
    funcs: Vec<(String, Cmd)>,
    /// Function calls followed (bounded).
    calls: usize,
    /// Functions whose body is being walked (recursion is not followed).
    active: Vec<String>,
    /// A secret-looking variable was expanded in the current word.
    secret_hit: bool,
    /// Expanded words of the current simple command that hold secrets.
    secret_words: Vec<String>,
    /// Prefix assignments of the current simple command.
    cur_env: Vec<(String, String)>,
    /// Heredocs whose body is being expanded (table level, index): a body
    /// whose expansion reaches the same heredoc again is not re-expanded
    /// (an unbounded recursion otherwise: found by fuzzing).
    expanding: Vec<(usize, usize)>,
    /// Presumed analyses done (unknown programs' arguments, named option
    /// values, written scripts): bounded, as each can nest.
    presumed: usize,
    /// Bytes of presumed text parsed (bounded too).
    presumed_bytes: usize,
}

/// Analyse a normalised command line.
pub fn analyze(text: &str) -> Analysis {
    let mut a = Analyzer {
        vars: Vars::default(),
        cwd: None,
        files: Vec::new(),
        out: Analysis::default(),
        heredoc_tables: Vec::new(),
        funcs: Vec::new(),
        calls: 0,
        active: Vec::new(),
        secret_hit: false,
        secret_words: Vec::new(),
        cur_env: Vec::new(),
        expanding: Vec::new(),
        presumed: 0,
        presumed_bytes: 0,
    };
    a.vars.insert("HOME".into(), Val::Known("~".into()));
    a.vars
        .insert("HERMES_HOME".into(), Val::Known("~/.hermes".into()));
    a.vars.insert("IFS".into(), Val::Known(" \t\n".into()));
    a.vars.insert("PWD".into(), Val::Known(".".into()));
    let ctx = Ctx::default();
    a.analyze_text(text, &ctx, false);
    a.out.written = std::mem::take(&mut a.files);
    a.out
}

/// The variable environment: a few entries, searched linearly (latest wins).
#[derive(Default)]
struct Vars {
    v: Vec<(String, Val)>,
}

impl Vars {
    fn insert(&mut self, k: String, val: Val) {
        if let Some(e) = self.v.iter_mut().find(|(n, _)| *n == k) {
            e.1 = val;
        } else if self.v.len() < 512 {
            self.v.push((k, val));
        }
    }

    fn get(&self, k: &str) -> Val {
        if let Some((_, v)) = self.v.iter().find(|(n, _)| n == k) {
            return v.clone();
        }
        match k {
            "HOME" => Val::Known("~".into()),
            "HERMES_HOME" => Val::Known("~/.hermes".into()),
            "IFS" => Val::Known(" \t\n".into()),
            "PWD" => Val::Known(".".into()),
            _ => Val::Unknown,
        }
    }
}

struct Field {
    s: String,
    glob: bool,
}

impl Analyzer {
    fn finding(&mut self, rule: &'static str, exec: Option<usize>, text: impl Into<String>) {
        if self.out.findings.len() < 256 {
            self.out.findings.push(Finding {
                rule,
                exec,
                text: text.into(),
            });
        }
    }

    fn over_budget(&mut self) -> bool {
        if self.out.execs.len() >= MAX_EXECS {
            if self.out.error.is_none() {
                self.out.error = Some("command too complex".into());
            }
            return true;
        }
        false
    }

    /// Parse and analyse a (payload) text. Returns the last exec index.
    fn analyze_text(&mut self, text: &str, ctx: &Ctx, payload: bool) -> Option<usize> {
        if ctx.depth > parse::MAX_DEPTH {
            if self.out.error.is_none() {
                self.out.error = Some("nesting too deep".into());
            }
            return None;
        }
        if payload {
            if self.out.payloads.len() < 64 {
                self.out.payloads.push(text.to_string());
            }
            if text.contains(DYN) {
                self.finding("dynamic-payload", None, text.replace(DYN, "$?"));
            }
        }
        let Parsed {
            list,
            heredocs,
            error,
        } = parse::parse(text, ctx.depth);
        if let Some(e) = error
            && self.out.error.is_none()
        {
            self.out.error = Some(e);
        }
        self.heredoc_tables.push(heredocs);
        let r = self.walk_list(&list, ctx);
        self.heredoc_tables.pop();
        r
    }

    fn heredoc(&self, idx: usize) -> Option<&parse::Heredoc> {
        self.heredoc_tables.last().and_then(|t| t.get(idx))
    }

    fn walk_list(&mut self, list: &List, ctx: &Ctx) -> Option<usize> {
        let mut last = None;
        for (k, (pl, sep)) in list.items.iter().enumerate() {
            if self.over_budget() {
                break;
            }
            let mut c = ctx.clone();
            if k > 0 {
                c.stdin_from = None;
                c.stdin_text = None;
            }
            c.background = *sep == Sep::Bg || ctx.background;
            let mut prev: Option<usize> = c.stdin_from;
            for (j, cmd) in pl.cmds.iter().enumerate() {
                let mut cc = c.clone();
                if j > 0 {
                    cc.stdin_from = prev;
                    cc.stdin_text = None;
                }
                let r = self.walk_cmd(cmd, &cc);
                if r.is_some() {
                    prev = r;
                }
            }
            if prev.is_some() {
                last = prev;
            }
        }
        last
    }

    fn walk_cmd(&mut self, cmd: &Cmd, ctx: &Ctx) -> Option<usize> {
        match cmd {
            Cmd::Simple(s) => self.walk_simple(s, ctx),
            Cmd::Subshell(l, rs) | Cmd::Group(l, rs) => {
                let mut c = ctx.clone();
                let redirs = self.expand_redirs(rs, &mut c);
                c.redirs.extend(redirs.iter().cloned());
                if !rs.is_empty() {
                    self.push_exec(Vec::new(), &c);
                }
                self.walk_list(l, &c)
            }
            Cmd::For { var, words, body } => {
                let values: Vec<Option<String>> = match words {
                    Some(ws) => {
                        let mut vals = Vec::new();
                        for w in ws {
                            for f in self.expand_word(w, true, ctx) {
                                vals.push(if f.s.contains(DYN) { None } else { Some(f.s) });
                            }
                        }
                        vals
                    }
                    None => vec![None],
                };
                let mut last = None;
                let known: Vec<String> = values.iter().flatten().cloned().collect();
                let any_unknown = values.iter().any(|v| v.is_none()) || values.is_empty();
                let mut runs: Vec<Val> = known
                    .into_iter()
                    .take(MAX_FOR_VALUES)
                    .map(Val::Known)
                    .collect();
                if any_unknown || values.len() > MAX_FOR_VALUES {
                    runs.push(Val::Unknown);
                }
                for v in runs {
                    self.vars.insert(var.clone(), v);
                    let r = self.walk_list(body, ctx);
                    if r.is_some() {
                        last = r;
                    }
                    if self.over_budget() {
                        break;
                    }
                }
                last
            }
            Cmd::FuncDef { name, body } => {
                if is_fork_bomb(name, body) {
                    self.finding(
                        "fork-bomb",
                        None,
                        format!("{name}() {{ {name} | {name} & }}"),
                    );
                }
                if self.funcs.len() < 64 {
                    self.funcs.push((name.clone(), (**body).clone()));
                }
                // analyse the body as if it were called
                let c = ctx.clone();
                self.active.push(name.clone());
                let r = self.walk_cmd(body, &c);
                self.active.pop();
                r
            }
        }
    }

    fn expand_redirs(&mut self, rs: &[parse::Redir], ctx: &mut Ctx) -> Vec<RedirT> {
        let mut out = Vec::new();
        for r in rs {
            match r.op {
                RedirOp::Heredoc => {
                    if let Some(idx) = r.heredoc
                        && let Some(hd) = self.heredoc(idx).cloned()
                    {
                        let key = (self.heredoc_tables.len(), idx);
                        let text = if hd.expand
                            && !hd.parts.is_empty()
                            && !self.expanding.contains(&key)
                            && self.expanding.len() < parse::MAX_DEPTH
                        {
                            let w = Word {
                                parts: vec![Part::Dq(hd.parts.clone())],
                                raw: String::new(),
                            };
                            self.expanding.push(key);
                            let f = self.expand_word(&w, false, ctx);
                            self.expanding.pop();
                            f.into_iter().map(|f| f.s).collect::<Vec<_>>().join(" ")
                        } else {
                            hd.body.clone()
                        };
                        ctx.stdin_text = Some(text);
                    }
                }
                RedirOp::Herestring => {
                    let f = self.expand_word(&r.target, false, ctx);
                    let text = f.into_iter().map(|f| f.s).collect::<Vec<_>>().join(" ");
                    ctx.stdin_text = Some(text);
                }
                _ => {
                    let f = self.expand_word(&r.target, false, ctx);
                    let target = f.into_iter().map(|f| f.s).collect::<Vec<_>>().join(" ");
                    out.push(RedirT {
                        fd: r.fd,
                        op: r.op,
                        target,
                    });
                }
            }
        }
        out
    }

    fn walk_simple(&mut self, s: &Simple, ctx: &Ctx) -> Option<usize> {
        let saved_secrets = std::mem::take(&mut self.secret_words);
        let saved_env = std::mem::take(&mut self.cur_env);
        let r = self.walk_simple_inner(s, ctx);
        self.secret_words = saved_secrets;
        self.cur_env = saved_env;
        r
    }

    fn walk_simple_inner(&mut self, s: &Simple, ctx: &Ctx) -> Option<usize> {
        let mut c = ctx.clone();
        for (name, w) in &s.assigns {
            let fields = self.expand_word(w, false, &c);
            let v: String = fields
                .into_iter()
                .map(|f| f.s)
                .collect::<Vec<_>>()
                .join(" ");
            if v.contains(DYN) {
                self.vars.insert(name.clone(), Val::Unknown);
            } else {
                self.vars.insert(name.clone(), Val::Known(v.clone()));
            }
            self.check_assignment(name, &v, &c);
            let v = v.replace(ARRAY_SEP, " ");
            if !s.words.is_empty() && self.cur_env.len() < 32 {
                self.cur_env.push((name.clone(), v.clone()));
            }
            if self.out.assigned.len() < 64 {
                self.out.assigned.push((name.clone(), v));
            }
        }
        let mut argv = Vec::new();
        let mut glob0 = false;
        for (k, w) in s.words.iter().enumerate() {
            self.secret_hit = false;
            let fields = self.expand_word(w, true, &c);
            let secret = self.secret_hit;
            for f in fields {
                if argv.is_empty() && k == 0 {
                    glob0 = f.glob;
                }
                if secret && self.secret_words.len() < 64 {
                    self.secret_words.push(f.s.clone());
                }
                argv.push(f.s);
            }
        }
        let redirs = self.expand_redirs(&s.redirs, &mut c);
        c.redirs = redirs;
        // declaration builtins assign too: `export X=rm`, `local PATH=.:$PATH`
        if argv.first().is_some_and(|a| {
            matches!(
                a.as_str(),
                "export" | "declare" | "typeset" | "local" | "readonly"
            )
        }) {
            for a in argv[1..].iter().filter(|a| !a.starts_with('-')) {
                if let Some((name, value)) = a.split_once('=')
                    && !name.is_empty()
                    && name
                        .chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                {
                    let v = if value.contains(DYN) {
                        Val::Unknown
                    } else {
                        Val::Known(value.to_string())
                    };
                    self.vars.insert(name.to_string(), v);
                    self.check_assignment(name, value, &c);
                    if self.out.assigned.len() < 64 {
                        self.out
                            .assigned
                            .push((name.to_string(), value.to_string()));
                    }
                }
            }
        }
        if !argv.is_empty() && self.files.len() < 64 {
            let name = cmd_name(&argv[0]);
            let content = match name.as_str() {
                "echo" | "printf" => trivial_output(&argv),
                "cat" if argv.len() == 1 => c.stdin_text.clone(),
                _ => None,
            };
            if let Some(content) = content {
                for r in &c.redirs {
                    if matches!(r.op, RedirOp::Out | RedirOp::Append) {
                        let path = crate::words::norm_path(&r.target);
                        // executable content written to a script file is
                        // judged now: running it may be a later, separate call
                        if is_script_path(&path, &content) {
                            let mut ic = c.nested(format!("written to {path}"));
                            ic.presumed = true;
                            self.speculate(&content, &ic);
                        }
                        self.files.push((path, content.clone()));
                    }
                }
            }
        }
        if argv.is_empty() {
            if c.redirs.is_empty() && c.stdin_text.is_none() {
                return None;
            }
            return Some(self.push_exec(Vec::new(), &c));
        }
        Some(self.run_argv(argv, &c, glob0))
    }

    /// Variables whose value is code or a library the shell or a tool will
    /// run: hijack vectors, and payloads to analyse.
    fn check_assignment(&mut self, name: &str, value: &str, ctx: &Ctx) {
        if value.is_empty() {
            return;
        }
        // a literal `$(..)` / backtick kept in a variable runs when the value
        // is evaluated again: arithmetic with an array subscript (`$((x))`,
        // `let`, `[[ $x -eq 0 ]]`, `declare -i`), `${x@P}`, PS1/PS4 with
        // `set -x`, eval
        self.deferred_code(value, name, ctx);
        if name == "ENV" && value.contains('/') {
            // read by an interactive POSIX shell at start-up
            self.finding("env-hijack", None, format!("{name}={value}"));
        }
        match name {
            "LD_PRELOAD" | "LD_AUDIT" | "DYLD_INSERT_LIBRARIES" | "BASH_ENV" => {
                self.finding("env-hijack", None, format!("{name}={value}"));
            }
            "PATH" => {
                // a relative or world-writable directory searched before the
                // system ones lets planted binaries shadow real tools
                for comp in value.split(':') {
                    if comp.contains(DYN) {
                        break;
                    }
                    let risky = comp.is_empty()
                        || !(comp.starts_with('/') || comp.starts_with('~'))
                        || ["/tmp", "/var/tmp", "/dev/shm"]
                            .iter()
                            .any(|d| comp == *d || comp.starts_with(&format!("{d}/")));
                    if risky {
                        self.finding("env-hijack", None, format!("PATH={value}"));
                        break;
                    }
                }
            }
            "NODE_OPTIONS" | "PERL5OPT" | "RUBYOPT" | "JAVA_TOOL_OPTIONS" | "_JAVA_OPTIONS" => {
                // only options that load code: --require / -r / --import / -M / -javaagent
                let loads = value.split_whitespace().any(|w| {
                    w.starts_with("--require")
                        || w.starts_with("--import")
                        || w.starts_with("--loader")
                        || w.starts_with("--experimental-loader")
                        || w == "-r"
                        || (name != "NODE_OPTIONS" && (w.starts_with("-M") || w.starts_with("-r")))
                        || w.starts_with("-javaagent")
                        || w.starts_with("-agentpath")
                });
                if loads {
                    self.finding("env-hijack", None, format!("{name}={value}"));
                }
            }
            "HISTFILE" if value == "/dev/null" => {
                self.finding("history-wipe", None, format!("{name}={value}"));
            }
            "HISTSIZE" | "HISTFILESIZE" | "SAVEHIST" if value == "0" => {
                self.finding("history-wipe", None, format!("{name}={value}"));
            }
            _ if crate::sources::package_env_risky(name, value) => {
                self.finding("untrusted-package-source", None, format!("{name}={value}"));
            }
            "PROMPT_COMMAND" | "GIT_SSH_COMMAND" | "GIT_PAGER" | "PAGER" | "EDITOR" | "VISUAL"
            | "GIT_EDITOR" | "SSH_ASKPASS" | "GIT_ASKPASS" | "GIT_EXTERNAL_DIFF" | "MANPAGER"
            | "LESSOPEN" | "SUDO_ASKPASS" => {
                let mut c = ctx.clone();
                c.depth += 1;
                c.via = Some(name.to_string());
                let v = value.trim_start_matches('|').to_string();
                // a program path (`GIT_EDITOR=/tmp/x`): its content is unseen
                if looks_like_program_path(&v) {
                    self.finding("exec-option", None, format!("{name}={value}"));
                }
                self.analyze_text(&v, &c, true);
            }
            // git reads a config, hooks or commands from elsewhere than the
            // repository's `.git/config` the engine reads: presumed to run
            // code
            "GIT_DIR" | "GIT_CONFIG_GLOBAL" | "GIT_CONFIG_SYSTEM" | "GIT_CONFIG"
            | "GIT_EXEC_PATH" | "GIT_TEMPLATE_DIR" | "GIT_COMMON_DIR"
                if !matches!(value, "/dev/null" | ".git" | "./.git" | "" | "~/.gitconfig") =>
            {
                self.finding("code-config", None, format!("{name}={value}"));
            }
            _ if is_command_var(name) => {
                // RESTIC_PASSWORD_COMMAND=, CRASHPAGER=, SYSTEMD_EDITOR=,
                // PERL5DB=: a variable named for a command is presumed run
                let mut c = ctx.clone();
                c.depth += 1;
                c.via = Some(name.to_string());
                c.presumed = true;
                if looks_like_program_path(value) {
                    self.finding("exec-option", None, format!("{name}={value}"));
                }
                self.speculate(value, &c);
            }
            _ => {}
        }
    }

    fn push_exec(&mut self, mut argv: Vec<String>, ctx: &Ctx) -> usize {
        let name = argv.first().map(|a| cmd_name(a)).unwrap_or_default();
        crate::options::canonicalize(&name, &mut argv);
        let secret_args = if self.secret_words.is_empty() {
            Vec::new()
        } else {
            (0..argv.len())
                .filter(|&k| self.secret_words.contains(&argv[k]))
                .collect()
        };
        let dynamic_name = argv.first().is_some_and(|a| a.contains(DYN));
        let e = Exec {
            argv,
            name,
            redirs: ctx.redirs.clone(),
            stdin_from: ctx.stdin_from,
            stdin_text: ctx.stdin_text.clone(),
            bulk: ctx.bulk,
            depth: ctx.depth,
            via: ctx.via.clone(),
            dynamic_name,
            background: ctx.background,
            cwd: self.cwd.clone(),
            secret_args,
            env: self.cur_env.clone(),
            presumed: ctx.presumed,
        };
        self.out.execs.push(e);
        self.out.execs.len() - 1
    }

    /// Record a program and unwrap it. Returns the innermost exec index.
    fn run_argv(&mut self, argv: Vec<String>, ctx: &Ctx, glob0: bool) -> usize {
        let idx = self.push_exec(argv, ctx);
        if glob0 {
            self.out.execs[idx].dynamic_name = true;
        }
        if self.over_budget() {
            return idx;
        }
        let argv = self.out.execs[idx].argv.clone();
        let name = self.out.execs[idx].name.clone();
        if name == "cd" || name == "pushd" {
            let target = argv[1..]
                .iter()
                .find(|a| !a.starts_with('-') || a.as_str() == "-")
                .cloned()
                .unwrap_or_else(|| "~".into());
            self.cwd = if target.contains(DYN) || target == "-" {
                None
            } else if target.starts_with('/') || target.starts_with('~') {
                Some(crate::words::norm_path(&target))
            } else {
                self.cwd
                    .as_ref()
                    .map(|c| crate::words::norm_path(&format!("{c}/{target}")))
            };
        }
        // a function defined earlier in the command line: run its body with
        // these arguments as positional parameters
        if let Some(body) = self
            .funcs
            .iter()
            .rev()
            .find(|(f, _)| *f == argv[0])
            .map(|(_, b)| b.clone())
            && self.calls < 32
            && ctx.depth < parse::MAX_DEPTH
            && !self.active.contains(&argv[0])
        {
            // (a recursive call adds nothing: the body was walked already)
            self.calls += 1;
            self.set_positional(&argv[1..]);
            let mut fc = ctx.clone();
            fc.depth += 1;
            fc.via = Some(argv[0].clone());
            self.active.push(argv[0].clone());
            self.walk_cmd(&body, &fc);
            self.active.pop();
        }
        if name == "env" {
            // `env VAR=value cmd`: the same hijack/redirect checks as a
            // shell assignment
            for a in &argv[1..] {
                if let Some((k, v)) = a.split_once('=')
                    && !k.is_empty()
                    && !k.starts_with('-')
                    && k.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                {
                    self.check_assignment(k, v, ctx);
                    if self.cur_env.len() < 32 {
                        self.cur_env.push((k.to_string(), v.to_string()));
                    }
                } else if !a.starts_with('-') {
                    break;
                }
            }
        }
        let mut inner = ctx.clone();
        inner.via = Some(name.clone());
        // commands hidden in option values (ssh -o ProxyCommand=, tar
        // --to-command=, rg --pre, vim -c ':!cmd', git submodule foreach ...)
        let hidden = option_payloads(&name, &argv);
        if !hidden.is_empty() {
            let mut ic = ctx.clone();
            ic.depth += 1;
            ic.via = Some(name.clone());
            ic.stdin_from = None;
            ic.stdin_text = None;
            for p in hidden {
                self.analyze_text(&p, &ic, true);
            }
        }
        // options of known programs that execute code (the knowledge base)
        self.kb_exec(&name, &argv, ctx, idx);
        // the command language it reads, the shell it starts, the files
        // this command line wrote for it (the knowledge base, or presumed
        // for an unknown program)
        self.kb_language(&name, &argv, ctx, idx);
        // options named for a command (`--password-command=`, `-o
        // ssh_command=`, `--on-download-error=`, `--conf-script=`)
        if !matches!(
            name.as_str(),
            "echo" | "printf" | "grep" | "rg" | "ag" | "git"
        ) && argv.len() > 1
        {
            self.named_exec_opts(&name, &argv, ctx, idx);
        }
        // names with an array subscript are evaluated arithmetically
        // (`printf -v 'a[$(cmd)]'`, `test -v`, `[[ -v ]]`, `read`, `unset`)
        if matches!(
            name.as_str(),
            "printf"
                | "test"
                | "["
                | "[["
                | "read"
                | "unset"
                | "let"
                | "declare"
                | "typeset"
                | "local"
                | "export"
                | "readonly"
                | "mapfile"
                | "readarray"
                | "wait"
                | "getopts"
        ) {
            for a in &argv[1..] {
                if a.contains('[') {
                    self.deferred_code(a, &name, ctx);
                }
            }
        }
        // `$SHELL -c '...'`: an unknown program called like a shell
        if self.out.execs[idx].dynamic_name && argv.len() >= 3 && argv[1] == "-c" {
            let mut ic = ctx.clone();
            ic.depth += 1;
            self.analyze_text(&argv[2], &ic, true);
        }
        match unwrap(&name, &argv) {
            Unwrap::None => {
                // presume executed unless known inert
                if !self.out.execs[idx].dynamic_name && !crate::knowledge::is_known(&name) {
                    self.presume(&name, &argv, ctx);
                } else if !self.out.execs[idx].dynamic_name
                    && !is_shell(&name)
                    && !is_interpreter(&name)
                    && !matches!(name.as_str(), "echo" | "printf" | "git" | "grep" | "rg")
                    && let Some(k) = argv.iter().skip(1).position(|a| a == "exec")
                {
                    // `ip netns exec NS cmd`, `cabal exec -- cmd`, `stack
                    // exec cmd`: an `exec` subcommand runs what follows
                    self.presume(&name, &argv[k + 1..], ctx);
                }
            }
            Unwrap::Argv(start, bulk) => {
                if start < argv.len() {
                    inner.bulk |= bulk;
                    let rest = argv[start..].to_vec();
                    return self.run_argv(rest, &inner, false);
                }
            }
            Unwrap::Multi(groups) => {
                for (s, e) in groups {
                    if s < e && e <= argv.len() {
                        let mut ic = inner.clone();
                        ic.bulk = true;
                        ic.redirs = Vec::new();
                        self.run_argv(argv[s..e].to_vec(), &ic, false);
                    }
                }
            }
            Unwrap::Script(text) => {
                inner.depth += 1;
                self.analyze_text(&text, &inner, true);
            }
            Unwrap::ShellC(j) => {
                inner.depth += 1;
                // `xargs -I{} sh -c '{}'`: the script itself comes from the
                // arguments appended at run time
                if ctx.bulk && argv[j].contains("{}") {
                    self.finding("dynamic-payload", Some(idx), argv[j].clone());
                }
                // positional parameters of the payload ($0 is the first)
                let args = argv[j + 1..].to_vec();
                let v0 = match args.first() {
                    Some(a) if !a.contains(DYN) => Val::Known(a.clone()),
                    _ => Val::Unknown,
                };
                self.set_positional(args.get(1..).unwrap_or(&[]));
                self.vars.insert("0".into(), v0);
                self.analyze_text(&argv[j], &inner, true);
            }
            Unwrap::Code(code) => {
                inner.depth += 1;
                for sh in shell_strings_in_code(&name, &code) {
                    self.analyze_text(&sh, &inner, true);
                }
            }
            Unwrap::Stdin
                if !is_shell(&name)
                    && !matches!(name.as_str(), "at" | "batch" | "source" | ".") =>
            {
                // an interpreter reading code from stdin
                inner.depth += 1;
                let code = match (&ctx.stdin_text, ctx.stdin_from) {
                    (Some(t), _) => Some(t.clone()),
                    (None, Some(up)) => self.literal_output(up),
                    _ => None,
                };
                if let Some(code) = code {
                    inner.stdin_text = None;
                    inner.stdin_from = None;
                    for sh in shell_strings_in_code(&name, &code) {
                        self.analyze_text(&sh, &inner, true);
                    }
                }
            }
            Unwrap::Stdin => {
                // a shell reading its script from stdin
                inner.depth += 1;
                if let Some(t) = ctx.stdin_text.clone() {
                    inner.stdin_text = None;
                    inner.stdin_from = None;
                    self.analyze_text(&t, &inner, true);
                } else if let Some(up) = ctx.stdin_from {
                    // literal text piped in: echo/printf/cat <<EOF
                    if let Some(t) = self.literal_output(up) {
                        inner.stdin_from = None;
                        self.analyze_text(&t, &inner, true);
                    }
                }
            }
        }
        // a script file written earlier in the same command line
        if !self.files.is_empty() {
            let script = if argv[0].contains('/') {
                Some(argv[0].clone())
            } else if is_shell(&name) || matches!(name.as_str(), "source" | ".") {
                argv[1..].iter().find(|a| !a.starts_with('-')).cloned()
            } else {
                None
            };
            if let Some(p) = script {
                let p = crate::words::norm_path(&p);
                if let Some((_, content)) = self.files.iter().rev().find(|(f, _)| *f == p).cloned()
                {
                    let mut ic = ctx.clone();
                    ic.depth += 1;
                    ic.via = Some(name.clone());
                    self.analyze_text(&content, &ic, true);
                }
            }
        }
        idx
    }

    /// Command substitutions kept literally in a value (single quotes): the
    /// shell runs them when the value is evaluated again, so they are
    /// analysed as commands.
    fn deferred_code(&mut self, value: &str, via: &str, ctx: &Ctx) {
        if !(value.contains("$(") || value.contains('`')) || value.contains(DYN) {
            return;
        }
        let ic = ctx.nested(via.to_string());
        for body in substitution_bodies(value) {
            self.finding("deferred-code", None, format!("{via}: {value}"));
            self.analyze_text(&body, &ic, true);
        }
    }

    /// Options whose name says their value runs (`--xxx-command=VALUE`,
    /// `--exec`, `--hook`, `-o ssh_command=VALUE`): the value is presumed
    /// executed; a program path in it asks.
    fn named_exec_opts(&mut self, name: &str, argv: &[String], ctx: &Ctx, idx: usize) {
        let mut ic = ctx.nested(name.to_string());
        ic.presumed = true;
        let mut n = 0;
        for k in 1..argv.len() {
            let a = argv[k].as_str();
            let (opt, val) = if let Some(body) = a.strip_prefix("--") {
                match body.split_once('=') {
                    Some((o, v)) => (o.to_string(), Some(v.to_string())),
                    None => (body.to_string(), None),
                }
            } else if k > 1 && argv[k - 1] == "-o" {
                match a.split_once('=') {
                    Some((o, v)) => (o.to_ascii_lowercase(), Some(v.to_string())),
                    None => continue,
                }
            } else {
                continue;
            };
            if !is_command_opt(&opt) {
                continue;
            }
            let Some(v) = val.or_else(|| argv.get(k + 1).filter(|v| !v.starts_with('-')).cloned())
            else {
                continue;
            };
            if n >= 4 || v.is_empty() {
                break;
            }
            n += 1;
            if looks_like_program_path(&v) {
                self.finding("exec-option", Some(idx), format!("--{opt}={v}"));
            }
            self.speculate(&v, &ic);
        }
    }

    /// Analyse a text that may or may not be a command line (an argument
    /// presumed executed): silently dropped when it does not parse.
    fn speculate(&mut self, text: &str, ctx: &Ctx) {
        if ctx.depth > parse::MAX_DEPTH
            || text.len() > 4096
            || self.presumed >= MAX_PRESUMED
            || self.presumed_bytes + text.len() > MAX_PRESUMED_BYTES
        {
            return;
        }
        self.presumed += 1;
        self.presumed_bytes += text.len();
        let Parsed {
            list,
            heredocs,
            error,
        } = parse::parse(text, ctx.depth);
        if error.is_some() {
            return;
        }
        self.heredoc_tables.push(heredocs);
        self.walk_list(&list, ctx);
        self.heredoc_tables.pop();
    }

    /// An unknown program: its arguments are presumed executed. The
    /// argument lists that start with a program name are run as commands
    /// (`ssh-agent sh -c ..`, `dbus-run-session -- rm ..`, `gosu root rm
    /// ..`), and arguments or option values that hold a command line are
    /// analysed as one (`foo 'rm -rf ~'`, `nodemon --exec '..'`).
    fn presume(&mut self, name: &str, argv: &[String], ctx: &Ctx) {
        if ctx.depth >= 8 {
            return;
        }
        let mut ic = ctx.nested(name.to_string());
        ic.presumed = true;
        let mut first = argv.len();
        let mut runs = 0;
        for k in 1..argv.len() {
            if runs >= 3 {
                break;
            }
            if crate::knowledge::looks_like_program(&argv[k]) {
                first = first.min(k);
                runs += 1;
                if self.presumed >= MAX_PRESUMED {
                    break;
                }
                self.presumed += 1;
                self.run_argv(argv[k..].to_vec(), &ic, false);
                // a shell or wrapper consumes the rest
                let base = cmd_name(&argv[k]);
                if is_shell(&base) || is_interpreter(&base) {
                    break;
                }
            }
        }
        let mut texts = 0;
        for a in &argv[1..first] {
            let v = if a.starts_with('-') {
                a.split_once('=').map(|(_, v)| v)
            } else {
                Some(a.as_str())
            };
            if let Some(v) = v
                && v.contains(' ')
                && texts < 4
            {
                texts += 1;
                self.speculate(v, &ic);
            }
        }
        // code in an argument (`octave --eval 'system("..")'`, `knife exec
        // -E`, `latex '\write18{..}'`, `rake -p '`..`'`): the commands its
        // spawn calls carry are analysed
        for a in argv[1..].iter().take(16) {
            for c in code_commands(a) {
                if self.presumed >= MAX_PRESUMED {
                    return;
                }
                self.presumed += 1;
                self.analyze_text(&c, &ic, true);
            }
        }
    }

    /// What the knowledge base says about the language a program reads
    /// and the shell it starts, and what is presumed of an unknown one:
    ///
    /// * a program that starts an interactive shell when given no command
    ///   (`chroot /`, `screen`, `tmux`, `sg GROUP`, `script`) is judged as
    ///   running one;
    /// * text it reads on stdin (a here-string, heredoc or literal pipe):
    ///   escape lines (`!cmd`, `\! cmd`, `.shell cmd`, `shell cmd`) of an
    ///   interactive program run; for an unknown program every line is
    ///   presumed a command and its code calls (`system("..")`) are
    ///   analysed; persistence paths in it are presumed written;
    /// * escape lines in the arguments of an interactive program (`mysql
    ///   -e '\! sh'`, `sqlite3 db '.shell sh'`, `dc -e '!cmd'`);
    /// * files written earlier in this command line that it reads: named
    ///   in an argument (or their directory is), in its environment, in a
    ///   directory of its own name, or its configuration files
    ///   (`package.json`, `Vagrantfile`, `*.tf`): their content is judged.
    fn kb_language(&mut self, name: &str, argv: &[String], ctx: &Ctx, idx: usize) {
        use crate::knowledge as kb;
        if is_shell(name) || ctx.depth >= 8 {
            return;
        }
        let p = kb::program(name);
        let known = kb::is_known(name) || unwraps(name, argv);
        let interp = is_interpreter(name);
        let mut ic = ctx.nested(name.to_string());
        ic.presumed = !known;
        // a shell started when no command is given
        if let Some(p) = p
            && let Some(n) = p.starts_shell
        {
            let ops = crate::argv::operands(argv, p.value_opts);
            let quiet = argv[1..].iter().any(|a| {
                p.no_shell_opts
                    .iter()
                    .any(|o| a == o || (o.starts_with("--") && a.starts_with(&format!("{o}="))))
            });
            // with subcommands: `""` stands for none (`tmux` alone)
            let opens = if p.shell_subs.is_empty() {
                ops.len() <= n
            } else if ops.is_empty() {
                p.shell_subs.contains(&"")
            } else {
                p.shell_subs.contains(&ops[0]) && ops.len() == 1
            };
            if opens && !quiet {
                self.run_argv(vec!["sh".to_string()], &ic, false);
            }
        }
        // `capsh [opts] -- ARGS`: bash runs with ARGS
        if p.is_some_and(|p| p.bash_after_dashdash)
            && let Some(k) = argv.iter().position(|a| a == "--")
        {
            let mut v = vec!["bash".to_string()];
            v.extend(argv[k + 1..].iter().cloned());
            self.run_argv(v, &ic, false);
        }
        // text read on stdin
        if !interp {
            let text = ctx
                .stdin_text
                .clone()
                .or_else(|| ctx.stdin_from.and_then(|u| self.literal_output(u)));
            if let Some(t) = text
                && t.len() <= 16 * 1024
            {
                let interactive = p.is_some_and(|p| p.interactive);
                let keys = p.map(|p| p.shell_keys).unwrap_or(&[]);
                for line in t.lines().take(64) {
                    if keys.contains(&line.trim()) {
                        self.finding("exec-option", Some(idx), format!("{name}: {line}"));
                        self.run_argv(vec!["sh".to_string()], &ic, false);
                    }
                    if !interactive && known {
                        continue;
                    }
                    if let Some(c) = kb::escape_command(line) {
                        if known {
                            self.finding("exec-option", Some(idx), format!("{name}: {line}"));
                        }
                        self.analyze_text(c, &ic, true);
                    } else if !known && !line.trim().is_empty() {
                        self.speculate(line.trim(), &ic);
                    }
                }
                if !known || interactive {
                    for c in code_commands(&t) {
                        self.analyze_text(&c, &ic, true);
                    }
                    self.presumed_writes(&t, idx);
                }
            }
        }
        // escape lines in the arguments of an interactive program
        if p.is_some_and(|p| p.interactive) || !known {
            for a in argv[1..].iter().take(32) {
                let v = if a.starts_with("--") {
                    a.split_once('=').map_or("", |(_, v)| v)
                } else {
                    a.as_str()
                };
                for line in v.lines().take(16) {
                    if let Some(c) = kb::escape_command(line) {
                        if known {
                            self.finding("exec-option", Some(idx), format!("{name}: {line}"));
                        }
                        self.analyze_text(c, &ic, true);
                    }
                }
            }
        }
        // files this command line wrote that the program reads
        if self.files.is_empty() || (known && !interp && p.is_none_or(|p| p.runs_config.is_empty()))
        {
            return;
        }
        let mut names: Vec<String> = Vec::new();
        for a in argv[1..].iter().take(32) {
            let v = a.split_once('=').map_or(a.as_str(), |(_, v)| v);
            names.push(crate::words::norm_path(v));
            names.extend(path_tokens(a).iter().map(|t| crate::words::norm_path(t)));
        }
        names.retain(|v| !v.is_empty() && v != "." && v != "/");
        for (_, v) in &self.cur_env {
            names.push(crate::words::norm_path(v));
        }
        let config = p.map(|p| p.runs_config).unwrap_or(&[]);
        let own = format!("/.{name}/");
        let own2 = format!("/{name}/");
        let mut hits: Vec<String> = Vec::new();
        for (f, content) in &self.files {
            let base = f.rsplit('/').next().unwrap_or(f);
            let named = names.iter().any(|n| {
                f == n || (f.starts_with(n.as_str()) && f.as_bytes().get(n.len()) == Some(&b'/'))
            });
            let cfg = config.iter().any(|c| match c.strip_prefix('*') {
                Some(ext) => base.ends_with(ext),
                None => base == *c,
            });
            let own_dir = !known && (f.contains(&own) || f.contains(&own2));
            if (named && (!known || interp || cfg)) || cfg || own_dir {
                hits.push(content.clone());
            }
        }
        // an interpreter's own script is judged as code below (and by the
        // existing script rules); here: the other languages
        for content in hits.into_iter().take(4) {
            self.judge_written(&content, &ic, idx, interp);
        }
    }

    /// The content of a file written earlier in this command line that a
    /// program reads as code or configuration: judged as a shell script
    /// (presumed), by the commands its code calls spawn, by its escape
    /// lines, and by the values of command-named keys and quoted strings
    /// (`"scripts": {"x": "/bin/sh"}`, `shell: cmd`, `program = [..]`).
    fn judge_written(&mut self, content: &str, ic: &Ctx, idx: usize, code_only: bool) {
        if content.len() > 16 * 1024 {
            return;
        }
        let mut ic = ic.clone();
        ic.presumed = true;
        for c in code_commands(content) {
            self.analyze_text(&c, &ic, true);
        }
        self.presumed_writes(content, idx);
        if code_only {
            return;
        }
        self.speculate(content, &ic);
        for line in content.lines().take(64) {
            if let Some(c) = crate::knowledge::escape_command(line) {
                self.analyze_text(c, &ic, true);
            }
        }
        for v in config_values(content) {
            self.speculate(&v, &ic);
        }
    }

    /// Persistence paths named in a text an unknown program reads as code
    /// (`FileWriter("/etc/sudoers.d/x")`): presumed written.
    fn presumed_writes(&mut self, text: &str, idx: usize) {
        for t in path_tokens(text).into_iter().take(16) {
            if crate::paths::is_persistence_path(&t) {
                let rule = if crate::paths::is_user_sensitive(&t) {
                    "sensitive-file-write"
                } else {
                    "system-file-write"
                };
                self.finding(rule, Some(idx), t);
            }
        }
    }

    /// Options of known programs that execute code, from the knowledge
    /// base ([`crate::knowledge`]): each asks (`exec-option`), and the
    /// command it runs is analysed when it is visible.
    fn kb_exec(&mut self, name: &str, argv: &[String], ctx: &Ctx, idx: usize) {
        use crate::knowledge::{self as kb, Run};
        let ic = ctx.nested(name.to_string());
        if name == "git" {
            self.git_config_exec(argv, &ic, idx);
        }
        let Some(p) = kb::program(name) else { return };
        let sub = if name == "git" {
            crate::names::git_sub(argv)
        } else {
            argv.iter()
                .enumerate()
                .skip(1)
                .find(|(_, a)| !a.starts_with('-'))
                .map(|(i, a)| (i, a.as_str()))
        };
        let mut payloads: Vec<(Run, String)> = Vec::new();
        let mut k = 1;
        while k < argv.len() {
            let mut step = 1;
            for eo in p.exec_opts {
                if !eo.sub.is_empty() && !sub.is_some_and(|(si, s)| s == eo.sub && k > si) {
                    continue;
                }
                if let Some((v, next)) = kb::opt_value(argv, k, eo.opt) {
                    payloads.push((eo.run, v));
                    if next {
                        step = 2;
                    }
                    break;
                }
            }
            let a = argv[k].as_str();
            if let Some((key, v)) = a.split_once('=')
                && let Some((_, run)) = p.exec_assign.iter().find(|(n, _)| *n == key)
            {
                match run {
                    Run::Shell => {
                        self.analyze_text(v, &ic, true);
                    }
                    _ => {
                        if !matches!(v, "/bin/sh" | "/bin/bash" | "/usr/bin/bash" | "/usr/bin/sh") {
                            payloads.push((*run, v.to_string()));
                        }
                    }
                }
            }
            k += step;
        }
        match name {
            "make" | "gmake" | "bmake" => {
                // `make -f -`: the makefile comes from stdin
                let stdin_mk = argv.windows(2).any(|w| {
                    matches!(w[0].as_str(), "-f" | "--file" | "--makefile")
                        && matches!(w[1].as_str(), "-" | "/dev/stdin")
                }) || argv.iter().any(|a| a == "-f-");
                if stdin_mk {
                    let text = ctx
                        .stdin_text
                        .clone()
                        .or_else(|| ctx.stdin_from.and_then(|u| self.literal_output(u)));
                    payloads.push((Run::Make, text.unwrap_or_default()));
                }
            }
            "sed" | "gsed" => {
                let (scripts, _) = kb::sed_scripts(argv);
                for sc in scripts {
                    for c in kb::sed_exec(&sc) {
                        self.finding("exec-option", Some(idx), format!("sed: {sc}"));
                        if !c.is_empty() {
                            self.analyze_text(&c, &ic, true);
                        }
                    }
                }
            }
            _ => {}
        }
        if p.stdin_bang_script {
            let text = ctx
                .stdin_text
                .clone()
                .or_else(|| ctx.stdin_from.and_then(|u| self.literal_output(u)));
            match text {
                Some(t) => {
                    for line in t.lines() {
                        if let Some(c) = line.trim_start().strip_prefix('!') {
                            self.finding("exec-option", Some(idx), line.to_string());
                            self.analyze_text(c, &ic, true);
                        }
                        // `w FILE` / `W FILE` / `wq FILE`: the buffer is written there
                        let cmd = line.trim_start().trim_start_matches(|c: char| {
                            c.is_ascii_digit() || c == ',' || c == '$'
                        });
                        if let Some(f) = ["wq ", "w ", "W "]
                            .iter()
                            .find_map(|p| cmd.strip_prefix(p))
                            .map(str::trim)
                        {
                            if crate::paths::is_user_sensitive(f) {
                                self.finding("sensitive-file-write", Some(idx), f.to_string());
                            } else if crate::paths::is_persistence_path(f)
                                || crate::paths::is_system_path(f)
                            {
                                self.finding("system-file-write", Some(idx), f.to_string());
                            }
                        }
                    }
                }
                None if ctx.stdin_from.is_some() => {
                    self.finding(
                        "exec-option",
                        Some(idx),
                        format!("{name} script from a pipe"),
                    );
                }
                None => {}
            }
        }
        if p.runs_dir && !argv.iter().any(|a| a == "--test" || a == "--list") {
            self.finding("exec-option", Some(idx), argv.join(" "));
        }
        for (run, v) in payloads {
            if run != Run::Code {
                self.finding("exec-option", Some(idx), v.clone());
            }
            match run {
                Run::Code => {
                    for c in code_commands(&v) {
                        self.analyze_text(&c, &ic, true);
                    }
                }
                Run::Shell => {
                    let v = v.trim_start_matches('!').to_string();
                    self.analyze_text(&v, &ic, true);
                }
                Run::Program => {
                    if !v.is_empty() && !v.contains(' ') {
                        self.run_argv(vec![v], &ic, false);
                    } else {
                        self.analyze_text(&v, &ic, true);
                    }
                }
                Run::Make => {
                    for c in kb::make_exec(&v) {
                        self.analyze_text(&c, &ic, true);
                    }
                }
                Run::Opaque => {}
            }
        }
    }

    /// Git configuration that runs code: `git -c KEY=VALUE`, `git config
    /// [--global] KEY VALUE`, `GIT_CONFIG_PARAMETERS` / `GIT_CONFIG_KEY_n`,
    /// and `ext::` transport URLs.
    fn git_config_exec(&mut self, argv: &[String], ic: &Ctx, idx: usize) {
        use crate::knowledge::{self as kb, Run};
        let mut pairs: Vec<(String, String)> = Vec::new();
        let sub_at = crate::names::git_sub(argv).map_or(argv.len(), |(i, _)| i);
        for (k, a) in argv.iter().enumerate() {
            if a == "-c"
                && let Some((key, v)) = argv.get(k + 1).and_then(|kv| kv.split_once('='))
            {
                pairs.push((key.to_string(), v.to_string()));
            }
            if k < sub_at {
                // `--config-env=KEY=VAR`: the value comes from a variable
                let ce = a
                    .strip_prefix("--config-env=")
                    .map(str::to_string)
                    .or_else(|| (a == "--config-env").then(|| argv.get(k + 1).cloned())?);
                if let Some((key, var)) = ce.as_deref().and_then(|kv| kv.split_once('=')) {
                    let val = self
                        .cur_env
                        .iter()
                        .rev()
                        .find(|(x, _)| x == var)
                        .map(|(_, y)| y.clone())
                        .or_else(|| match self.vars.get(var) {
                            Val::Known(v) => Some(v.clone()),
                            Val::Unknown => None,
                        })
                        .unwrap_or_else(|| DYN.to_string());
                    if val.contains(DYN) && kb::git_code_key(key, "!x").is_some() {
                        self.finding("code-config", Some(idx), a.clone());
                    }
                    pairs.push((key.to_string(), val));
                }
                // another repository's config and hooks, another exec path
                let other = |v: &str| !matches!(v, ".git" | "./.git");
                let valued = |o: &str| {
                    a.strip_prefix(&format!("{o}="))
                        .map(str::to_string)
                        .or_else(|| (a == o).then(|| argv.get(k + 1).cloned())?)
                };
                if valued("--git-dir").is_some_and(|v| other(&v)) || a.starts_with("--exec-path=") {
                    self.finding("code-config", Some(idx), a.clone());
                }
            }
            if let Some(rest) = a.strip_prefix("ext::") {
                self.finding("code-config", Some(idx), a.clone());
                let cmd = rest.replace("% ", " ").replace("%%", "%");
                self.analyze_text(&cmd, ic, true);
            }
        }
        if let Some((si, "config")) = crate::names::git_sub(argv) {
            let mut ops: Vec<&String> = Vec::new();
            let mut i = si + 1;
            while i < argv.len() {
                let a = &argv[i];
                if matches!(
                    a.as_str(),
                    "-f" | "--file" | "--blob" | "--type" | "--default"
                ) {
                    i += 2;
                    continue;
                }
                if !a.starts_with('-') {
                    ops.push(a);
                }
                i += 1;
            }
            // `git config set KEY VALUE` (new syntax) or `git config KEY VALUE`
            if ops.first().is_some_and(|o| *o == "set") {
                ops.remove(0);
            }
            if ops.len() >= 2 {
                pairs.push((ops[0].clone(), ops[1].clone()));
            }
        }
        for (k, v) in &self.cur_env {
            if k == "GIT_CONFIG_PARAMETERS" {
                for item in v.split("' '") {
                    let item = item.trim_matches('\'');
                    if let Some((key, val)) = item.split_once("'='") {
                        pairs.push((key.to_string(), val.to_string()));
                    }
                }
            }
            if let Some(n) = k.strip_prefix("GIT_CONFIG_KEY_") {
                let vk = format!("GIT_CONFIG_VALUE_{n}");
                let val = self
                    .cur_env
                    .iter()
                    .find(|(x, _)| *x == vk)
                    .map(|(_, y)| y.clone())
                    .unwrap_or_default();
                pairs.push((v.clone(), val));
            }
        }
        for (key, val) in pairs {
            if let Some(run) = kb::git_code_key(&key, &val) {
                self.finding("code-config", Some(idx), format!("{key}={val}"));
                if run == Run::Shell && !val.is_empty() {
                    let v = val.trim_start().trim_start_matches('!').to_string();
                    self.analyze_text(&v, ic, true);
                }
            }
        }
    }

    /// Set `$1..$9`, `$@` and `$*` (the elements of `$@` stay apart).
    fn set_positional(&mut self, args: &[String]) {
        for k in 1..10 {
            let v = match args.get(k - 1) {
                Some(a) if !a.contains(DYN) => Val::Known(a.clone()),
                _ => Val::Unknown,
            };
            self.vars.insert(k.to_string(), v);
        }
        let sep = ARRAY_SEP.to_string();
        let all = if args.iter().any(|a| a.contains(DYN)) {
            Val::Unknown
        } else {
            Val::Known(args.join(&sep))
        };
        let star = match &all {
            Val::Known(s) => Val::Known(s.replace(ARRAY_SEP, " ")),
            Val::Unknown => Val::Unknown,
        };
        self.vars.insert("@".into(), all);
        self.vars.insert("*".into(), star);
    }

    /// The output of an upstream program when it is fully known.
    fn literal_output(&self, idx: usize) -> Option<String> {
        let e = self.out.execs.get(idx)?;
        match e.name.as_str() {
            "echo" | "printf" => trivial_output(&e.argv),
            "cat" if e.argv.len() == 1 => e.stdin_text.clone(),
            _ => None,
        }
    }

    fn var(&self, name: &str) -> Val {
        self.vars.get(name)
    }

    fn param_value(&mut self, p: &parse::Param, ctx: &Ctx) -> Val {
        if p.indirect {
            return Val::Unknown;
        }
        if crate::redact::is_secret_name(&p.name) {
            self.secret_hit = true;
        }
        let base = match self.var(&p.name) {
            Val::Known(s) if s.contains(ARRAY_SEP) || p.subscript.is_some() => {
                let elems: Vec<&str> = s.split(ARRAY_SEP).collect();
                let sub = match p.name.as_str() {
                    "@" | "*" => Some(p.name.as_str()),
                    _ => p.subscript.as_deref(),
                };
                match sub {
                    Some("@") => Val::Known(s.clone()),
                    Some("*") => Val::Known(s.replace(ARRAY_SEP, " ")),
                    Some(ix) => match ix.trim().parse::<usize>() {
                        Ok(n) => Val::Known(elems.get(n).copied().unwrap_or("").to_string()),
                        Err(_) => Val::Unknown,
                    },
                    None => Val::Known(elems[0].to_string()),
                }
            }
            v => v,
        };
        if p.length {
            return match base {
                Val::Known(s) => Val::Known(s.chars().count().to_string()),
                Val::Unknown => Val::Unknown,
            };
        }
        let op = p.op.as_str();
        let arg = |a: &mut Analyzer| -> Val {
            match &p.arg {
                Some(w) => {
                    let f = a.expand_word(w, false, ctx);
                    let s: String = f.into_iter().map(|f| f.s).collect::<Vec<_>>().join(" ");
                    if s.contains(DYN) {
                        Val::Unknown
                    } else {
                        Val::Known(s)
                    }
                }
                None => Val::Known(String::new()),
            }
        };
        match op {
            "" => base,
            ":-" | "-" | ":=" | "=" => {
                // the operand is evaluated (substitutions run) in any case
                let a = arg(self);
                match base {
                    Val::Known(s) if !s.is_empty() || !op.starts_with(':') => Val::Known(s),
                    Val::Known(_) => a,
                    Val::Unknown => match a {
                        // unknown variable with a default: most likely the default
                        Val::Known(d) => Val::Known(d),
                        Val::Unknown => Val::Unknown,
                    },
                }
            }
            ":+" | "+" => {
                let a = arg(self);
                match base {
                    Val::Known(s) if s.is_empty() && op == ":+" => Val::Known(String::new()),
                    Val::Known(_) => a,
                    Val::Unknown => Val::Unknown,
                }
            }
            ":?" | "?" => base,
            ":" => {
                // ${v:off[:len]}
                let Val::Known(s) = base else {
                    return Val::Unknown;
                };
                let spec = p.arg.as_ref().map(|w| w.raw.clone()).unwrap_or_default();
                let mut it = spec.splitn(2, ':');
                let off: i64 = it.next().unwrap_or("0").trim().parse().unwrap_or(0);
                let len: Option<i64> = it.next().and_then(|l| l.trim().parse().ok());
                let chars: Vec<char> = s.chars().collect();
                let n = chars.len() as i64;
                let start = if off < 0 {
                    (n + off).max(0)
                } else {
                    off.min(n)
                };
                let end = match len {
                    Some(l) if l >= 0 => (start + l).min(n),
                    Some(l) => (n + l).max(start),
                    None => n,
                };
                Val::Known(chars[start as usize..end as usize].iter().collect())
            }
            "#" | "##" | "%" | "%%" => {
                let Val::Known(s) = base else {
                    return Val::Unknown;
                };
                let Val::Known(pat) = arg(self) else {
                    return Val::Unknown;
                };
                Val::Known(strip_pattern(&s, &pat, op))
            }
            "/" | "//" | "/#" | "/%" => {
                let Val::Known(s) = base else {
                    return Val::Unknown;
                };
                let Val::Known(pat) = arg(self) else {
                    return Val::Unknown;
                };
                let rep = match &p.arg2 {
                    Some(w) => {
                        let f = self.expand_word(w, false, ctx);
                        let r: String = f.into_iter().map(|f| f.s).collect::<Vec<_>>().join(" ");
                        if r.contains(DYN) {
                            return Val::Unknown;
                        }
                        r
                    }
                    None => String::new(),
                };
                if pat.contains(['*', '?', '[']) {
                    return Val::Unknown;
                }
                if pat.is_empty() {
                    return Val::Known(s);
                }
                Val::Known(match op {
                    "//" => s.replace(&pat, &rep),
                    "/#" => match s.strip_prefix(&pat) {
                        Some(r) => format!("{rep}{r}"),
                        None => s,
                    },
                    "/%" => match s.strip_suffix(&pat) {
                        Some(r) => format!("{r}{rep}"),
                        None => s,
                    },
                    _ => s.replacen(&pat, &rep, 1),
                })
            }
            "^^" | "^" => match base {
                Val::Known(s) => Val::Known(if op == "^^" {
                    s.to_uppercase()
                } else {
                    let mut c = s.chars();
                    match c.next() {
                        Some(f) => f.to_uppercase().chain(c).collect(),
                        None => s,
                    }
                }),
                u => u,
            },
            ",," | "," => match base {
                Val::Known(s) => Val::Known(if op == ",," {
                    s.to_lowercase()
                } else {
                    let mut c = s.chars();
                    match c.next() {
                        Some(f) => f.to_lowercase().chain(c).collect(),
                        None => s,
                    }
                }),
                u => u,
            },
            "@" => base,
            _ => {
                let _ = arg(self);
                Val::Unknown
            }
        }
    }

    /// Expand a word into fields (bash: brace, tilde, parameter, command
    /// substitution, arithmetic, word splitting, quote removal; no pathname
    /// expansion: glob characters stay and are flagged).
    fn expand_word(&mut self, w: &Word, split: bool, ctx: &Ctx) -> Vec<Field> {
        // Windows drive paths keep their backslashes (`C:\Users\x`).
        if is_windows_path(&w.raw) {
            return vec![Field {
                s: w.raw.clone(),
                glob: false,
            }];
        }
        if split && let Some(alts) = brace_expand(&w.parts) {
            let mut out = Vec::new();
            for parts in alts {
                let ww = Word {
                    parts,
                    raw: String::new(),
                };
                out.extend(self.expand_parts(&ww.parts, split, ctx));
            }
            return out;
        }
        self.expand_parts(&w.parts, split, ctx)
    }

    fn expand_parts(&mut self, parts: &[Part], split: bool, ctx: &Ctx) -> Vec<Field> {
        let mut fields: Vec<Field> = Vec::new();
        let mut cur = String::new();
        let mut glob = false;
        let mut have = false;
        let ifs: Vec<char> = if split
            && parts
                .iter()
                .any(|p| matches!(p, Part::Param(_) | Part::CmdSub(_) | Part::ProcSub(_)))
        {
            match self.var("IFS") {
                Val::Known(s) => s.chars().collect(),
                Val::Unknown => vec![' ', '\t', '\n'],
            }
        } else {
            Vec::new()
        };
        for p in parts {
            match p {
                Part::Lit(t) => {
                    if t.contains(['*', '?'])
                        || t.find('[').is_some_and(|i| t[i + 1..].contains(']'))
                    {
                        glob = true;
                    }
                    cur.push_str(t);
                    have = true;
                }
                Part::Quoted(t) => {
                    cur.push_str(t);
                    have = true;
                }
                Part::Dq(inner) => {
                    have = true;
                    for q in inner {
                        let v = self.expand_one(q, ctx);
                        cur.push_str(&v);
                    }
                }
                Part::Tilde(_) | Part::Arith(_) => {
                    let v = self.expand_one(p, ctx);
                    cur.push_str(&v);
                    have = true;
                }
                Part::Param(_) | Part::CmdSub(_) | Part::ProcSub(_) => {
                    let v = self.expand_one(p, ctx);
                    if split && !v.contains(DYN) && v.chars().any(|c| ifs.contains(&c)) {
                        let mut first = true;
                        let pieces: Vec<&str> = v.split(|c| ifs.contains(&c)).collect();
                        let n = pieces.len();
                        for (ix, piece) in pieces.into_iter().enumerate() {
                            if !first {
                                if have || !cur.is_empty() {
                                    fields.push(Field {
                                        s: std::mem::take(&mut cur),
                                        glob,
                                    });
                                    glob = false;
                                }
                                have = false;
                            }
                            first = false;
                            if !piece.is_empty() {
                                cur.push_str(piece);
                                have = true;
                            } else if ix == n - 1 {
                                // trailing separator: nothing
                            }
                        }
                    } else {
                        if !v.is_empty() {
                            have = true;
                        }
                        cur.push_str(&v);
                    }
                }
            }
        }
        if have || !cur.is_empty() {
            fields.push(Field { s: cur, glob });
        }
        if split && fields.iter().any(|f| f.s.contains(ARRAY_SEP)) {
            // array elements (`"${a[@]}"`, `"$@"`) are separate words
            let mut out = Vec::with_capacity(fields.len() + 4);
            for f in fields {
                if f.s.contains(ARRAY_SEP) {
                    out.extend(
                        f.s.split(ARRAY_SEP)
                            .filter(|x| !x.is_empty())
                            .map(|x| Field {
                                s: x.to_string(),
                                glob: f.glob,
                            }),
                    );
                } else {
                    out.push(f);
                }
            }
            fields = out;
        }
        if !split && fields.is_empty() {
            fields.push(Field {
                s: String::new(),
                glob: false,
            });
        }
        fields
    }

    /// Expand one part to a single string (no splitting).
    fn expand_one(&mut self, p: &Part, ctx: &Ctx) -> String {
        match p {
            Part::Lit(t) | Part::Quoted(t) => t.clone(),
            Part::Dq(inner) => {
                let mut s = String::new();
                for q in inner {
                    s.push_str(&self.expand_one(q, ctx));
                }
                s
            }
            Part::Tilde(user) => {
                if user.is_empty() {
                    match self.var("HOME") {
                        Val::Known(h) => h,
                        Val::Unknown => "~".into(),
                    }
                } else if user == "root" {
                    "/root".into()
                } else {
                    format!("/home/{user}")
                }
            }
            Part::Arith(t) => {
                let t = t.trim();
                if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
                    t.to_string()
                } else {
                    DYN.to_string()
                }
            }
            Part::Param(p) => match self.param_value(p, ctx) {
                Val::Known(s) => s,
                Val::Unknown => DYN.to_string(),
            },
            Part::CmdSub(l) => {
                let mut c = Ctx {
                    depth: ctx.depth + 1,
                    via: Some("$(...)".into()),
                    ..Default::default()
                };
                c.background = false;
                let before = self.out.execs.len();
                self.walk_list(l, &c);
                // trivial `$(echo x)` / `$(printf ...)`
                if let Some(out) = trivial_list_output(l, &self.out.execs[before..]) {
                    return out;
                }
                DYN.to_string()
            }
            Part::ProcSub(l) => {
                let c = Ctx {
                    depth: ctx.depth + 1,
                    via: Some("<(...)".into()),
                    ..Default::default()
                };
                self.walk_list(l, &c);
                PROCSUB_PATH.to_string()
            }
        }
    }
}

fn is_windows_path(raw: &str) -> bool {
    let b = raw.as_bytes();
    b.len() >= 3
        && b[0].is_ascii_alphabetic()
        && b[1] == b':'
        && b[2] == b'\\'
        && !raw.contains(['$', '`', '\'', '"'])
}

fn strip_pattern(s: &str, pat: &str, op: &str) -> String {
    // support literal patterns and the `*x` / `x*` forms
    let longest = op.len() == 2;
    if op.starts_with('#') {
        if let Some(lit) = pat
            .strip_suffix('*')
            .filter(|p| !p.contains(['*', '?', '[']))
        {
            // `#lit*` removes everything (longest) or lit (shortest)
            if let Some(rest) = s.strip_prefix(lit) {
                return if longest {
                    String::new()
                } else {
                    rest.to_string()
                };
            }
            return s.to_string();
        }
        if let Some(lit) = pat
            .strip_prefix('*')
            .filter(|p| !p.contains(['*', '?', '[']))
        {
            let pos = if longest { s.rfind(lit) } else { s.find(lit) };
            return match pos {
                Some(i) => s[i + lit.len()..].to_string(),
                None => s.to_string(),
            };
        }
        if !pat.contains(['*', '?', '[']) {
            return s.strip_prefix(pat).unwrap_or(s).to_string();
        }
    } else {
        if let Some(lit) = pat
            .strip_prefix('*')
            .filter(|p| !p.contains(['*', '?', '[']))
        {
            if let Some(rest) = s.strip_suffix(lit) {
                return if longest {
                    String::new()
                } else {
                    rest.to_string()
                };
            }
            return s.to_string();
        }
        if let Some(lit) = pat
            .strip_suffix('*')
            .filter(|p| !p.contains(['*', '?', '[']))
        {
            let pos = if longest { s.find(lit) } else { s.rfind(lit) };
            return match pos {
                Some(i) => s[..i].to_string(),
                None => s.to_string(),
            };
        }
        if !pat.contains(['*', '?', '[']) {
            return s.strip_suffix(pat).unwrap_or(s).to_string();
        }
    }
    DYN.to_string()
}

/// Output of `echo ...` / `printf ...` when fully known.
pub fn trivial_output(argv: &[String]) -> Option<String> {
    if argv.iter().any(|a| a.contains(DYN)) {
        return None;
    }
    let name = cmd_name(argv.first()?);
    match name.as_str() {
        "echo" => {
            let mut i = 1;
            let mut interp = false;
            while i < argv.len()
                && argv[i].starts_with('-')
                && argv[i].len() > 1
                && argv[i][1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'))
            {
                if argv[i].contains('e') {
                    interp = true;
                }
                i += 1;
            }
            let s = argv[i.min(argv.len())..].join(" ");
            Some(if interp {
                parse::ansi_c_unescape(&s)
            } else {
                s
            })
        }
        "printf" => {
            let mut i = 1;
            if argv.get(i).map(|s| s.as_str()) == Some("--") {
                i += 1;
            }
            let fmt = parse::ansi_c_unescape(argv.get(i)?);
            let mut args = argv[i + 1..].iter();
            let mut out = String::new();
            let cs: Vec<char> = fmt.chars().collect();
            let mut k = 0;
            while k < cs.len() {
                if cs[k] == '%' && k + 1 < cs.len() {
                    match cs[k + 1] {
                        '%' => out.push('%'),
                        's' => out.push_str(args.next().map(|s| s.as_str()).unwrap_or("")),
                        'b' => out.push_str(&parse::ansi_c_unescape(
                            args.next().map(|s| s.as_str()).unwrap_or(""),
                        )),
                        'c' => out.extend(args.next().and_then(|s| s.chars().next())),
                        'd' | 'i' => out.push_str(args.next().map(|s| s.as_str()).unwrap_or("0")),
                        _ => return None,
                    }
                    k += 2;
                } else {
                    out.push(cs[k]);
                    k += 1;
                }
            }
            Some(out)
        }
        _ => None,
    }
}

fn trivial_list_output(l: &List, execs: &[Exec]) -> Option<String> {
    if l.items.len() != 1 || l.items[0].0.cmds.len() != 1 {
        return None;
    }
    if execs.len() != 1 {
        return None;
    }
    let e = &execs[0];
    if !e.redirs.is_empty() {
        return None;
    }
    trivial_output(&e.argv).map(|s| s.trim_end_matches('\n').to_string())
}

/// Bash brace expansion of `{a,b}` inside unquoted literal parts.
fn brace_expand(parts: &[Part]) -> Option<Vec<Vec<Part>>> {
    let mut budget = MAX_BRACE;
    brace_expand_in(parts, &mut budget)
}

fn brace_expand_in(parts: &[Part], budget: &mut usize) -> Option<Vec<Vec<Part>>> {
    for (ix, p) in parts.iter().enumerate() {
        let Part::Lit(t) = p else { continue };
        if !t.contains('{') || !t.contains(',') {
            continue;
        }
        let cs: Vec<char> = t.chars().collect();
        let mut k = 0;
        while k < cs.len() {
            if cs[k] == '{' && !(k > 0 && cs[k - 1] == '$') {
                // find matching close within this literal
                let mut depth = 0;
                let mut commas = Vec::new();
                let mut close = None;
                for (j, &c) in cs.iter().enumerate().skip(k) {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                close = Some(j);
                                break;
                            }
                        }
                        ',' if depth == 1 => commas.push(j),
                        _ => {}
                    }
                }
                if let Some(cl) = close
                    && !commas.is_empty()
                {
                    let pre: String = cs[..k].iter().collect();
                    let post: String = cs[cl + 1..].iter().collect();
                    let mut bounds = vec![k];
                    bounds.extend(commas.iter().copied());
                    bounds.push(cl);
                    let mut out = Vec::new();
                    for w in bounds.windows(2) {
                        let alt: String = cs[w[0] + 1..w[1]].iter().collect();
                        let mut np: Vec<Part> = parts[..ix].to_vec();
                        np.push(Part::Lit(format!("{pre}{alt}{post}")));
                        np.extend(parts[ix + 1..].iter().cloned());
                        if *budget == 0 {
                            return Some(out);
                        }
                        // expand further braces recursively
                        match brace_expand_in(&np, budget) {
                            Some(more) => out.extend(more),
                            None => {
                                *budget = budget.saturating_sub(1);
                                out.push(np)
                            }
                        }
                        if *budget == 0 {
                            return Some(out);
                        }
                    }
                    return Some(out);
                }
            }
            k += 1;
        }
    }
    None
}

fn is_fork_bomb(name: &str, body: &Cmd) -> bool {
    fn scan(name: &str, l: &List) -> bool {
        for (pl, sep) in &l.items {
            let multi = pl.cmds.len() > 1 || *sep == Sep::Bg;
            for c in &pl.cmds {
                match c {
                    Cmd::Simple(s) => {
                        if multi && s.words.first().is_some_and(|w| w.raw == name) {
                            return true;
                        }
                    }
                    Cmd::Subshell(l, _) | Cmd::Group(l, _) => {
                        if scan(name, l) {
                            return true;
                        }
                    }
                    Cmd::For { body, .. } => {
                        if scan(name, body) {
                            return true;
                        }
                    }
                    Cmd::FuncDef { .. } => {}
                }
            }
        }
        false
    }
    match body {
        Cmd::Group(l, _) | Cmd::Subshell(l, _) => scan(name, l),
        _ => false,
    }
}

/// How a program hands control to another one.
enum Unwrap {
    None,
    /// The inner argv starts at this index (bool: bulk arguments appended).
    Argv(usize, bool),
    /// Several inner argv ranges (`find -exec ... \;`).
    Multi(Vec<(usize, usize)>),
    /// A shell script text to parse.
    Script(String),
    /// `sh -c SCRIPT [$0 [$1 ...]]`: the index of SCRIPT.
    ShellC(usize),
    /// An interpreter running inline code (shell strings inside are analysed).
    Code(String),
    /// A shell that reads its script from stdin.
    Stdin,
}

/// Variable names that say their value is a command to run.
fn is_command_var(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n.len() > 3
        && ([
            "_COMMAND", "_CMD", "PAGER", "EDITOR", "ASKPASS", "_PROGRAM", "_HOOK", "_EXEC",
            "_SHELL", "_WRAPPER",
        ]
        .iter()
        .any(|s| n.ends_with(s))
            || n == "PERL5DB")
        && n != "SHELL"
}

/// Option names that say their value is a command to run.
fn is_command_opt(opt: &str) -> bool {
    let o = opt.to_ascii_lowercase();
    o.len() >= 3
        && (o.contains("command")
            || o.ends_with("-cmd")
            || o.ends_with("_cmd")
            || o == "cmd"
            || o == "exec"
            || o.starts_with("exec-")
            || o.ends_with("-exec")
            || o.contains("script")
            || o.contains("hook")
            || o.ends_with("program")
            || o.ends_with("wrapper")
            || o == "rsh"
            || o.ends_with("-rsh")
            || o.contains("askpass")
            || o.starts_with("on-")
            || o.contains("invoke"))
        && !matches!(
            o.as_str(),
            "script-security" | "no-scripts" | "ignore-scripts" | "hook-timeout"
        )
}

/// A value that names a program to run that is not a well-known system
/// tool: `/path/to/command`, `./x`, `/tmp/x`, a shell with arguments.
fn looks_like_program_path(v: &str) -> bool {
    let first = v.split_whitespace().next().unwrap_or("");
    if first.is_empty() || first.contains(DYN) {
        return !first.is_empty();
    }
    let base = cmd_name(first);
    (first.contains('/')
        && !([
            "/usr/bin/",
            "/bin/",
            "/usr/local/bin/",
            "/usr/sbin/",
            "/sbin/",
        ]
        .iter()
        .any(|d| first.starts_with(d))
            && !is_shell(&base)
            && !is_interpreter(&base)))
        || is_shell(&base)
}

/// Commands carried by code in a text: spawn calls (`system("..")`,
/// `Process.Start("..")`), TeX `\write18{..}` / `\directlua{..}` /
/// `psfile="`..`, backticks and `$(..)` kept literally.
pub fn code_commands(text: &str) -> Vec<String> {
    let mut out = shell_strings_in_code("", text);
    for (pat, lua) in [("\\write18{", false), ("\\directlua{", true)] {
        let mut rest = text;
        while let Some(p) = rest.find(pat) {
            let after = &rest[p + pat.len()..];
            let mut depth = 1;
            let mut end = after.len();
            for (i, ch) in after.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = i;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let body = &after[..end];
            if lua {
                out.extend(shell_strings_in_code("lua", body));
            } else {
                out.push(body.to_string());
            }
            rest = &after[end..];
            if out.len() >= 16 {
                return out;
            }
        }
    }
    // dvips: `\special{psfile="`cmd"}` runs cmd
    if let Some(p) = text.find("psfile=\"`") {
        let rest = &text[p + 9..];
        out.push(rest.split('"').next().unwrap_or("").to_string());
    }
    if text.contains('`') {
        for cap in BACKTICK.captures_iter(text).take(8) {
            if let Some(m) = cap.get(1) {
                out.push(m.as_str().to_string());
            }
        }
    }
    if text.contains("$(") {
        out.extend(substitution_bodies(text));
    }
    out
}

/// Values of command-named keys and quoted strings in a configuration
/// text (JSON, YAML, HCL, INI): each may be a command line.
fn config_values(text: &str) -> Vec<String> {
    static KEYED: once_cell::sync::Lazy<regex::Regex> = once_cell::sync::Lazy::new(|| {
        regex::Regex::new(
            r#"(?im)\b(?:shell|command|cmd|exec|execute|run|script|program|pre\w*|post\w*)\s*[:=]\s*([^\n,\]\}]+)"#,
        )
        .expect("config key regex")
    });
    static QUOTED: once_cell::sync::Lazy<regex::Regex> = once_cell::sync::Lazy::new(|| {
        regex::Regex::new(r#""((?:[^"\\]|\\.){1,512})""#).expect("quoted regex")
    });
    let mut out: Vec<String> = Vec::new();
    for cap in KEYED.captures_iter(text).take(16) {
        if let Some(m) = cap.get(1) {
            let v = m.as_str().trim().trim_matches(|c| c == '"' || c == '\'');
            if !v.is_empty() {
                out.push(v.to_string());
            }
        }
    }
    for cap in QUOTED.captures_iter(text).take(32) {
        if let Some(m) = cap.get(1)
            && m.as_str().contains(['/', ' '])
        {
            out.push(unescape_code_str(m.as_str()));
        }
    }
    out.truncate(24);
    out
}

/// Absolute or home-relative paths written inside a text (code, an
/// option value): `"/etc/passwd"`, `F=/etc/cron.d/x`, `:w ~/.bashrc`.
pub fn path_tokens(text: &str) -> Vec<String> {
    static PATH: once_cell::sync::Lazy<regex::Regex> = once_cell::sync::Lazy::new(|| {
        regex::Regex::new(
            r#"(?:^|[\s"'=(,:;{\[<>@])((?:~|\$HOME)(?:/[A-Za-z0-9._+@%-]*)+|(?:/[A-Za-z0-9._+@%-]+)+/?)"#,
        )
            .expect("path token regex")
    });
    if !text.contains('/') {
        return Vec::new();
    }
    PATH.captures_iter(text)
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str().replacen("$HOME", "~", 1))
        .take(32)
        .collect()
}

/// A file that will be run as a shell script: a shell extension, a
/// shebang naming a shell, or no extension in a bin directory.
fn is_script_path(path: &str, content: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    base.ends_with(".sh")
        || base.ends_with(".bash")
        || base.ends_with(".zsh")
        || base.ends_with(".command")
        || (content.starts_with("#!") && content.lines().next().is_some_and(|l| l.contains("sh")))
        || ((path.contains("/bin/") || path.starts_with("bin/")) && !base.contains('.'))
}

/// The bodies of `$(..)` and backtick substitutions written literally in
/// a text (at most 8).
fn substitution_bodies(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() && out.len() < 8 {
        if b[i] == b'$' && b.get(i + 1) == Some(&b'(') && b.get(i + 2) != Some(&b'(') {
            let start = i + 2;
            let mut depth = 1;
            let mut j = start;
            while j < b.len() {
                match b[j] {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            out.push(t[start..j.min(b.len())].to_string());
            i = j + 1;
        } else if b[i] == b'`' {
            let start = i + 1;
            let end = t[start..].find('`').map_or(b.len(), |p| start + p);
            out.push(t[start..end].to_string());
            i = end + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// Skip options; `vals` lists options that take a separate value. Returns the
/// index of the first operand.
fn skip_opts(argv: &[String], mut i: usize, vals: &[&str]) -> usize {
    while i < argv.len() {
        let a = &argv[i];
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') || a == "-" {
            return i;
        }
        if a.starts_with("--") {
            if !a.contains('=') && vals.contains(&a.as_str()) {
                i += 1;
            }
            i += 1;
            continue;
        }
        // short bundle: value-taking letter consumes the rest or the next word
        let cs: Vec<char> = a.chars().skip(1).collect();
        let mut consumed_next = false;
        for (k, c) in cs.iter().enumerate() {
            let opt = format!("-{c}");
            if vals.contains(&opt.as_str()) {
                if k == cs.len() - 1 {
                    consumed_next = true;
                }
                break;
            }
        }
        i += if consumed_next { 2 } else { 1 };
    }
    i
}

fn has_flag(argv: &[String], end: usize, short: char, long: &str) -> bool {
    argv[1..end.min(argv.len())].iter().any(|a| {
        (a.starts_with('-') && !a.starts_with("--") && a[1..].contains(short))
            || (!long.is_empty() && (a == long || a.starts_with(&format!("{long}="))))
    })
}

/// Whether the analyser unwraps this program (a wrapper, `source`, an
/// interpreter with inline code, ...): what it runs is analysed as such.
pub fn unwraps(name: &str, argv: &[String]) -> bool {
    !matches!(unwrap(name, argv), Unwrap::None)
}

fn unwrap(name: &str, argv: &[String]) -> Unwrap {
    let n = argv.len();
    match name {
        "sudo" => {
            let i = skip_opts(
                argv,
                1,
                &[
                    "-u",
                    "-g",
                    "-h",
                    "-p",
                    "-r",
                    "-t",
                    "-C",
                    "-D",
                    "-U",
                    "-T",
                    "-R",
                    "--user",
                    "--group",
                    "--host",
                    "--prompt",
                    "--role",
                    "--type",
                    "--close-from",
                    "--chdir",
                    "--other-user",
                    "--command-timeout",
                    "--chroot",
                ],
            );
            if i < n {
                if has_flag(argv, i, 's', "--shell") || has_flag(argv, i, 'i', "--login") {
                    return Unwrap::Script(argv[i..].join(" "));
                }
                Unwrap::Argv(i, false)
            } else {
                Unwrap::None
            }
        }
        "doas" => Unwrap::Argv(skip_opts(argv, 1, &["-u", "-C"]), false),
        "pkexec" => Unwrap::Argv(skip_opts(argv, 1, &["--user"]), false),
        "su" | "runuser" | "sg" => {
            let mut i = 1;
            while i < n {
                let a = &argv[i];
                if a == "-c" || a == "--command" {
                    if i + 1 < n {
                        return Unwrap::Script(argv[i + 1].clone());
                    }
                    return Unwrap::None;
                }
                if let Some(v) = a.strip_prefix("--command=") {
                    return Unwrap::Script(v.to_string());
                }
                if a == "--" && name == "runuser" {
                    return Unwrap::Argv(i + 1, false);
                }
                if a.starts_with('-') && !a.starts_with("--") && a.len() > 2 && a.ends_with('c') {
                    // bundled -lc
                    if i + 1 < n {
                        return Unwrap::Script(argv[i + 1].clone());
                    }
                }
                i += 1;
            }
            if name == "sg" && n > 2 {
                return Unwrap::Script(argv[2..].join(" "));
            }
            Unwrap::None
        }
        "env" => {
            // `-S STRING` / `-SSTRING` / `-iS STRING` / `--split-string=...`:
            // the string is split into a command line (plus any further
            // arguments)
            let split_script = |first: String, from: usize| {
                let mut s = first;
                for x in &argv[from.min(n)..] {
                    s.push(' ');
                    s.push_str(x);
                }
                Unwrap::Script(s)
            };
            let mut i = 1;
            while i < n {
                let a = &argv[i];
                if a == "--split-string" {
                    return match argv.get(i + 1) {
                        Some(v) => split_script(v.clone(), i + 2),
                        None => Unwrap::None,
                    };
                }
                if let Some(v) = a.strip_prefix("--split-string=") {
                    return split_script(v.to_string(), i + 1);
                }
                if a == "--unset" || a == "--chdir" || a == "--argv0" {
                    i += 2;
                    continue;
                }
                if a == "--" || a == "-" || a.starts_with("--") {
                    i += 1;
                    continue;
                }
                if let Some(bundle) = a.strip_prefix('-') {
                    let letters: Vec<char> = bundle.chars().collect();
                    let mut skip = 1;
                    for (k, c) in letters.iter().enumerate() {
                        let rest: String = letters[k + 1..].iter().collect();
                        match c {
                            'S' if rest.is_empty() => {
                                return match argv.get(i + 1) {
                                    Some(v) => split_script(v.clone(), i + 2),
                                    None => Unwrap::None,
                                };
                            }
                            'S' => return split_script(rest, i + 1),
                            'u' | 'C' | 'a' => {
                                if rest.is_empty() {
                                    skip = 2;
                                }
                                break;
                            }
                            _ => {}
                        }
                    }
                    i += skip;
                    continue;
                }
                if let Some(eq) = a.find('=')
                    && eq > 0
                    && a[..eq]
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    i += 1;
                    continue;
                }
                break;
            }
            Unwrap::Argv(i, false)
        }
        "nice" => {
            let mut i = 1;
            while i < n {
                let a = &argv[i];
                if a == "-n" || a == "--adjustment" {
                    i += 2;
                } else if a.starts_with('-') && a.len() > 1 {
                    i += 1;
                } else {
                    break;
                }
            }
            Unwrap::Argv(i, false)
        }
        "ionice" => {
            if argv.iter().any(|a| a == "-p" || a == "-P" || a == "--pid") {
                return Unwrap::None;
            }
            Unwrap::Argv(
                skip_opts(argv, 1, &["-c", "-n", "--class", "--classdata"]),
                false,
            )
        }
        "timeout" => {
            let i = skip_opts(argv, 1, &["-s", "-k", "--signal", "--kill-after"]);
            Unwrap::Argv(i + 1, false)
        }
        "nohup" | "builtin" | "unbuffer" | "torsocks" | "tsocks" | "busybox" | "toybox"
        | "caffeinate" | "catchsegv" | "nocache" | "eatmydata" | "fakeroot" | "dbus-launch"
        | "with-contenv" | "proxychains" | "proxychains4" | "firejail" | "numactl" | "nsenter"
        | "unshare" | "setpriv" | "valgrind" | "time" | "stdbuf" | "setsid" | "chronic" | "sem"
        | "systemd-inhibit" | "aa-exec" | "lxc-attach" => {
            let vals: &[&str] = match name {
                "proxychains" | "proxychains4" => &["-f"],
                "time" => &["-f", "-o", "--format", "--output"],
                "stdbuf" => &["-i", "-o", "-e", "--input", "--output", "--error"],
                "nsenter" => &["-t", "--target"],
                "aa-exec" => &["-p", "--profile"],
                "lxc-attach" => &["-n", "--name"],
                _ => &[],
            };
            let i = skip_opts(argv, 1, vals);
            if name == "caffeinate" || name == "proxychains" {
                return Unwrap::Argv(i, false);
            }
            Unwrap::Argv(i, false)
        }
        "command" => {
            if argv[1..]
                .iter()
                .take_while(|a| a.starts_with('-'))
                .any(|a| a.contains('v') || a.contains('V'))
            {
                return Unwrap::None;
            }
            Unwrap::Argv(skip_opts(argv, 1, &[]), false)
        }
        "exec" => Unwrap::Argv(skip_opts(argv, 1, &["-a"]), false),
        "xargs" => {
            let i = skip_opts(
                argv,
                1,
                &[
                    "-I",
                    "-n",
                    "-P",
                    "-L",
                    "-s",
                    "-d",
                    "-E",
                    "-a",
                    "--arg-file",
                    "--max-args",
                    "--max-procs",
                    "--delimiter",
                    "--max-lines",
                    "--max-chars",
                    "--eof",
                    "--replace",
                    "--process-slot-var",
                ],
            );
            // an empty input (`-a /dev/null`): the command runs once, as is
            let empty = argv
                .windows(2)
                .any(|w| matches!(w[0].as_str(), "-a" | "--arg-file") && w[1] == "/dev/null")
                || argv.iter().any(|a| a == "--arg-file=/dev/null");
            Unwrap::Argv(i, !empty)
        }
        "watch" => {
            let i = skip_opts(argv, 1, &["-n", "--interval", "-g", "-q", "--chgexit"]);
            if i >= n {
                return Unwrap::None;
            }
            if has_flag(argv, i, 'x', "--exec") {
                Unwrap::Argv(i, false)
            } else {
                Unwrap::Script(argv[i..].join(" "))
            }
        }
        "flock" => {
            let i = skip_opts(argv, 1, &["-w", "-E", "--timeout", "--conflict-exit-code"]);
            // lock file, then command or -c
            let j = i + 1;
            if j < n && (argv[j] == "-c" || argv[j] == "--command") {
                if j + 1 < n {
                    return Unwrap::Script(argv[j + 1].clone());
                }
                return Unwrap::None;
            }
            Unwrap::Argv(j, false)
        }
        "chroot" => {
            let i = skip_opts(argv, 1, &["--userspec", "--groups"]);
            Unwrap::Argv(i + 1, false)
        }
        "taskset" | "chrt" => {
            let i = skip_opts(argv, 1, &[]);
            Unwrap::Argv(i + 1, false)
        }
        // GTFOBins "shell" wrappers: one operand (architecture, time,
        // group), then the command
        "setarch" | "linux32" | "linux64" | "faketime" => {
            let i = if name == "setarch" || name == "faketime" {
                skip_opts(argv, skip_opts(argv, 1, &["-f"]) + 1, &[])
            } else {
                skip_opts(argv, 1, &[])
            };
            Unwrap::Argv(i, false)
        }
        "cpulimit" => Unwrap::Argv(
            skip_opts(
                argv,
                1,
                &["-l", "-p", "-e", "-m", "--limit", "--pid", "--exe"],
            ),
            false,
        ),
        "rlwrap" | "multitime" | "screen" | "entr" | "perf" => {
            let vals: &[&str] = match name {
                "rlwrap" => &["-f", "-H", "-l", "-P", "-S", "-z"],
                "multitime" => &["-n", "-s", "-i", "-o"],
                "screen" => &["-S", "-c", "-t", "-p", "-X", "-r", "-x"],
                _ => &[],
            };
            let mut i = skip_opts(argv, 1, vals);
            if name == "perf" {
                // perf stat|record|trace [options] command
                if i < n && matches!(argv[i].as_str(), "stat" | "record" | "trace") {
                    i = skip_opts(argv, i + 1, &["-e", "-o", "-p", "-t", "-r", "-g", "-F"]);
                } else {
                    return Unwrap::None;
                }
            }
            if name == "entr"
                && argv[1..i]
                    .iter()
                    .any(|a| a.starts_with('-') && a.contains('s'))
                && i < n
            {
                return Unwrap::Script(argv[i].clone());
            }
            Unwrap::Argv(i, false)
        }
        "capsh" => match argv.iter().position(|a| a == "--") {
            // `capsh ... -- ARGS`: ARGS go to bash
            Some(k) if argv.get(k + 1).is_some_and(|a| a == "-c") => argv
                .get(k + 2)
                .map_or(Unwrap::None, |c| Unwrap::Script(c.clone())),
            _ => Unwrap::None,
        },
        "hyperfine" => {
            let i = skip_opts(
                argv,
                1,
                &[
                    "-w",
                    "-r",
                    "-m",
                    "-M",
                    "-p",
                    "-c",
                    "-P",
                    "-L",
                    "-S",
                    "-n",
                    "--warmup",
                    "--runs",
                    "--prepare",
                    "--cleanup",
                    "--shell",
                    "--export-json",
                ],
            );
            if i < n {
                Unwrap::Script(argv[i..].join("\n"))
            } else {
                Unwrap::None
            }
        }
        "cgexec" => Unwrap::Argv(skip_opts(argv, 1, &["-g"]), false),
        "strace" | "ltrace" => Unwrap::Argv(
            skip_opts(
                argv,
                1,
                &[
                    "-o", "-e", "-p", "-s", "-u", "-E", "-a", "-P", "-I", "-S", "-X", "-b", "-n",
                ],
            ),
            false,
        ),
        "systemd-run" => Unwrap::Argv(
            skip_opts(
                argv,
                1,
                &[
                    "-p",
                    "-u",
                    "-E",
                    "--unit",
                    "--property",
                    "--setenv",
                    "-M",
                    "--machine",
                    "--uid",
                    "--gid",
                ],
            ),
            false,
        ),
        "script" => {
            let mut i = 1;
            while i < n {
                let a = &argv[i];
                let bundle_c = a.starts_with('-') && !a.starts_with("--") && a.ends_with('c');
                if (bundle_c || a == "--command") && i + 1 < n {
                    return Unwrap::Script(argv[i + 1].clone());
                }
                if let Some(v) = argv[i].strip_prefix("--command=") {
                    return Unwrap::Script(v.to_string());
                }
                i += 1;
            }
            Unwrap::None
        }
        "npx" | "pnpx" | "bunx" => Unwrap::Argv(
            skip_opts(argv, 1, &["-p", "--package", "-c", "--call"]),
            false,
        ),
        "npm" | "pnpm" | "yarn" | "bun"
            if argv
                .get(1)
                .is_some_and(|a| a == "exec" || a == "dlx" || a == "x") =>
        {
            Unwrap::Argv(
                skip_opts(argv, 2, &["-p", "--package", "-c", "--call"]),
                false,
            )
        }
        "git" => {
            // git -c core.pager=CMD / core.sshCommand=CMD / alias.x=!CMD
            for (k, a) in argv.iter().enumerate() {
                if a == "-c"
                    && let Some(kv) = argv.get(k + 1)
                    && let Some((key, val)) = kv.split_once('=')
                {
                    let key = key.to_ascii_lowercase();
                    let runs = matches!(
                        key.as_str(),
                        "core.pager"
                            | "core.sshcommand"
                            | "core.editor"
                            | "core.fsmonitor"
                            | "sequence.editor"
                            | "diff.external"
                            | "core.askpass"
                    ) || key.starts_with("pager.")
                        || (key.starts_with("alias.") && val.starts_with('!'));
                    if runs {
                        return Unwrap::Script(val.trim_start_matches('!').to_string());
                    }
                }
            }
            Unwrap::None
        }
        "source" | "." => {
            if matches!(
                argv.get(1).map(|s| s.as_str()),
                Some("/dev/stdin") | Some("-")
            ) {
                Unwrap::Stdin
            } else {
                Unwrap::None
            }
        }
        "awk" | "gawk" | "mawk" | "nawk" => {
            let i = skip_opts(
                argv,
                1,
                &["-F", "-v", "-f", "--field-separator", "--assign", "--file"],
            );
            if argv[1..]
                .iter()
                .any(|a| a == "-f" || a.starts_with("--file"))
            {
                return Unwrap::None;
            }
            match argv.get(i) {
                Some(prog) => Unwrap::Code(prog.clone()),
                None => Unwrap::None,
            }
        }
        "osascript" => {
            let mut code = String::new();
            for (k, a) in argv.iter().enumerate() {
                if a == "-e"
                    && let Some(c) = argv.get(k + 1)
                {
                    code.push_str(c);
                    code.push('\n');
                }
            }
            if code.is_empty() {
                Unwrap::None
            } else {
                Unwrap::Code(code)
            }
        }
        "coproc" => {
            // `coproc [NAME] cmd`: a NAME is only allowed before a compound
            // command, so a simple command starts right after `coproc`
            Unwrap::Argv(1, false)
        }
        "parallel" => {
            let i = skip_opts(
                argv,
                1,
                &[
                    "-j",
                    "--jobs",
                    "-S",
                    "--sshlogin",
                    "-a",
                    "--arg-file",
                    "-d",
                    "--delimiter",
                    "-I",
                    "--joblog",
                    "--results",
                    "--colsep",
                    "-n",
                    "-N",
                    "-L",
                ],
            );
            let end = argv[i.min(n)..]
                .iter()
                .position(|a| a.starts_with(":::"))
                .map(|p| p + i)
                .unwrap_or(n);
            if i >= end {
                return Unwrap::None;
            }
            if end == i + 1 && argv[i].contains(' ') {
                return Unwrap::Script(argv[i].clone());
            }
            Unwrap::Multi(vec![(i, end)])
        }
        "at" | "batch" => {
            if argv[1..]
                .iter()
                .any(|a| matches!(a.as_str(), "-l" | "-r" | "-d" | "-c" | "-f"))
            {
                Unwrap::None
            } else {
                Unwrap::Stdin
            }
        }
        _ if is_interpreter(name) => interpreter_code(name, argv),
        "eval" => {
            if n > 1 {
                Unwrap::Script(argv[1..].join(" "))
            } else {
                Unwrap::None
            }
        }
        "trap" => {
            if n > 2 && !argv[1].starts_with('-') {
                Unwrap::Script(argv[1].clone())
            } else {
                Unwrap::None
            }
        }
        "alias" => {
            for a in &argv[1..] {
                if let Some(eq) = a.find('=') {
                    return Unwrap::Script(a[eq + 1..].to_string());
                }
            }
            Unwrap::None
        }
        "ssh" => {
            let i = skip_opts(
                argv,
                1,
                &[
                    "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O",
                    "-o", "-p", "-Q", "-R", "-S", "-W", "-w", "-B",
                ],
            );
            if i + 1 < n {
                Unwrap::Script(argv[i + 1..].join(" "))
            } else {
                Unwrap::None
            }
        }
        "docker" | "podman" | "nerdctl" => {
            if argv.get(1).map(|s| s.as_str()) == Some("exec") {
                let i = skip_opts(
                    argv,
                    2,
                    &[
                        "-u",
                        "-w",
                        "-e",
                        "--env",
                        "--user",
                        "--workdir",
                        "--env-file",
                    ],
                );
                return Unwrap::Argv(i + 1, false);
            }
            Unwrap::None
        }
        "kubectl" | "oc" => {
            if argv.iter().any(|a| a == "exec")
                && let Some(p) = argv.iter().position(|a| a == "--")
            {
                return Unwrap::Argv(p + 1, false);
            }
            Unwrap::None
        }
        "find" => {
            let mut groups = Vec::new();
            let mut i = 1;
            while i < n {
                if matches!(argv[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let s = i + 1;
                    let mut e = s;
                    while e < n && argv[e] != ";" && argv[e] != "+" {
                        e += 1;
                    }
                    groups.push((s, e));
                    i = e + 1;
                } else {
                    i += 1;
                }
            }
            if groups.is_empty() {
                Unwrap::None
            } else {
                Unwrap::Multi(groups)
            }
        }
        "rsync" => {
            for (k, a) in argv.iter().enumerate() {
                if (a == "-e" || a == "--rsh") && k + 1 < n {
                    return Unwrap::Script(argv[k + 1].clone());
                }
                if let Some(v) = a.strip_prefix("--rsh=") {
                    return Unwrap::Script(v.to_string());
                }
            }
            Unwrap::None
        }
        _ if is_shell(name) => {
            // -c payload, possibly bundled (-lc, -ec, -xc)
            let mut i = 1;
            let mut reads_stdin = false;
            while i < n {
                let a = &argv[i];
                if a == "--" {
                    i += 1;
                    break;
                }
                if a == "-o"
                    || a == "-O"
                    || a == "+O"
                    || a == "+o"
                    || a == "--rcfile"
                    || a == "--init-file"
                {
                    i += 2;
                    continue;
                }
                if a.starts_with("--") {
                    i += 1;
                    continue;
                }
                if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
                    if a.contains('c') && a.starts_with('-') {
                        // the first operand after the options is the payload
                        let mut j = i + 1;
                        while j < n && argv[j].starts_with('-') && argv[j].len() > 1 {
                            j += 1;
                        }
                        if j < n {
                            return Unwrap::ShellC(j);
                        }
                        return Unwrap::None;
                    }
                    if a.contains('s') && a.starts_with('-') {
                        reads_stdin = true;
                    }
                    i += 1;
                    continue;
                }
                if a == "-" {
                    reads_stdin = true;
                    i += 1;
                    continue;
                }
                break;
            }
            if i >= n || reads_stdin {
                Unwrap::Stdin
            } else {
                Unwrap::None
            }
        }
        _ => Unwrap::None,
    }
}

/// Inline code of an interpreter invocation (`python -c CODE`, `perl -e CODE`,
/// `node -e CODE`, ...), or `Stdin` when it reads code from stdin.
fn interpreter_code(name: &str, argv: &[String]) -> Unwrap {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            break;
        }
        if !a.starts_with('-') || a == "-" {
            if a == "-" {
                return Unwrap::Stdin;
            }
            return Unwrap::None;
        }
        let takes_code = match base {
            "node" | "nodejs" | "bun" => matches!(a, "-e" | "--eval" | "-p" | "--print" | "-pe"),
            "php" => a == "-r",
            "perl" | "ruby" => !a.starts_with("--") && (a.ends_with('e') || a.ends_with('E')),
            _ if base.starts_with("python") || base == "py" || base == "pypy" => {
                !a.starts_with("--") && a.ends_with('c')
            }
            _ => a == "-e" || a == "-c",
        };
        if takes_code {
            return match argv.get(i + 1) {
                Some(code) => Unwrap::Code(code.clone()),
                None => Unwrap::None,
            };
        }
        if let Some(code) = a.strip_prefix("--eval=") {
            return Unwrap::Code(code.to_string());
        }
        // options with a separate value
        if matches!(a, "-m" | "-W" | "-X" | "-r" | "--require" | "-I" | "-M") {
            if a == "-m" {
                return Unwrap::None;
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    if i >= argv.len() {
        Unwrap::Stdin
    } else {
        Unwrap::None
    }
}

static CODE_CALL: once_cell::sync::Lazy<regex::Regex> = once_cell::sync::Lazy::new(|| {
    regex::Regex::new(
        r#"(?x)
        (?:os\.system|os\.popen|os\.exec\w*|subprocess\.\w+|commands\.getoutput|pty\.spawn
          |Kernel\.system|IO\.popen|Open3\.\w+|child_process\.\w+|execSync|execFileSync|spawnSync
          |os\.execute|io\.popen|callCommand|readProcess|Process\.Start|ProcessBuilder|getRuntime\(\)\.exec
          |\bexec|\bspawn|\bsystem|\bshell_exec|\bpassthru|\bpopen|\bproc_open|\bqx|%x
          |do\s+shell\s+script)
        \s*\(?\s*
        (?P<arg>\[[^\]]*\]|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\{[^}]*\})"#,
    )
    .expect("code call regex")
});

static CODE_STR: once_cell::sync::Lazy<regex::Regex> = once_cell::sync::Lazy::new(|| {
    regex::Regex::new(r#""((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'"#).expect("code str regex")
});

static BACKTICK: once_cell::sync::Lazy<regex::Regex> =
    once_cell::sync::Lazy::new(|| regex::Regex::new(r"`([^`]*)`").expect("backtick regex"));

/// Shell command strings passed to process-spawning calls inside interpreter
/// code: `os.system("...")`, `subprocess.run(["rm", "-rf", "/"])`,
/// `system "..."`, backticks in perl/ruby/php, `execSync('...')`.
pub fn shell_strings_in_code(name: &str, code: &str) -> Vec<String> {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let python = base.starts_with("python") || base == "py" || base == "pypy";
    let mut out = Vec::new();
    // the capture search is slow; most code has no spawn call at all
    let calls = CODE_CALL.is_match(code);
    for cap in CODE_CALL.captures_iter(if calls { code } else { "" }) {
        let whole = cap.get(0).map(|m| m.as_str()).unwrap_or("");
        if python && (whole.starts_with("exec") || whole.starts_with("spawn")) {
            continue; // Python's exec() runs Python
        }
        let Some(arg) = cap.name("arg") else { continue };
        let a = arg.as_str();
        if a.starts_with('[') {
            let words: Vec<String> = CODE_STR
                .captures_iter(a)
                .filter_map(|c| c.get(1).or_else(|| c.get(2)))
                .map(|m| unescape_code_str(m.as_str()))
                .collect();
            if !words.is_empty() {
                out.push(crate::words::display_argv(&words));
            }
        } else if a.starts_with('{') {
            out.push(a[1..a.len() - 1].to_string());
        } else {
            // further string / list arguments: spawn('rm', ['-rf', '/']),
            // system("rm", "-rf", "/")
            static CONT: once_cell::sync::Lazy<regex::Regex> = once_cell::sync::Lazy::new(|| {
                regex::Regex::new(r#"^\s*,\s*(\[[^\]]*\]|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"#)
                    .expect("code cont regex")
            });
            let mut words = vec![unescape_code_str(&a[1..a.len() - 1])];
            let mut rest = &code[arg.end()..];
            while let Some(c) = CONT.captures(rest) {
                let Some(item) = c.get(1) else { break };
                let t = item.as_str();
                if t.starts_with('[') {
                    words.extend(
                        CODE_STR
                            .captures_iter(t)
                            .filter_map(|c| c.get(1).or_else(|| c.get(2)))
                            .map(|m| unescape_code_str(m.as_str())),
                    );
                } else {
                    words.push(unescape_code_str(&t[1..t.len() - 1]));
                }
                rest = &rest[c.get(0).map(|m| m.end()).unwrap_or(rest.len())..];
                if words.len() > 64 {
                    break;
                }
            }
            if words.len() > 1 {
                out.push(crate::words::display_argv(&words));
            } else {
                out.extend(words);
            }
        }
        if out.len() >= 16 {
            break;
        }
    }
    if matches!(base, "awk" | "gawk" | "mawk" | "nawk") {
        static AWK_CMD: once_cell::sync::Lazy<regex::Regex> = once_cell::sync::Lazy::new(|| {
            regex::Regex::new(r#"\|\s*"((?:[^"\\]|\\.)*)"|"((?:[^"\\]|\\.)*)"\s*\|\s*getline"#)
                .expect("awk cmd regex")
        });
        let piped = code.contains('|') && AWK_CMD.is_match(code);
        for cap in AWK_CMD.captures_iter(if piped { code } else { "" }) {
            if let Some(m) = cap.get(1) {
                // `print ... | "cmd"`: cmd reads awk's output on stdin
                out.push(format!(": | {}", unescape_code_str(m.as_str())));
            } else if let Some(m) = cap.get(2) {
                out.push(unescape_code_str(m.as_str()));
            }
        }
    }
    if matches!(base, "perl" | "ruby" | "php") {
        for cap in BACKTICK.captures_iter(if code.contains('`') { code } else { "" }) {
            if let Some(m) = cap.get(1) {
                out.push(m.as_str().to_string());
            }
        }
    }
    out
}

fn unescape_code_str(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    parse::ansi_c_unescape(s)
}

/// Shell commands spawned by script code that an editor or debugger runs
/// (`gdb -ex 'python ...'`, `vim -c ':py3 ...'`, `vim -c ':lua ...'`,
/// GTFOBins): the code is searched like interpreter code.
fn embedded_code_payloads(t: &str) -> Vec<String> {
    let (lang, code) = match t.split_once(char::is_whitespace) {
        Some((w, rest)) => (w, rest),
        None => return Vec::new(),
    };
    let interp = match lang {
        "python" | "py" | "python3" | "py3" | "pyx" | "pythonx" | "pyfile" => "python3",
        "lua" | "luado" => "lua",
        "perl" | "perldo" => "perl",
        "ruby" | "rubydo" => "ruby",
        _ => return Vec::new(),
    };
    shell_strings_in_code(interp, code)
}

/// Shell commands carried in option values of otherwise ordinary tools.
fn option_payloads(name: &str, argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let val = |k: usize, flag: &str| -> Option<String> {
        let a = &argv[k];
        if a == flag {
            return argv.get(k + 1).cloned();
        }
        a.strip_prefix(&format!("{flag}=")).map(|v| v.to_string())
    };
    for k in 1..argv.len() {
        let a = argv[k].as_str();
        match name {
            "ssh" | "scp" | "sftp" | "rsync" | "autossh" => {
                let opt = if a == "-o" {
                    argv.get(k + 1).cloned()
                } else {
                    a.strip_prefix("-o")
                        .filter(|v| !v.is_empty())
                        .map(|v| v.to_string())
                };
                if let Some(o) = opt {
                    let l = o.to_ascii_lowercase();
                    for key in ["proxycommand", "localcommand", "knownhostscommand"] {
                        if let Some(rest) = l.strip_prefix(key) {
                            let v = &o[o.len() - rest.len()..];
                            out.push(v.trim_start_matches(['=', ' ']).to_string());
                        }
                    }
                }
            }
            // GTFOBins: debugger, editor and client commands that run a shell
            "gdb" | "cgdb" => {
                if let Some(v) = val(k, "-ex").or_else(|| val(k, "--eval-command")) {
                    let t = v.trim_start();
                    if let Some(c) = t.strip_prefix('!').or_else(|| t.strip_prefix("shell ")) {
                        out.push(c.to_string());
                    } else {
                        out.extend(embedded_code_payloads(t));
                    }
                }
            }
            "sed" | "gsed" if k == 1 => {
                for sc in crate::knowledge::sed_scripts(argv).0 {
                    out.extend(
                        crate::knowledge::sed_exec(&sc)
                            .into_iter()
                            .filter(|c| !c.is_empty()),
                    );
                }
            }
            "mysql" | "mariadb" | "psql" => {
                if let Some(v) = val(k, "-e")
                    .or_else(|| val(k, "-c"))
                    .or_else(|| val(k, "--execute"))
                    .or_else(|| val(k, "--command"))
                {
                    let t = v.trim_start();
                    if let Some(c) = t.strip_prefix("\\!").or_else(|| t.strip_prefix("system ")) {
                        out.push(c.to_string());
                    }
                }
            }
            "sqlite3" => {
                let t = a.trim_start();
                if k >= 2
                    && let Some(c) = t
                        .strip_prefix(".shell ")
                        .or_else(|| t.strip_prefix(".system "))
                {
                    out.push(c.to_string());
                }
            }
            "tmux" => {
                // only the subcommand itself (the first operand), once
                let k = skip_opts(argv, 1, &["-L", "-S", "-f", "-c", "-T"]);
                let a = argv.get(k).map_or("", String::as_str);
                if matches!(
                    a,
                    "new"
                        | "new-session"
                        | "new-window"
                        | "neww"
                        | "split-window"
                        | "splitw"
                        | "run-shell"
                        | "run"
                ) {
                    let rest = skip_opts(
                        argv,
                        k + 1,
                        &["-s", "-n", "-t", "-c", "-x", "-y", "-e", "-F", "-l"],
                    );
                    if rest < argv.len() {
                        out.push(argv[rest..].join(" "));
                    }
                }
                return out;
            }
            "vim" | "vi" | "nvim" | "ex" | "view" | "vimdiff" | "rvim" | "rview" | "gvim" => {
                let cmd = if a == "-c" || a == "--cmd" {
                    argv.get(k + 1).cloned()
                } else {
                    a.strip_prefix('+').map(|v| v.to_string())
                };
                if let Some(c) = cmd {
                    let c = c.trim_start_matches(':');
                    if let Some(bang) = c.strip_prefix('!') {
                        out.push(bang.to_string());
                    } else {
                        out.extend(embedded_code_payloads(c));
                    }
                }
            }
            "git" => {
                if a == "foreach" && k >= 1 && argv[..k].iter().any(|w| w == "submodule") {
                    let rest: Vec<&String> = argv[k + 1..]
                        .iter()
                        .filter(|w| *w != "--recursive" && *w != "--quiet")
                        .collect();
                    if !rest.is_empty() {
                        out.push(
                            rest.iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join(" "),
                        );
                    }
                }
                if argv[..k].iter().any(|w| w == "rebase")
                    && let Some(v) = val(k, "--exec").or_else(|| val(k, "-x"))
                {
                    out.push(v);
                }
                if a == "run" && argv[..k].iter().any(|w| w == "bisect") && k + 1 < argv.len() {
                    out.push(crate::words::display_argv(&argv[k + 1..]));
                }
            }
            "find" => {
                if a == "-fprint" || a == "-fprintf" || a == "-fls" {
                    // writes a file, not a command: handled as an exec-option
                }
            }
            _ => return out,
        }
        if out.len() >= 8 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argvs(s: &str) -> Vec<Vec<String>> {
        analyze(s).execs.into_iter().map(|e| e.argv).collect()
    }

    #[test]
    fn expansions() {
        assert!(argvs("X=r; ${X}m -rf /").contains(&vec!["rm".into(), "-rf".into(), "/".into()]));
        assert!(argvs("rm${IFS}-rf${IFS}/").contains(&vec!["rm".into(), "-rf".into(), "/".into()]));
        assert!(argvs("r\\m -rf /").contains(&vec!["rm".into(), "-rf".into(), "/".into()]));
        assert!(argvs("r''m -rf /").contains(&vec!["rm".into(), "-rf".into(), "/".into()]));
        assert!(argvs("$'\\x72\\x6d' -rf /").contains(&vec![
            "rm".into(),
            "-rf".into(),
            "/".into()
        ]));
        assert!(argvs("{rm,-rf,/}").contains(&vec!["rm".into(), "-rf".into(), "/".into()]));
        assert!(argvs("$(echo rm) -rf /").contains(&vec!["rm".into(), "-rf".into(), "/".into()]));
        assert!(
            argvs("sudo -u root env A=1 nice -n 5 rm -rf /").contains(&vec![
                "rm".into(),
                "-rf".into(),
                "/".into()
            ])
        );
        assert!(argvs("bash -c 'rm -rf /'").contains(&vec!["rm".into(), "-rf".into(), "/".into()]));
        assert!(argvs("echo 'rm -rf /' | sh").contains(&vec![
            "rm".into(),
            "-rf".into(),
            "/".into()
        ]));
        assert!(argvs("rm -rf ~").contains(&vec!["rm".into(), "-rf".into(), "~".into()]));
        assert!(argvs("for c in ls rm; do $c -rf /; done").contains(&vec![
            "rm".into(),
            "-rf".into(),
            "/".into()
        ]));
    }
}
