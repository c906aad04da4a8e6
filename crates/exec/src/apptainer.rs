//! The apptainer backend (also answering to `singularity`): what HPC
//! clusters allow (no root daemon). One instance per task, started on the
//! task's first command the way the original does it (`instance start
//! --containall --no-home`, a writable overlay directory kept per task so
//! files survive between commands, or `--writable-tmpfs` without one), each
//! command `bash -c` through `exec instance://<name>`, and `instance stop`
//! at the task's cleanup and at the runtime's close.
//!
//! Images: a SIF file or a sandbox directory is used as it is; a
//! `docker://`, `docker-daemon:`, `oras://`, `library://` or `shub://`
//! reference is built once into a SIF in the cache folder (the build goes
//! to a temporary name, then is renamed, so a crashed build never leaves a
//! half image that later runs).
//!
//! Commands are marked (`--env HERMES_TOOLS_TREE=<token>`) and killed inside
//! the instance by that mark, as on the docker and ssh backends; the
//! client process is killed too when SIGKILL follows. File tools go through
//! `remote_fs` scripts run in the task's instance. Rootless: nothing here
//! needs privileges the user's `apptainer` does not have (a directory
//! overlay needs apptainer >= 1.1 with fuse-overlayfs when unprivileged).
//!
//! The client gets a short allow-listed environment (PATH, HOME, the
//! runtime dirs, `APPTAINER_*`/`SINGULARITY_*`), and `--cleanenv` keeps this
//! process's environment out of the instance: a command sees the terminal's
//! environment only.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::env::{Environment, Remote, find_program, task_key};
use crate::local::spawn_argv;
use crate::remote_fs::{
    BOOT_SCRIPT, Boot, RemoteFs, RemoteShell, ScriptOutput, command_script, parse_boot,
    run_capture, shq,
};
use crate::spawn::{SpawnRequest, Spawned};
use crate::tree::{MARK_VAR, kill_tree};

const NOT_STATE: &[&str] = &["_", "SHLVL", "PWD", "OLDPWD", "HOSTNAME", MARK_VAR];

/// Image references apptainer pulls and builds (not files here).
const REMOTE_PREFIXES: &[&str] = &[
    "docker://",
    "docker-daemon:",
    "oras://",
    "library://",
    "shub://",
];

/// Variables of this process the apptainer client may see.
const CLIENT_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "TMPDIR",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
];

/// `"terminal": {"apptainer": {...}}` as the exec layer takes it.
#[derive(Clone, Debug, Default)]
pub struct ApptainerConfig {
    /// The client: a path, or `None` for `apptainer`, else `singularity`, on PATH.
    pub binary: Option<PathBuf>,
    /// A SIF file, a sandbox directory, or a reference to build from.
    pub image: String,
    /// Where SIFs built from references go (`<cache>/<name>-<hash>.sif`).
    pub cache_dir: PathBuf,
    /// Per-task overlay directories live under it (`<root>/<task>`), so a
    /// task's files survive between its commands and, with
    /// `keep_overlays`, between runtimes. `None`: `--writable-tmpfs`.
    pub overlay_root: Option<PathBuf>,
    /// Keep a task's overlay at its cleanup (the original's persistent mode).
    pub keep_overlays: bool,
    /// Extra binds, `src[:dst[:ro|rw]]`.
    pub binds: Vec<String>,
    /// A folder of this machine bound at the same path and used as the
    /// default working directory.
    pub workspace: Option<PathBuf>,
    /// `--memory` (e.g. `"2G"`), needs cgroups v2 delegation when rootless.
    pub memory: Option<String>,
    /// `--cpus`.
    pub cpus: Option<f64>,
    /// Give each task's instance a folder of this machine at
    /// [`crate::container::SHARED_INSIDE`] (execute_code's runs: their
    /// stubs and the channel's socket are made there directly).
    pub share_runs: bool,
    /// Folders of this machine bound read-only at the same path (with
    /// `share_runs`: the `hermes-tools` program bash scripts call).
    pub ro_binds: Vec<PathBuf>,
}

impl ApptainerConfig {
    /// One-line errors for a section that cannot work.
    pub fn validate(&self) -> Result<(), String> {
        if self.image.trim().is_empty() {
            return Err("terminal.apptainer.image is empty".into());
        }
        for b in &self.binds {
            if b.is_empty() || b.contains(',') || !b.starts_with('/') {
                return Err(format!(
                    "terminal.apptainer.binds: '{b}' must be an absolute src[:dst[:ro|rw]] without commas"
                ));
            }
        }
        if let Some(c) = self.cpus
            && !(c > 0.0 && c.is_finite())
        {
            return Err("terminal.apptainer.cpus must be a positive number".into());
        }
        if let Some(m) = &self.memory
            && (m.is_empty() || !m.bytes().all(|b| b.is_ascii_alphanumeric()))
        {
            return Err(format!(
                "terminal.apptainer.memory: '{m}' (a size such as 2G)"
            ));
        }
        Ok(())
    }
}

/// Whether `image` is a reference apptainer builds from, not a local path.
pub fn needs_build(image: &str) -> bool {
    REMOTE_PREFIXES.iter().any(|p| image.starts_with(p))
}

/// A stable, safe file name for `text`: its readable part and a hash.
fn slug(text: &str, max: usize) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
    }
    let readable: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .trim_matches('-')
        .chars()
        .take(max)
        .collect();
    format!("{readable}-{:012x}", h & 0xffff_ffff_ffff)
}

/// Where the SIF built from `image` is kept.
pub fn sif_path(cache: &Path, image: &str) -> PathBuf {
    cache.join(format!("{}.sif", slug(image, 48)))
}

/// `build` of `image` into `out`.
pub fn build_argv(bin: &str, out: &Path, image: &str) -> Vec<String> {
    vec![
        bin.into(),
        "build".into(),
        out.display().to_string(),
        image.into(),
    ]
}

/// `instance start` of task instance `name` from `image` (a SIF or a
/// directory), with the original's isolation flags.
pub fn start_argv(
    cfg: &ApptainerConfig,
    bin: &str,
    image: &Path,
    name: &str,
    overlay: Option<&Path>,
) -> Vec<String> {
    let mut a: Vec<String> = vec![
        bin.into(),
        "instance".into(),
        "start".into(),
        // Own PID, IPC and file-system namespaces, a clean environment,
        // only the minimal system folders from the host.
        "--containall".into(),
        "--no-home".into(),
    ];
    match overlay {
        Some(dir) => {
            a.push("--overlay".into());
            a.push(dir.display().to_string());
        }
        None => a.push("--writable-tmpfs".into()),
    }
    if let Some(w) = &cfg.workspace {
        a.push("--bind".into());
        a.push(format!("{0}:{0}", w.display()));
        a.push("--pwd".into());
        a.push(w.display().to_string());
    }
    for b in &cfg.binds {
        a.push("--bind".into());
        a.push(b.clone());
    }
    if let Some(m) = &cfg.memory {
        a.push("--memory".into());
        a.push(m.clone());
    }
    if let Some(c) = cfg.cpus {
        a.push("--cpus".into());
        a.push(format!("{c}"));
    }
    a.push(image.display().to_string());
    a.push(name.into());
    a
}

/// `exec` of `script` in instance `name` (marked with `mark`).
pub fn exec_argv(bin: &str, name: &str, mark: Option<&str>, script: &str) -> Vec<String> {
    let mut a: Vec<String> = vec![bin.into(), "exec".into(), "--cleanenv".into()];
    if let Some(m) = mark {
        a.push("--env".into());
        a.push(format!("{MARK_VAR}={m}"));
    }
    a.push(format!("instance://{name}"));
    a.extend(["bash", "--norc", "-c"].map(String::from));
    a.push(script.into());
    a
}

/// `instance stop` of `name`.
pub fn stop_argv(bin: &str, name: &str) -> Vec<String> {
    vec![bin.into(), "instance".into(), "stop".into(), name.into()]
}

/// The bash loop that signals, inside an instance, every process whose mark
/// is `mark` (and its process group).
pub fn kill_script(mark: &str, signal: i32) -> String {
    format!(
        "for f in /proc/[0-9]*/environ; do p=${{f#/proc/}}; p=${{p%/environ}}; [ \"$p\" = $$ ] && continue; \
         while IFS= read -r -d '' kv; do case $kv in {MARK_VAR}={m}) kill -{signal} -- -$p 2>/dev/null; kill -{signal} $p 2>/dev/null; break;; esac; done 2>/dev/null < \"$f\"; done; true",
        m = shq(mark)
    )
}

/// The client on PATH: `apptainer`, else `singularity`.
pub fn find_client() -> Option<PathBuf> {
    find_program("apptainer").or_else(|| find_program("singularity"))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A command the terminal started, by client pid.
struct Started {
    task: String,
    mark: String,
}

/// The backend: one instance per task.
pub struct Apptainer {
    cfg: ApptainerConfig,
    bin: String,
    /// `ht-<pid>-<n>`: this runtime's instances are `<id>-<task slug>`.
    id: String,
    client_env: Vec<(String, String)>,
    /// Task -> its instance name once started (the per-task lock serialises starts).
    instances: Mutex<HashMap<String, Arc<Mutex<Option<String>>>>>,
    image: OnceLock<PathBuf>,
    image_lock: Mutex<()>,
    started: Mutex<HashMap<i32, Started>>,
    next: AtomicU64,
    boot: OnceLock<Boot>,
    closed: AtomicBool,
    /// With `share_runs`: this runtime's folder of the tasks' shared
    /// folders (0700; one folder per task inside, open to the instance's
    /// user), removed at close.
    shared: PathBuf,
}

static RUNTIMES: AtomicU64 = AtomicU64::new(1);

impl Apptainer {
    pub fn new(cfg: ApptainerConfig) -> Result<Apptainer, String> {
        cfg.validate()?;
        let bin = match &cfg.binary {
            Some(b) => b.clone(),
            None => find_client().ok_or(
                "apptainer backend: neither 'apptainer' nor 'singularity' is on PATH (install apptainer, or set terminal.apptainer.binary)",
            )?,
        };
        let client_env = std::env::vars()
            .filter(|(k, _)| {
                CLIENT_ENV.contains(&k.as_str())
                    || k.starts_with("APPTAINER_")
                    || k.starts_with("SINGULARITY_")
            })
            .collect();
        let id = format!(
            "ht-{}-{}",
            std::process::id(),
            RUNTIMES.fetch_add(1, Ordering::Relaxed)
        );
        Ok(Apptainer {
            shared: std::env::temp_dir().join(format!("hermes-tools-{id}")),
            id,
            bin: bin.display().to_string(),
            cfg,
            client_env,
            instances: Mutex::new(HashMap::new()),
            image: OnceLock::new(),
            image_lock: Mutex::new(()),
            started: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            boot: OnceLock::new(),
            closed: AtomicBool::new(false),
        })
    }

    fn command(&self, argv: &[String]) -> Command {
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..])
            .env_clear()
            .envs(self.client_env.iter().cloned());
        c
    }

    /// Run a client command to its end; an error names what failed.
    fn run(&self, argv: &[String], what: &str) -> io::Result<ScriptOutput> {
        let out = run_capture(self.command(argv), b"")?;
        if out.code != 0 {
            return Err(io::Error::other(format!(
                "apptainer {what}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(out)
    }

    /// The image to start instances from: the configured path, or the SIF
    /// built from the reference (once).
    fn image(&self) -> io::Result<&Path> {
        if let Some(p) = self.image.get() {
            return Ok(p);
        }
        let _g = lock(&self.image_lock);
        if let Some(p) = self.image.get() {
            return Ok(p);
        }
        let img = &self.cfg.image;
        let path = if needs_build(img) {
            let sif = sif_path(&self.cfg.cache_dir, img);
            if !sif.is_file() {
                std::fs::create_dir_all(&self.cfg.cache_dir)?;
                let tmp = sif.with_extension(format!("tmp-{}", std::process::id()));
                let _ = std::fs::remove_file(&tmp);
                tracing::info!(image = %img, sif = %sif.display(), "apptainer: building the image once");
                let r = self.run(&build_argv(&self.bin, &tmp, img), "build");
                if let Err(e) = r {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(e);
                }
                std::fs::rename(&tmp, &sif)?;
            }
            sif
        } else {
            let p = PathBuf::from(img);
            if !p.exists() {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("apptainer image '{img}' does not exist"),
                ));
            }
            p
        };
        let _ = self.image.set(path);
        Ok(self.image.get().expect("set above"))
    }

    /// The instance name of `task`.
    pub fn instance_name(&self, task: &str) -> String {
        format!("{}-{}", self.id, slug(task_key(task), 20))
    }

    /// The overlay folder of `task`, when overlays are configured.
    pub fn overlay_dir(&self, task: &str) -> Option<PathBuf> {
        self.cfg
            .overlay_root
            .as_ref()
            .map(|r| r.join(slug(task_key(task), 40)))
    }

    /// Task `task`'s instance, started on first use.
    fn ensure(&self, task: &str) -> io::Result<String> {
        if self.closed.load(Ordering::Acquire) {
            return Err(io::Error::other("apptainer backend is closed"));
        }
        let slot = lock(&self.instances)
            .entry(task_key(task).to_string())
            .or_default()
            .clone();
        let mut g = lock(&slot);
        if let Some(n) = g.as_ref() {
            return Ok(n.clone());
        }
        let image = self.image()?.to_path_buf();
        let name = self.instance_name(task);
        let overlay = self.overlay_dir(task);
        if let Some(o) = &overlay {
            std::fs::create_dir_all(o)?;
        }
        let mut argv = start_argv(&self.cfg, &self.bin, &image, &name, overlay.as_deref());
        if self.cfg.share_runs {
            // Before the image and the name, which end the command line.
            let here = self.shared_here(task)?;
            let mut binds = vec![
                "--bind".to_string(),
                format!("{}:{}", here.display(), crate::container::SHARED_INSIDE),
            ];
            for p in &self.cfg.ro_binds {
                binds.push("--bind".into());
                binds.push(format!("{0}:{0}:ro", p.display()));
            }
            let at = argv.len() - 2;
            argv.splice(at..at, binds);
        }
        self.run(&argv, "instance start")?;
        tracing::debug!(instance = %name, task = %task_key(task), "apptainer: instance started");
        *g = Some(name.clone());
        Ok(name)
    }

    /// Task `task`'s shared folder on this machine, made if missing.
    fn shared_here(&self, task: &str) -> io::Result<PathBuf> {
        crate::container::shared_folder(&self.shared, &slug(task_key(task), 40))
    }

    fn stop(&self, name: &str) {
        if let Err(e) = self.run(&stop_argv(&self.bin, name), "instance stop") {
            tracing::warn!("apptainer: {e}");
        }
    }

    fn boot(&self) -> io::Result<&Boot> {
        if let Some(b) = self.boot.get() {
            return Ok(b);
        }
        let out = self.run_script("default", BOOT_SCRIPT, b"")?;
        if out.code != 0 {
            return Err(io::Error::other(format!(
                "apptainer: cannot prepare the instance: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let _ = self.boot.set(parse_boot(&out.stdout, NOT_STATE)?);
        Ok(self.boot.get().expect("set above"))
    }

    fn client_request(&self) -> SpawnRequest<'_> {
        SpawnRequest {
            script: "",
            cwd: Path::new("/"),
            env: &self.client_env,
            pty: false,
            extra_rw: &[],
            task: "",
            linger: false,
        }
    }
}

impl RemoteShell for Apptainer {
    fn run_script(&self, task: &str, script: &str, stdin: &[u8]) -> io::Result<ScriptOutput> {
        let name = self.ensure(task)?;
        run_capture(
            self.command(&exec_argv(&self.bin, &name, None, script)),
            stdin,
        )
    }
    fn label(&self) -> String {
        format!("apptainer ({})", self.cfg.image)
    }
}

impl Environment for Apptainer {
    fn name(&self) -> &'static str {
        "apptainer"
    }

    fn spawn(&self, req: &SpawnRequest<'_>) -> io::Result<Spawned> {
        let name = self.ensure(req.task)?;
        let mark = format!("{}-{}", self.id, self.next.fetch_add(1, Ordering::Relaxed));
        let argv = exec_argv(&self.bin, &name, Some(&mark), &command_script(req));
        let sp = spawn_argv(&argv, &self.client_request())?;
        let mut started = lock(&self.started);
        if started.len() > 1024 {
            started.retain(|pid, _| crate::tree::tree_alive(*pid));
        }
        started.insert(
            sp.pid,
            Started {
                task: task_key(req.task).to_string(),
                mark,
            },
        );
        Ok(sp)
    }

    fn kill(&self, pid: i32, signal: i32) {
        let found = lock(&self.started)
            .get(&pid)
            .map(|s| (s.task.clone(), s.mark.clone()));
        let Some((task, mark)) = found else {
            kill_tree(pid, signal);
            return;
        };
        // Killing the client alone would leave the command running inside;
        // a kill never starts an instance.
        let name = lock(&self.instances)
            .get(&task)
            .and_then(|s| lock(s).clone());
        let inside = name.is_some_and(|n| {
            run_capture(
                self.command(&exec_argv(&self.bin, &n, None, &kill_script(&mark, signal))),
                b"",
            )
            .is_ok_and(|o| o.code == 0)
        });
        if !inside || signal == libc::SIGKILL {
            kill_tree(pid, signal);
        }
    }

    fn cleanup_task(&self, task: &str) {
        let Some(slot) = lock(&self.instances).remove(task_key(task)) else {
            return;
        };
        let name = lock(&slot).take();
        if let Some(n) = name {
            self.stop(&n);
        }
        if !self.cfg.keep_overlays
            && let Some(o) = self.overlay_dir(task)
        {
            let _ = std::fs::remove_dir_all(o);
        }
        if self.cfg.share_runs {
            let _ = std::fs::remove_dir_all(self.shared.join(slug(task_key(task), 40)));
        }
    }

    fn cleanup(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let tasks: Vec<String> = lock(&self.instances).keys().cloned().collect();
        for t in tasks {
            self.cleanup_task(&t);
        }
        if self.cfg.share_runs {
            let _ = std::fs::remove_dir_all(&self.shared);
        }
    }

    fn location(&self) -> String {
        format!("in an apptainer instance (image {})", self.cfg.image)
    }

    fn remote(&self) -> Option<&dyn Remote> {
        Some(self)
    }
}

impl Remote for Apptainer {
    fn base_env(&self) -> io::Result<Vec<(String, String)>> {
        Ok(self.boot()?.env.clone())
    }
    fn home(&self) -> io::Result<String> {
        match &self.cfg.workspace {
            Some(w) => Ok(w.display().to_string()),
            None => Ok(self.boot()?.home.clone()),
        }
    }
    fn state_dir(&self) -> io::Result<PathBuf> {
        Ok(self.boot()?.dir.clone())
    }
    fn take_file(&self, task: &str, path: &Path, max: u64) -> Option<Vec<u8>> {
        crate::remote_fs::take_file(self, task, path, max)
    }
    fn shared_dir(&self, task: &str) -> io::Result<Option<(PathBuf, PathBuf)>> {
        if !self.cfg.share_runs {
            return Ok(None);
        }
        self.ensure(task)?;
        Ok(Some((
            self.shared.join(slug(task_key(task), 40)),
            PathBuf::from(crate::container::SHARED_INSIDE),
        )))
    }
    fn is_dir(&self, task: &str, path: &Path) -> bool {
        crate::remote_fs::is_dir(self, task, path)
    }
    fn explain_exit(&self, pid: i32, code: i32) -> Option<String> {
        let s = lock(&self.started).remove(&pid)?;
        // apptainer's own failures (255) when the instance is gone.
        if code != 255 {
            return None;
        }
        let name = lock(&self.instances)
            .get(&s.task)
            .and_then(|slot| lock(slot).clone())?;
        let alive = run_capture(
            self.command(&exec_argv(&self.bin, &name, None, "true")),
            b"",
        )
        .is_ok_and(|o| o.code == 0);
        if alive {
            return None;
        }
        // Forget it: the next command starts a new instance.
        if let Some(slot) = lock(&self.instances).get(&s.task) {
            lock(slot).take();
        }
        Some(format!(
            "the apptainer instance of this task ({name}) stopped during the command (stopped from outside?); it may have partly run. The next command starts a new instance."
        ))
    }
}

impl Drop for Apptainer {
    fn drop(&mut self) {
        self.cleanup();
    }
}

/// The backend as the terminal holds it, shared with the file tools.
pub struct ApptainerBackend(pub Arc<Apptainer>);

impl ApptainerBackend {
    pub fn new(cfg: ApptainerConfig) -> Result<ApptainerBackend, String> {
        Ok(ApptainerBackend(Arc::new(Apptainer::new(cfg)?)))
    }
}

impl Environment for ApptainerBackend {
    fn name(&self) -> &'static str {
        "apptainer"
    }
    fn spawn(&self, req: &SpawnRequest<'_>) -> io::Result<Spawned> {
        self.0.spawn(req)
    }
    fn kill(&self, pid: i32, signal: i32) {
        Environment::kill(&*self.0, pid, signal)
    }
    fn cleanup_task(&self, task: &str) {
        Environment::cleanup_task(&*self.0, task)
    }
    fn cleanup(&self) {
        Environment::cleanup(&*self.0)
    }
    fn location(&self) -> String {
        self.0.location()
    }
    fn remote(&self) -> Option<&dyn Remote> {
        Some(&*self.0)
    }
    fn files(&self, task: &str) -> Option<Arc<dyn crate::fs::FileSystem>> {
        Some(Arc::new(RemoteFs::new(
            self.0.clone(),
            task_key(task),
            "apptainer",
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> ApptainerConfig {
        ApptainerConfig {
            image: "docker://debian:12-slim".into(),
            cache_dir: "/var/cache/ht".into(),
            overlay_root: Some("/data/overlays".into()),
            binds: vec!["/opt/tools:/opt/tools:ro".into()],
            workspace: Some("/work/proj".into()),
            memory: Some("2G".into()),
            cpus: Some(1.5),
            ..Default::default()
        }
    }

    #[test]
    fn references_are_built_once_into_the_cache() {
        assert!(needs_build("docker://debian:12"));
        assert!(needs_build("docker-daemon:img:latest"));
        assert!(!needs_build("/images/base.sif"));
        assert!(!needs_build("./sandbox-dir"));
        let a = sif_path(Path::new("/c"), "docker://debian:12");
        let b = sif_path(Path::new("/c"), "docker://debian:11");
        assert_ne!(a, b);
        assert_eq!(a, sif_path(Path::new("/c"), "docker://debian:12"));
        assert!(a.starts_with("/c") && a.extension().unwrap() == "sif");
        assert!(
            !a.file_name()
                .unwrap()
                .to_string_lossy()
                .contains(['/', ':'])
        );
        assert_eq!(
            build_argv("apptainer", &a, "docker://debian:12"),
            vec![
                "apptainer".to_string(),
                "build".into(),
                a.display().to_string(),
                "docker://debian:12".into()
            ]
        );
    }

    #[test]
    fn instance_start_has_the_originals_isolation_flags() {
        let c = cfg();
        let a = start_argv(
            &c,
            "apptainer",
            Path::new("/c/img.sif"),
            "ht-1-1-t",
            Some(Path::new("/data/overlays/t")),
        );
        assert_eq!(
            a,
            [
                "apptainer",
                "instance",
                "start",
                "--containall",
                "--no-home",
                "--overlay",
                "/data/overlays/t",
                "--bind",
                "/work/proj:/work/proj",
                "--pwd",
                "/work/proj",
                "--bind",
                "/opt/tools:/opt/tools:ro",
                "--memory",
                "2G",
                "--cpus",
                "1.5",
                "/c/img.sif",
                "ht-1-1-t"
            ]
        );
        let plain = ApptainerConfig {
            image: "/i.sif".into(),
            ..Default::default()
        };
        let a = start_argv(&plain, "singularity", Path::new("/i.sif"), "n", None);
        assert_eq!(
            a,
            [
                "singularity",
                "instance",
                "start",
                "--containall",
                "--no-home",
                "--writable-tmpfs",
                "/i.sif",
                "n"
            ]
        );
    }

    #[test]
    fn exec_and_stop_lines() {
        let a = exec_argv("apptainer", "ht-1-1-t", Some("ht-1-1-7"), "echo hi");
        assert_eq!(
            a,
            [
                "apptainer",
                "exec",
                "--cleanenv",
                "--env",
                "HERMES_TOOLS_TREE=ht-1-1-7",
                "instance://ht-1-1-t",
                "bash",
                "--norc",
                "-c",
                "echo hi"
            ]
        );
        assert_eq!(
            stop_argv("apptainer", "n"),
            ["apptainer", "instance", "stop", "n"]
        );
        // the kill loop matches the exact mark, quoted
        let k = kill_script("ht-1-1-7", 15);
        assert!(k.contains("HERMES_TOOLS_TREE='ht-1-1-7')"), "{k}");
        assert!(k.contains("kill -15 -- -$p"), "{k}");
    }

    #[test]
    fn the_kill_loop_finds_marked_processes() {
        // The loop runs under bash here against real processes.
        let mark = format!("kl-{}", std::process::id());
        let mut child = Command::new("sleep")
            .arg("30")
            .env(MARK_VAR, &mark)
            .spawn()
            .unwrap();
        let mut other = Command::new("sleep")
            .arg("30")
            .env(MARK_VAR, format!("{mark}0"))
            .spawn()
            .unwrap();
        let st = Command::new("bash")
            .args(["-c", &kill_script(&mark, 9)])
            .status()
            .unwrap();
        assert!(st.success());
        let ended = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(ended.signal(), Some(9));
        // a mark that only starts the same is left alone
        assert!(other.try_wait().unwrap().is_none());
        other.kill().unwrap();
        let _ = other.wait();
    }

    #[test]
    fn instance_names_and_overlays_are_per_task() {
        let cache = std::env::temp_dir().join(format!("ht-apptainer-c-{}", std::process::id()));
        let a = Apptainer::new(ApptainerConfig {
            binary: Some("/nonexistent/apptainer".into()),
            cache_dir: cache.clone(),
            ..cfg()
        })
        .unwrap();
        let (x, y) = (a.instance_name("t1"), a.instance_name("t2"));
        assert_ne!(x, y);
        assert_eq!(a.instance_name(""), a.instance_name("default"));
        assert!(x.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
        assert_ne!(a.overlay_dir("t1"), a.overlay_dir("t2"));
        assert!(
            a.overlay_dir("../../etc")
                .unwrap()
                .starts_with("/data/overlays")
        );
        // a client that is not there is a clear error, not a hang
        let e = match a.run_script("t1", "true", b"") {
            Err(e) => e.to_string(),
            Ok(o) => panic!("ran without a client: {}", o.code),
        };
        assert!(e.contains("No such file") || e.contains("not found"), "{e}");
        let _ = std::fs::remove_dir_all(cache);
    }

    #[test]
    fn config_is_checked() {
        assert!(cfg().validate().is_ok());
        let mut c = cfg();
        c.binds = vec!["relative:/x".into()];
        assert!(c.validate().is_err());
        let mut c = cfg();
        c.cpus = Some(0.0);
        assert!(c.validate().is_err());
        let mut c = cfg();
        c.memory = Some("2G; rm".into());
        assert!(c.validate().is_err());
    }

    /// Against the real client when it is installed.
    #[test]
    fn runs_in_a_real_instance_when_apptainer_is_installed() {
        let Some(bin) = find_client() else {
            eprintln!(
                "SKIPPED: apptainer/singularity is not installed here (not packaged for Debian 12); the command lines above are what it would run"
            );
            return;
        };
        // A directory image made from this machine's own /usr (no registry).
        let root = std::env::temp_dir().join(format!("ht-apptainer-{}", std::process::id()));
        let img = root.join("img");
        for d in [
            "usr", "etc", "tmp", "proc", "sys", "dev", "bin", "lib", "lib64",
        ] {
            std::fs::create_dir_all(img.join(d)).unwrap();
        }
        let a = ApptainerBackend::new(ApptainerConfig {
            binary: Some(bin),
            image: img.display().to_string(),
            binds: vec![
                "/usr:/usr:ro".into(),
                "/lib:/lib:ro".into(),
                "/bin:/bin:ro".into(),
            ],
            overlay_root: None,
            cache_dir: root.join("cache"),
            ..Default::default()
        })
        .unwrap();
        let out = a.0.run_script("t", "echo hi", b"").unwrap();
        assert_eq!(
            out.stdout,
            b"hi\n",
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        a.cleanup();
        let _ = std::fs::remove_dir_all(root);
    }
}
