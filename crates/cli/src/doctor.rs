//! `hermes-tools doctor`: check what a config needs on this machine and say
//! what to fix, one line per check.

use serde_json::Value;
use std::path::Path;

use crate::out::{GREEN, RED, paint};

struct Report {
    failed: usize,
}

impl Report {
    fn ok(&mut self, what: &str) {
        println!("{}  {what}", paint("ok", GREEN));
    }
    fn fail(&mut self, what: &str, fix: &str) {
        self.failed += 1;
        println!("{}  {what}; fix: {fix}", paint("FAIL", RED));
    }
}

/// A directory the runtime writes to: present (or creatable) and writable.
fn writable_dir(r: &mut Report, key: &str, dir: &str) {
    let p = Path::new(dir);
    if !p.is_dir() {
        r.fail(
            &format!("{key}: '{dir}' is not a directory"),
            &format!("create it (mkdir -p {dir}) or change {key}"),
        );
        return;
    }
    let probe = p.join(format!(".hermes-tools-doctor-{}", std::process::id()));
    match std::fs::write(&probe, b"") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            r.ok(&format!("{key}: '{dir}' is writable"));
        }
        Err(e) => r.fail(
            &format!("{key}: '{dir}' is not writable ({e})"),
            "give this user write access or choose another directory",
        ),
    }
}

/// Whether the sandbox works here (the same probe the `auto` backend
/// decides on), what `auto` therefore chooses, and the Landlock ABI level.
fn sandbox_works(r: &mut Report, backend: &str) {
    let landlock = match hermes_exec::sandbox::landlock_abi() {
        Some(v) if v >= 6 => format!(
            "Landlock ABI {v}: applied to every sandboxed command (file system, signals, abstract sockets)"
        ),
        Some(v) => format!(
            "Landlock ABI {v}: applied to every sandboxed command (file system; signals and abstract sockets need ABI 6)"
        ),
        None => "Landlock not available (the sandbox's mounts and seccomp filter still hold)"
            .to_string(),
    };
    match hermes_exec::sandbox::usable() {
        Ok(()) => r.ok(&format!(
            "sandbox: bubblewrap runs here with its namespaces and seccomp filter{}; {landlock}",
            if backend == "auto" {
                " (terminal.backend 'auto' uses it)"
            } else {
                ""
            }
        )),
        Err(why) if backend == "auto" => r.ok(&format!(
            "sandbox: not usable here ({why}): terminal.backend 'auto' runs commands on this machine without a sandbox; {landlock}"
        )),
        Err(why) => r.fail(
            &format!("sandbox: {why}"),
            "install bubblewrap (apt-get install bubblewrap) and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), or run in a container that permits them",
        ),
    }
}

/// The sandbox's network policy as the runtime reads it, and each brokered
/// secret: where its value comes from (read now) and where it may go.
fn network_policy(r: &mut Report, text: &str) {
    let Ok(cfg) = hermes_runtime::config::Config::parse(text) else {
        return; // already reported by the runtime check
    };
    let t = &cfg.terminal;
    r.ok(&format!("terminal.network: {}", t.network.describe()));
    for (name, s) in &t.secrets {
        match s.load(name) {
            Ok(_) => r.ok(&format!(
                "terminal.secrets.{name}: the sandbox sees a placeholder; the proxy puts the value in request headers (HTTP, and HTTPS through its own CA) for {} only",
                s.hosts.join(", ")
            )),
            Err(e) => r.fail(&e, "set the variable or make the file readable"),
        }
    }
}

/// Each configured plugin opens, has the symbols and speaks this ABI (its
/// init is not run: that happens when a C host creates a runtime).
fn plugins_load(r: &mut Report, text: &str) {
    let Ok(cfg) = hermes_runtime::config::Config::parse(text) else {
        return; // already reported by the runtime check
    };
    let files = match cfg.plugins.files() {
        Ok(f) => f,
        Err(e) => {
            r.fail(&e.message, "point plugins.dirs at a readable folder");
            return;
        }
    };
    for f in files {
        match hermes_ffi::plugin::probe(&f) {
            Ok(_) => r.ok(&format!(
                "plugin '{}' loads (ABI {})",
                f.display(),
                hermes_ffi::plugin::PLUGIN_ABI_VERSION
            )),
            Err(e) => r.fail(
                &e.message,
                "rebuild the plugin against this hermes_tools.h, or fix its path",
            ),
        }
    }
}

/// The apptainer backend: a client that runs, an image it can start, and
/// the folders it writes.
fn apptainer_works(r: &mut Report, text: &str, term: &Value) {
    let parsed = hermes_runtime::config::Config::parse(text).ok();
    let Some(section) = parsed.as_ref().and_then(|c| c.terminal.apptainer.as_ref()) else {
        r.fail(
            "terminal.apptainer: missing or unreadable",
            "add a terminal.apptainer section with at least \"image\" (docs/json-shapes.md)",
        );
        return;
    };
    let cfg = section.to_exec(term["cwd"].as_str());
    let bin = cfg
        .binary
        .clone()
        .or_else(hermes_exec::apptainer::find_client);
    match bin {
        None => r.fail(
            "apptainer: neither 'apptainer' nor 'singularity' is on PATH",
            "install apptainer (https://apptainer.org/docs/admin/latest/installation.html; no Debian 12 package) or set terminal.apptainer.binary",
        ),
        Some(b) => match std::process::Command::new(&b).arg("--version").output() {
            Ok(o) if o.status.success() => r.ok(&format!(
                "apptainer: {} ({})",
                String::from_utf8_lossy(&o.stdout).trim(),
                b.display()
            )),
            Ok(o) => r.fail(
                &format!(
                    "apptainer: '{} --version' failed: {}",
                    b.display(),
                    String::from_utf8_lossy(&o.stderr).trim()
                ),
                "repair the apptainer installation",
            ),
            Err(e) => r.fail(
                &format!("apptainer: cannot run '{}' ({e})", b.display()),
                "point terminal.apptainer.binary at the apptainer or singularity program",
            ),
        },
    }
    if hermes_exec::apptainer::needs_build(&cfg.image) {
        r.ok(&format!(
            "apptainer: image '{}' is built once into {}",
            cfg.image,
            hermes_exec::apptainer::sif_path(&cfg.cache_dir, &cfg.image).display()
        ));
        let _ = std::fs::create_dir_all(&cfg.cache_dir);
        writable_dir(
            r,
            "terminal.apptainer.cache_dir",
            &cfg.cache_dir.display().to_string(),
        );
    } else if Path::new(&cfg.image).exists() {
        r.ok(&format!("apptainer: image '{}' exists", cfg.image));
    } else {
        r.fail(
            &format!("apptainer: image '{}' does not exist", cfg.image),
            "give a SIF file, a sandbox folder, or a docker:// reference",
        );
    }
    if let Some(o) = &cfg.overlay_root {
        let _ = std::fs::create_dir_all(o);
        writable_dir(
            r,
            "terminal.apptainer.overlay_dir",
            &o.display().to_string(),
        );
    }
}

/// The daytona backend: a key (never printed), an endpoint that answers and takes it.
fn daytona_works(r: &mut Report, text: &str) {
    let section = hermes_runtime::config::Config::parse(text)
        .ok()
        .and_then(|c| c.terminal.daytona.clone())
        .unwrap_or_default();
    let cfg = section.to_exec();
    if cfg.api_key.trim().is_empty() {
        r.fail(
            "daytona: no API key",
            "set DAYTONA_API_KEY (or terminal.daytona.api_key)",
        );
        return;
    }
    r.ok(&format!(
        "daytona: an API key is set; endpoint {}",
        cfg.api_url
    ));
    match hermes_exec::daytona::Daytona::new(cfg)
        .map_err(std::io::Error::other)
        .and_then(|d| d.check())
    {
        Ok(()) => r.ok("daytona: the endpoint answers and accepts the key"),
        Err(e) => r.fail(
            &format!("daytona: {e}"),
            "check DAYTONA_API_URL, the network, and that the key is valid",
        ),
    }
}

/// The modal backend: a token (never printed), an endpoint that answers
/// over gRPC and takes it (one AppGetOrCreate of the configured app).
fn modal_works(r: &mut Report, text: &str) {
    let section = hermes_runtime::config::Config::parse(text)
        .ok()
        .and_then(|c| c.terminal.modal.clone())
        .unwrap_or_default();
    let cfg = section.to_exec();
    if cfg.token_id.trim().is_empty() || cfg.token_secret.trim().is_empty() {
        r.fail(
            "modal: no token",
            "set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET (or terminal.modal.token_id/token_secret); `modal token new` makes one",
        );
        return;
    }
    r.ok(&format!("modal: a token is set; endpoint {}", cfg.api_url));
    match hermes_exec::modal::Modal::new(cfg)
        .map_err(std::io::Error::other)
        .and_then(|m| m.check())
    {
        Ok(()) => r.ok("modal: the endpoint answers and accepts the token"),
        Err(e) => r.fail(
            &format!("{e}"),
            "check terminal.modal.api_url (MODAL_SERVER_URL), the network, and that the token is valid",
        ),
    }
}

pub fn run(config: Option<&Path>) -> u8 {
    let mut r = Report { failed: 0 };
    let text = match config {
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) => t,
            Err(e) => {
                r.fail(
                    &format!("config {}: cannot read it ({e})", p.display()),
                    "pass an existing JSON file with --config",
                );
                return 1;
            }
        },
        None => "{}".into(),
    };
    let cfg: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            r.fail(&format!("config is not JSON ({e})"), "fix the JSON syntax");
            return 1;
        }
    };
    match crate::call::runtime(config) {
        Ok(rt) => {
            let tools: Vec<Value> = rt
                .definitions("")
                .ok()
                .and_then(|d| serde_json::from_str(&d).ok())
                .unwrap_or_default();
            r.ok(&format!("config builds a runtime ({} tools)", tools.len()));
            for (name, why) in crate::call::failed_mcp_servers(&rt) {
                r.fail(
                    &format!("mcp_servers.{name}: {why}"),
                    "check the server's command (installed? on PATH?), url and credentials; its tools are missing until it connects",
                );
            }
            rt.close();
        }
        Err(e) => r.fail(
            &format!("config: {e}"),
            "correct the key it names (docs/json-shapes.md)",
        ),
    }
    plugins_load(&mut r, &text);
    let term = &cfg["terminal"];
    let backend = term["backend"].as_str().unwrap_or("auto");
    if backend == "sandbox" || backend == "auto" {
        sandbox_works(&mut r, backend);
    }
    if matches!(backend, "sandbox" | "auto" | "docker" | "podman") {
        network_policy(&mut r, &text);
    }
    if backend == "daytona" {
        daytona_works(&mut r, &text);
    }
    if backend == "modal" {
        modal_works(&mut r, &text);
    }
    if backend == "apptainer" || backend == "singularity" {
        apptainer_works(&mut r, &text, term);
    }
    if let Some(cwd) = term["cwd"].as_str() {
        writable_dir(&mut r, "terminal.cwd", cwd);
    }
    for key in ["data_dir", "skills_dir", "workspace_root"] {
        if let Some(dir) = cfg[key].as_str() {
            writable_dir(&mut r, key, dir);
        }
    }
    if r.failed > 0 {
        println!("{} problem(s) found", r.failed);
        1
    } else {
        0
    }
}
