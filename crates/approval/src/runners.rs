//! Build and test runners that execute project code (red team 2, class
//! "runs workspace code"): `npm test|run|install|pack`, `cargo build|test`,
//! `go test|generate|run`, `pytest`, `python -m unittest|pytest`, `ctest`,
//! `pip install|wheel|download DIR`, `jest`, `vitest`, `tox`.
//!
//! Why: these programs are everyday and known, but what they run is the
//! project's own files (package.json scripts, build.rs, conftest.py,
//! *_test.go, setup.py, CTestTestfile.cmake). A model that wrote a build
//! script in an earlier call can run anything through `cargo build`, so the
//! engine reads the files each runner executes ([`plan`]) and judges them:
//! shell lines as commands, code by the commands it spawns (and, in the
//! known-safe posture, build-time code must be plain). The walk is bounded
//! (depth, entries, files, size) and skips dependency and output folders.

use crate::analyze::Exec;
use crate::argv::operands;

/// One thing a runner executes from the project.
#[derive(Debug, Clone)]
pub enum Run {
    /// A shell command line from a project file (a package.json script,
    /// `//go:generate`, a CTest `add_test`, tox `commands`).
    Shell { file: String, line: String },
    /// A code file run (or imported) by the runner, judged as `lang`:
    /// `build` marks build-time code (build.rs, setup.py, conftest.py, a
    /// build backend, a test config) that known-safe wants plain.
    Code {
        file: String,
        lang: &'static str,
        build: bool,
    },
    /// A project file whose content asks by itself (a cargo runner, an
    /// `.npmrc` script-shell).
    Risky { file: String, why: String },
    /// Files the runner executes that were not all read (caps).
    Unseen { why: String },
}

/// What a runner executes: the items, and the base names of project files
/// whose change in the same command line makes the run unseen.
#[derive(Debug, Default)]
pub struct Plan {
    pub runs: Vec<Run>,
    pub watch: Vec<&'static str>,
}

/// Reads a project file (the literal text this command wrote to it, or the
/// file on disk).
pub type Reader<'a> = &'a dyn Fn(&str) -> Option<String>;

const MAX_FILES: usize = 64;
const MAX_ENTRIES: usize = 4000;
const SKIP_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    "venv",
    ".venv",
    "__pycache__",
    ".tox",
    ".nox",
    "dist",
    "vendor",
    ".mypy_cache",
    ".pytest_cache",
];

/// A base-name pattern: `*` matches any run of characters (at most two).
pub fn name_matches(pat: &str, name: &str) -> bool {
    match pat.split_once('*') {
        None => pat == name,
        Some((pre, rest)) => {
            if !name.starts_with(pre) {
                return false;
            }
            let tail = &name[pre.len()..];
            match rest.split_once('*') {
                None => tail.ends_with(rest),
                Some((mid, suf)) => tail
                    .find(mid)
                    .is_some_and(|k| tail[k + mid.len()..].ends_with(suf)),
            }
        }
    }
}

/// Files under `dir` whose base name matches one of `pats` (bounded walk):
/// the files, and whether the walk stopped at a cap.
fn walk(dir: &str, pats: &[&str], depth: usize) -> (Vec<String>, bool) {
    let (mut out, capped) = walk_disk(dir, pats, depth);
    // files this command line writes (not on disk yet)
    WRITTEN.with(|w| {
        for p in w.borrow().iter() {
            let name = p.rsplit('/').next().unwrap_or(p);
            if p.starts_with(&format!("{dir}/"))
                && pats.iter().any(|pat| name_matches(pat, name))
                && !out.contains(p)
                && out.len() < MAX_FILES
            {
                out.push(p.clone());
            }
        }
    });
    (out, capped)
}

thread_local! {
    /// The files the command line being judged writes (set by [`plan`]).
    static WRITTEN: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn walk_disk(dir: &str, pats: &[&str], depth: usize) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_string(), 0usize)];
    let mut seen = 0usize;
    let mut capped = false;
    while let Some((d, lvl)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut names: Vec<(String, bool)> = rd
            .filter_map(|x| x.ok())
            .filter_map(|x| {
                let dir = x.file_type().ok()?.is_dir();
                Some((x.file_name().into_string().ok()?, dir))
            })
            .collect();
        names.sort();
        for (n, is_dir) in names {
            seen += 1;
            if seen > MAX_ENTRIES {
                return (out, true);
            }
            let p = format!("{d}/{n}");
            if is_dir {
                if lvl < depth && !SKIP_DIRS.contains(&n.as_str()) {
                    stack.push((p, lvl + 1));
                }
            } else if pats.iter().any(|pat| name_matches(pat, &n)) {
                if out.len() >= MAX_FILES {
                    capped = true;
                    continue;
                }
                out.push(p);
            }
        }
    }
    (out, capped)
}

fn code_files(
    plan: &mut Plan,
    dir: &str,
    pats: &'static [&'static str],
    depth: usize,
    lang: &'static str,
    build: bool,
) {
    let (files, capped) = walk(dir, pats, depth);
    for f in files {
        plan.runs.push(Run::Code {
            file: f,
            lang,
            build,
        });
    }
    if capped {
        plan.runs.push(Run::Unseen {
            why: format!("more than {MAX_FILES} project files ({})", pats.join(" ")),
        });
    }
    plan.watch.extend_from_slice(pats);
}

/// The project directory a runner works in: `-C DIR`, `--prefix DIR`,
/// `--manifest-path DIR/Cargo.toml`, `--rootdir`, else `dir`.
fn base_dir(e: &Exec, dir: &str) -> String {
    let a = &e.argv;
    let join = |d: &str| {
        if d.starts_with('/') {
            d.to_string()
        } else {
            crate::words::norm_path(&format!("{dir}/{d}"))
        }
    };
    for (k, w) in a.iter().enumerate() {
        let next = a.get(k + 1).map(|s| s.as_str());
        match w.as_str() {
            "-C" | "--prefix" | "--cwd" | "--dir" => {
                if let Some(d) = next {
                    return join(d);
                }
            }
            "--manifest-path" => {
                if let Some(d) = next {
                    return join(d.rsplit_once('/').map_or(".", |x| x.0));
                }
            }
            _ => {}
        }
        for p in ["--manifest-path=", "--prefix=", "--cwd=", "--dir="] {
            if let Some(v) = w.strip_prefix(p) {
                let v = if p == "--manifest-path=" {
                    v.rsplit_once('/').map_or(".", |x| x.0)
                } else {
                    v
                };
                return join(v);
            }
        }
    }
    dir.to_string()
}

/// Whether `e` is a runner that executes project code.
pub fn is_runner(e: &Exec) -> bool {
    kind(e).is_some_and(|k| !matches!(k, Kind::None))
}

enum Kind {
    Npm(String),
    Cargo(bool),
    GoTest,
    GoGenerate,
    GoRun,
    Pytest,
    Unittest,
    Ctest,
    Pip(String),
    Jest,
    Tox,
    None,
}

fn kind(e: &Exec) -> Option<Kind> {
    let a = &e.argv;
    let ops = operands(
        a,
        &[
            "-C",
            "--prefix",
            "-p",
            "--package",
            "--manifest-path",
            "-w",
            "-d",
        ],
    );
    let sub = ops.first().copied().unwrap_or("");
    let n = e.name.as_str();
    Some(match n {
        "npm" | "pnpm" | "yarn" | "bun" => {
            let script = match sub {
                "test" | "t" | "tst" => "test".to_string(),
                "start" | "stop" | "restart" => sub.to_string(),
                "run" | "run-script" | "rs" | "urn" => ops.get(1)?.to_string(),
                "install" | "i" | "in" | "ins" | "inst" | "insta" | "instal" | "isnt" | "isnta"
                | "isntal" | "isntall" | "ci" | "clean-install" | "install-clean" | "add"
                | "rebuild" | "rb" | "link" | "ln" | "pack" | "publish" => {
                    "<lifecycle>".to_string()
                }
                "" if n == "yarn" => "<lifecycle>".to_string(),
                s if n == "yarn" && !s.starts_with('-') && !YARN_BUILTIN.contains(&s) => {
                    s.to_string()
                }
                _ => return Some(Kind::None),
            };
            Kind::Npm(script)
        }
        "cargo" => match sub {
            "build" | "b" | "check" | "c" | "clippy" | "doc" | "d" | "rustc" | "fix"
            | "rustdoc" => Kind::Cargo(false),
            "test" | "t" | "run" | "r" | "bench" | "nextest" | "miri" => Kind::Cargo(true),
            "install" if a.iter().any(|w| w == "--path" || w.starts_with("--path=")) => {
                Kind::Cargo(false)
            }
            _ => Kind::None,
        },
        "go" => match sub {
            "test" => Kind::GoTest,
            "generate" => Kind::GoGenerate,
            "run" => Kind::GoRun,
            _ => Kind::None,
        },
        "pytest" | "py.test" => Kind::Pytest,
        "ctest" => Kind::Ctest,
        "jest" | "vitest" => Kind::Jest,
        "tox" | "nox" => Kind::Tox,
        "pip" | "pip3" | "uv" => pip_kind(a, &ops),
        _ if crate::analyze::is_interpreter(n) && n.starts_with("python") => {
            let m = a
                .iter()
                .position(|w| w == "-m")
                .and_then(|k| a.get(k + 1))
                .map(|s| s.as_str());
            match m {
                Some("pytest") => Kind::Pytest,
                Some("unittest") => Kind::Unittest,
                Some("pip") => {
                    let k = a.iter().position(|w| w == "-m").unwrap_or(0);
                    let rest: Vec<String> = a[k + 1..].to_vec();
                    let ops = operands(&rest, &[]);
                    pip_kind(&rest, &ops)
                }
                _ => Kind::None,
            }
        }
        _ => Kind::None,
    })
}

const YARN_BUILTIN: &[&str] = &[
    "add",
    "audit",
    "autoclean",
    "bin",
    "cache",
    "check",
    "config",
    "create",
    "dlx",
    "exec",
    "generate-lock-entry",
    "global",
    "help",
    "import",
    "info",
    "init",
    "install",
    "licenses",
    "link",
    "list",
    "login",
    "logout",
    "node",
    "outdated",
    "owner",
    "pack",
    "policies",
    "publish",
    "remove",
    "tag",
    "team",
    "unlink",
    "unplug",
    "upgrade",
    "upgrade-interactive",
    "version",
    "versions",
    "why",
    "workspace",
    "workspaces",
    "set",
    "up",
    "dedupe",
    "npm",
    "plugin",
    "constraints",
    "explain",
    "patch",
    "patch-commit",
    "rebuild",
    "search",
    "stage",
];

fn pip_kind(a: &[String], ops: &[&str]) -> Kind {
    let sub = ops.first().copied().unwrap_or("");
    let sub = if sub == "pip" {
        ops.get(1).copied().unwrap_or("")
    } else {
        sub
    };
    if !matches!(sub, "install" | "wheel" | "download" | "sync" | "build") {
        return Kind::None;
    }
    // a local project: `.`, `./x`, `-e .`, an absolute directory
    let local = a.iter().skip(1).enumerate().find_map(|(k, w)| {
        let prev = a.get(k).map(|s| s.as_str()).unwrap_or("");
        let v = w
            .strip_prefix("--editable=")
            .or_else(|| w.strip_prefix("-e").filter(|v| !v.is_empty()))
            .unwrap_or(w);
        let is_opt_value = matches!(
            prev,
            "-w" | "--wheel-dir"
                | "-d"
                | "--dest"
                | "-r"
                | "--requirement"
                | "-c"
                | "-t"
                | "--target"
                | "--prefix"
                | "--root"
                | "-i"
                | "--index-url"
        );
        (!is_opt_value
            && !v.starts_with('-')
            && (v == "."
                || v == ".."
                || v.starts_with("./")
                || v.starts_with("../")
                || (v.starts_with('/') && std::path::Path::new(v).is_dir())))
        .then(|| v.to_string())
    });
    match local {
        Some(d) => Kind::Pip(d),
        None if sub == "build" => Kind::Pip(".".into()),
        None => Kind::None,
    }
}

/// The project files `e` executes, or `None` when it is not a runner.
/// `dir` is the directory it runs in; `read` gives a file's text;
/// `written` lists the files the command line writes (found like files on
/// disk).
pub fn plan(e: &Exec, dir: &str, read: Reader, written: &[String]) -> Option<Plan> {
    let k = kind(e)?;
    WRITTEN.with(|w| *w.borrow_mut() = written.to_vec());
    let base = base_dir(e, dir);
    let mut plan = Plan::default();
    match k {
        Kind::None => return None,
        Kind::Npm(script) => npm(&mut plan, &base, &script, read),
        Kind::Cargo(runs_tests) => {
            plan.watch
                .extend_from_slice(&["Cargo.toml", "build.rs", "config.toml", "config"]);
            for cfg in [".cargo/config.toml", ".cargo/config"] {
                let p = format!("{base}/{cfg}");
                if let Some(t) = read(&p) {
                    cargo_config(&mut plan, &p, &t);
                }
            }
            let mut builds: Vec<String> = Vec::new();
            let manifest = format!("{base}/Cargo.toml");
            if let Some(t) = read(&manifest)
                && let Some(b) = toml_string(&t, "build")
            {
                builds.push(crate::words::norm_path(&format!("{base}/{b}")));
            }
            let (found, capped) = walk(&base, &["build.rs"], 3);
            builds.extend(found);
            builds.push(format!("{base}/build.rs"));
            builds.sort();
            builds.dedup();
            for b in builds {
                if read(&b).is_some() {
                    plan.runs.push(Run::Code {
                        file: b,
                        lang: "rust",
                        build: true,
                    });
                }
            }
            if capped {
                plan.runs.push(Run::Unseen {
                    why: "more build scripts than read".into(),
                });
            }
            if runs_tests {
                code_files(&mut plan, &base, &["*.rs"], 4, "rust", false);
            }
        }
        Kind::GoTest => {
            let deep = e.argv.iter().any(|w| w.ends_with("/..."));
            code_files(
                &mut plan,
                &base,
                &["*_test.go"],
                if deep { 4 } else { 0 },
                "go",
                false,
            );
        }
        Kind::GoRun => code_files(&mut plan, &base, &["*.go"], 0, "go", false),
        Kind::GoGenerate => {
            let deep = e.argv.iter().any(|w| w.ends_with("/..."));
            let (files, capped) = walk(&base, &["*.go"], if deep { 4 } else { 0 });
            plan.watch.push("*.go");
            for f in files {
                if let Some(t) = read(&f) {
                    for l in t.lines() {
                        if let Some(c) = l.trim_start().strip_prefix("//go:generate ") {
                            plan.runs.push(Run::Shell {
                                file: f.clone(),
                                line: c.to_string(),
                            });
                        }
                    }
                }
            }
            if capped {
                plan.runs.push(Run::Unseen {
                    why: "more Go files than read".into(),
                });
            }
        }
        Kind::Pytest | Kind::Unittest => {
            code_files(&mut plan, &base, &["conftest.py"], 4, "python", true);
            code_files(
                &mut plan,
                &base,
                &["test_*.py", "*_test.py", "test*.py"],
                4,
                "python",
                false,
            );
            for ini in ["pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"] {
                let p = format!("{base}/{ini}");
                if let Some(t) = read(&p)
                    && let Some(why) = pytest_ini(&t)
                {
                    plan.runs.push(Run::Risky { file: p, why });
                }
            }
            plan.watch
                .extend_from_slice(&["pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"]);
        }
        Kind::Ctest => {
            let (files, capped) = walk(&base, &["CTestTestfile.cmake"], 3);
            plan.watch.push("CTestTestfile.cmake");
            for f in files {
                if let Some(t) = read(&f) {
                    ctest(&mut plan, &f, &t);
                }
            }
            if capped {
                plan.runs.push(Run::Unseen {
                    why: "more CTest files than read".into(),
                });
            }
        }
        Kind::Pip(d) => {
            let pd = if d.starts_with('/') {
                d
            } else {
                crate::words::norm_path(&format!("{base}/{d}"))
            };
            plan.watch
                .extend_from_slice(&["setup.py", "pyproject.toml", "*.py"]);
            let setup = format!("{pd}/setup.py");
            if read(&setup).is_some() {
                plan.runs.push(Run::Code {
                    file: setup,
                    lang: "python",
                    build: true,
                });
            }
            let pyproject = format!("{pd}/pyproject.toml");
            if let Some(t) = read(&pyproject) {
                pyproject_backend(&mut plan, &pd, &pyproject, &t);
            }
        }
        Kind::Jest => {
            code_files(
                &mut plan,
                &base,
                &["jest.config.*", "vitest.config.*", "vite.config.*"],
                0,
                "node",
                true,
            );
            code_files(
                &mut plan,
                &base,
                &["*.test.js", "*.spec.js", "*.test.ts", "*.spec.ts"],
                4,
                "node",
                false,
            );
        }
        Kind::Tox => {
            plan.watch.extend_from_slice(&["tox.ini", "noxfile.py"]);
            let ini = format!("{base}/tox.ini");
            if let Some(t) = read(&ini) {
                let mut in_cmds = false;
                for l in t.lines() {
                    let tl = l.trim();
                    if let Some(v) = tl
                        .strip_prefix("commands")
                        .map(str::trim_start)
                        .and_then(|r| r.strip_prefix('='))
                    {
                        in_cmds = true;
                        if !v.trim().is_empty() {
                            plan.runs.push(Run::Shell {
                                file: ini.clone(),
                                line: v.trim().to_string(),
                            });
                        }
                    } else if in_cmds && l.starts_with([' ', '\t']) && !tl.is_empty() {
                        plan.runs.push(Run::Shell {
                            file: ini.clone(),
                            line: tl.to_string(),
                        });
                    } else {
                        in_cmds = false;
                    }
                }
            }
            let nox = format!("{base}/noxfile.py");
            if read(&nox).is_some() {
                plan.runs.push(Run::Code {
                    file: nox,
                    lang: "python",
                    build: true,
                });
            }
        }
    }
    Some(plan)
}

fn npm(plan: &mut Plan, base: &str, script: &str, read: Reader) {
    plan.watch.extend_from_slice(&["package.json", ".npmrc"]);
    let pj = format!("{base}/package.json");
    let rc = format!("{base}/.npmrc");
    if let Some(t) = read(&rc) {
        for l in t.lines() {
            let key = l.split('=').next().unwrap_or("").trim();
            if matches!(
                key,
                "script-shell"
                    | "node-options"
                    | "onload-script"
                    | "shell"
                    | "git"
                    | "userconfig"
                    | "globalconfig"
                    | "init-module"
            ) {
                plan.runs.push(Run::Risky {
                    file: rc.clone(),
                    why: format!("{key} in the project's .npmrc runs a program"),
                });
            }
        }
    }
    let Some(text) = read(&pj) else {
        return;
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        plan.runs.push(Run::Unseen {
            why: format!("{pj} (not valid JSON)"),
        });
        return;
    };
    let scripts = v.get("scripts").and_then(|s| s.as_object());
    let names: Vec<String> = if script == "<lifecycle>" {
        [
            "preinstall",
            "install",
            "postinstall",
            "prepublish",
            "preprepare",
            "prepare",
            "postprepare",
            "prepack",
            "postpack",
            "prepublishOnly",
            "publish",
            "postpublish",
            "dependencies",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    } else {
        vec![
            format!("pre{script}"),
            script.to_string(),
            format!("post{script}"),
        ]
    };
    for n in names {
        if let Some(line) = scripts.and_then(|s| s.get(&n)).and_then(|x| x.as_str()) {
            plan.runs.push(Run::Shell {
                file: pj.clone(),
                line: line.to_string(),
            });
        }
    }
}

/// `key = "value"` at the top of a TOML text (first match, any table).
fn toml_string(t: &str, key: &str) -> Option<String> {
    t.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches(['"', '\'']).to_string())
    })
}

fn cargo_config(plan: &mut Plan, path: &str, t: &str) {
    for l in t.lines() {
        let Some((k, v)) = l.split_once('=') else {
            continue;
        };
        let k = k.trim().trim_matches('"');
        let v = v.trim();
        let risky = match k {
            "runner"
            | "rustc-wrapper"
            | "rustc-workspace-wrapper"
            | "rustc"
            | "rustdoc"
            | "linker"
            | "ar" => true,
            "rustflags" | "rustdocflags" => {
                v.contains("linker") || v.contains("link-arg") || v.contains("-Z")
            }
            _ => k.starts_with("target.") && (k.ends_with(".runner") || k.ends_with(".linker")),
        };
        if risky {
            plan.runs.push(Run::Risky {
                file: path.to_string(),
                why: format!("{k} = {v} in the project's cargo config runs a program"),
            });
        }
    }
}

fn pytest_ini(t: &str) -> Option<String> {
    for l in t.lines() {
        let l = l.trim();
        let Some((k, v)) = l.split_once('=') else {
            continue;
        };
        let k = k.trim();
        if matches!(k, "addopts" | "required_plugins")
            && (v.contains("-p ") || v.contains("-p=") || v.contains("--pdbcls"))
            || k == "pytest_plugins"
        {
            return Some(format!("{k} = {} loads a plugin", v.trim()));
        }
    }
    None
}

fn ctest(plan: &mut Plan, file: &str, t: &str) {
    for l in t.lines() {
        let l = l.trim();
        let lower = l.to_ascii_lowercase();
        if lower.starts_with("execute_process") || lower.starts_with("include(") {
            plan.runs.push(Run::Risky {
                file: file.to_string(),
                why: format!("{l} in a CTest file runs or loads code"),
            });
            continue;
        }
        let Some(body) = lower
            .starts_with("add_test(")
            .then(|| l["add_test(".len()..].trim_end_matches(')'))
        else {
            continue;
        };
        let words = cmake_words(body);
        // `add_test(NAME cmd args...)` or `add_test(NAME name COMMAND cmd ...)`
        let rest: Vec<String> = match words.iter().position(|w| w == "COMMAND") {
            Some(k) => words[k + 1..].to_vec(),
            None => words.iter().skip(1).cloned().collect(),
        };
        if !rest.is_empty() {
            plan.runs.push(Run::Shell {
                file: file.to_string(),
                line: crate::words::display_argv(&rest),
            });
        }
    }
}

fn cmake_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut q = false;
    let mut any = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                q = !q;
                any = true;
            }
            '\\' if q => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if c.is_whitespace() && !q => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn pyproject_backend(plan: &mut Plan, pd: &str, file: &str, t: &str) {
    let backend = toml_string(t, "build-backend");
    let paths: Vec<String> = t
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "backend-path").then(|| {
                v.trim()
                    .trim_matches(['[', ']'])
                    .split(',')
                    .map(|s| s.trim().trim_matches(['"', '\'']).to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
        })
        .unwrap_or_default();
    if paths.is_empty() {
        return;
    }
    // an in-tree build backend: project code run by the build
    let module = backend
        .as_deref()
        .map(|b| b.split(':').next().unwrap_or(b).replace('.', "/"))
        .unwrap_or_default();
    for p in paths {
        let d = crate::words::norm_path(&format!("{pd}/{p}"));
        let cands = [
            format!("{d}/{module}.py"),
            format!("{d}/{module}/__init__.py"),
        ];
        match cands.iter().find(|c| std::path::Path::new(c).is_file()) {
            Some(c) => plan.runs.push(Run::Code {
                file: c.clone(),
                lang: "python",
                build: true,
            }),
            None => plan.runs.push(Run::Risky {
                file: file.to_string(),
                why: format!("in-tree build backend {module} in {p} not found to read"),
            }),
        }
    }
}

/// Shell commands spawned by Rust (`Command::new("sh").arg("-c").arg("..")`)
/// and Go (`exec.Command("sh", "-c", "..")`) code: argv lists of literal
/// strings. Other languages go through `analyze::shell_strings_in_code`.
pub fn spawned_in_code(lang: &str, code: &str) -> Vec<Vec<String>> {
    use once_cell::sync::Lazy;
    static RUST: Lazy<regex::Regex> = Lazy::new(|| {
        regex::Regex::new(r#"Command::new\(\s*"((?:[^"\\]|\\.)*)"\s*\)((?:\s*\.\s*(?:arg|args|current_dir|env|stdin|stdout|stderr)\s*\((?:[^()]|\([^()]*\))*\))*)"#)
            .expect("rust spawn regex")
    });
    static GO: Lazy<regex::Regex> = Lazy::new(|| {
        regex::Regex::new(r#"exec\.Command(?:Context)?\(([^)]*)\)"#).expect("go spawn regex")
    });
    static STR: Lazy<regex::Regex> =
        Lazy::new(|| regex::Regex::new(r#""((?:[^"\\]|\\.)*)"|`([^`]*)`"#).expect("str regex"));
    let unq = |s: &str| s.replace("\\\"", "\"").replace("\\\\", "\\");
    let mut out = Vec::new();
    match lang {
        "rust" => {
            for c in RUST.captures_iter(code).take(32) {
                let mut w = vec![unq(&c[1])];
                let chain = c.get(2).map(|m| m.as_str()).unwrap_or("");
                // only `.arg(..)` / `.args(..)` strings
                static ARG: Lazy<regex::Regex> = Lazy::new(|| {
                    regex::Regex::new(r#"\.\s*args?\s*\(((?:[^()]|\([^()]*\))*)\)"#)
                        .expect("rust arg regex")
                });
                for a in ARG.captures_iter(chain) {
                    for s in STR.captures_iter(&a[1]) {
                        w.push(unq(s
                            .get(1)
                            .or_else(|| s.get(2))
                            .map_or("", |m| m.as_str())));
                    }
                }
                out.push(w);
            }
        }
        "go" => {
            for c in GO.captures_iter(code).take(32) {
                let w: Vec<String> = STR
                    .captures_iter(&c[1])
                    .map(|s| unq(s.get(1).or_else(|| s.get(2)).map_or("", |m| m.as_str())))
                    .collect();
                if !w.is_empty() {
                    out.push(w);
                }
            }
        }
        _ => {}
    }
    out
}

/// Build-time code (build.rs, setup.py, conftest.py, a backend, a test
/// config) that known-safe allows: no process, deletion, network or
/// dynamic code APIs of Rust or Go (other languages:
/// `effects::inline_code_is_plain`).
pub fn rust_go_plain(code: &str) -> bool {
    use once_cell::sync::Lazy;
    static RISKY: Lazy<regex::Regex> = Lazy::new(|| {
        regex::Regex::new(r"\b(Command::new|process::Command|remove_dir_all|remove_file|TcpStream|UdpSocket|libc::|unsafe\b|exec\.Command|os\.RemoveAll|os\.Remove|syscall\.|net\.Dial|http\.(Get|Post)|plugin\.Open)")
            .expect("rust go risky regex")
    });
    !RISKY.is_match(code)
}
