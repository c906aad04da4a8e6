//! The docker / podman backend: one container per task, started from a
//! configured image on the task's first command and locked down (`--cap-drop ALL`,
//! `no-new-privileges`, pids, memory and CPU limits, no network unless the
//! config allows it, an init process reaping orphans), with the workspace
//! bind-mounted at the same path. Every command is `bash -c` through
//! `<engine> exec`; the same code drives docker and podman, whose clients
//! take the same arguments.
//!
//! Why the engine's own client and not its HTTP API: it reads the user's
//! contexts, `DOCKER_HOST`, rootless podman's socket and credentials
//! exactly as the user's `docker`/`podman` does, and an exec costs tens of
//! milliseconds either way.
//!
//! Processes are marked and killed inside the container like remote ones
//! on ssh (`HERMES_TOOLS_TREE=<token>` set by `exec -e`, found in
//! `/proc/*/environ` by a bash loop: the image needs no procps or grep).
//! A container that disappears (killed or removed from outside) is told
//! apart from a command's own failure, and the next command starts a new
//! one. Containers carry a label naming the process that started them:
//! one whose process is gone (a crash) is removed by the next runtime on
//! this machine; a task's cleanup removes the task's container and the
//! runtime's free removes all of its own. At most `max_containers` run at
//! once: one more task gets a clear error, not an exhausted engine.
//!
//! An engine takes most of a call's time to start an exec (70-90 ms with
//! docker here, more with podman), so each task keeps execs started ahead
//! (`prestart`, two by default; [`Warm`]): each a reader waiting for a
//! script on its stdin, a pipe only we hold. A command takes the oldest,
//! writes its script and closes the pipe; a new one is started behind it.
//! PTY commands, a command that finds none (several at once) and a dead
//! one take the normal path.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::env::{Environment, Remote, task_key};
use crate::local::{spawn_argv, spawn_argv_fed};
use crate::remote_fs::{
    Boot, RemoteShell, ScriptOutput, boot_script_with_dir, command_script, parse_boot, run_capture,
    shq,
};
use crate::spawn::{Input, SpawnRequest, Spawned};
use crate::sys::{ExitWatch, set_nonblocking};
use crate::tree::{MARK_VAR, kill_tree};

/// The label every container of ours carries: `<boot id>-<pid>-<start time>`
/// of the process that started it.
pub const OWNER_LABEL: &str = "hermes-tools.owner";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Docker,
    Podman,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Docker => "docker",
            Engine::Podman => "podman",
        }
    }
}

/// What to start and how to reach the engine.
#[derive(Clone, Debug)]
pub struct ContainerConfig {
    pub engine: Engine,
    /// The client binary (default: `docker` / `podman` on PATH).
    pub client: Option<PathBuf>,
    /// The engine's address (`-H` for docker, `--url` for podman; default:
    /// the client's own, `DOCKER_HOST` included).
    pub host: Option<String>,
    pub image: String,
    /// Network access (default off: `--network none`).
    pub network: bool,
    /// With `network` off: the allow-list proxy, listening at
    /// 127.0.0.1:3128 in each container's own namespace (see
    /// [`crate::netproxy`]; the runtime enters the namespace to make the
    /// listener, so it needs root with a rootful engine).
    pub proxy: Option<std::sync::Arc<crate::netproxy::NetProxy>>,
    /// `--memory` (`"512m"`, `"2g"`).
    pub memory: Option<String>,
    /// `--cpus`.
    pub cpus: Option<f64>,
    /// `--pids-limit`.
    pub pids_limit: u32,
    /// A host folder bind-mounted read-write at the same path, the commands'
    /// default directory.
    pub workspace: Option<PathBuf>,
    /// Extra `run` arguments (`--ulimit`, `--tmpfs`, `--user`, `-v`); ones
    /// that would loosen the lockdown are refused.
    pub run_args: Vec<String>,
    /// Containers (one per task) running at once; a new task past it gets
    /// a clear error until a task is cleaned up.
    pub max_containers: usize,
    /// Execs per task started ahead of its commands (default 2; 0: none):
    /// that many idle engine clients per task container, in exchange for
    /// the engine's exec start-up leaving the call's time. One covers calls
    /// that come after a pause; two also keep up with calls back to back.
    pub prestart: usize,
    /// Give each task's container a folder shared with this machine, at
    /// [`SHARED_INSIDE`] (execute_code's runs: their stubs and the
    /// channel's socket, with no copy and no relay). The folder is the
    /// task's alone; on this machine it sits in a folder only this user can
    /// enter, removed with the containers.
    pub share_runs: bool,
    /// Files of this machine bound read-only at the same path in every
    /// container (execute_code's `hermes-tools` program for bash scripts).
    pub ro_binds: Vec<PathBuf>,
}

/// Where a task's container sees its shared folder ([`ContainerConfig::share_runs`]).
pub const SHARED_INSIDE: &str = "/run/hermes-tools";

/// A task's folder shared with its container or instance, made if
/// missing: `root/name`, where `root` is the runtime's own (0700: no other
/// user of this machine reaches it) and the task's folder is open (0755)
/// since the user inside may be any.
pub(crate) fn shared_folder(root: &Path, name: &str) -> io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    match std::fs::DirBuilder::new().mode(0o700).create(root) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(root)?;
    if !meta.is_dir() || meta.permissions().mode() & 0o077 != 0 {
        return Err(io::Error::other(format!(
            "{} is not a private folder of this user",
            root.display()
        )));
    }
    let here = root.join(name);
    match std::fs::create_dir(&here) {
        Ok(()) => std::fs::set_permissions(&here, std::fs::Permissions::from_mode(0o755))?,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    Ok(here)
}

impl Default for ContainerConfig {
    fn default() -> Self {
        ContainerConfig {
            engine: Engine::Docker,
            client: None,
            host: None,
            image: String::new(),
            network: false,
            proxy: None,
            memory: Some("2g".into()),
            cpus: Some(2.0),
            pids_limit: 1024,
            workspace: None,
            run_args: Vec::new(),
            max_containers: 16,
            prestart: 2,
            share_runs: false,
            ro_binds: Vec::new(),
        }
    }
}

/// `run` arguments a config may not add: each undoes part of the lockdown
/// (the network has its own setting).
const REFUSED_RUN_ARGS: &[&str] = &[
    "--privileged",
    "--cap-add",
    "--security-opt",
    "--network",
    "--net",
    "--pid",
    "--ipc",
    "--uts",
    "--userns",
    "--cgroupns",
    "--device",
    "--pids-limit",
    "--rm",
    "-d",
    "--detach",
    "--name",
    "--entrypoint",
    "--init",
];

impl ContainerConfig {
    /// One-line errors for what cannot work.
    pub fn validate(&self) -> Result<(), String> {
        let k = self.engine.name();
        let bad = |s: &str| {
            s.is_empty()
                || s.starts_with('-')
                || s.chars().any(|c| c.is_whitespace() || c.is_control())
        };
        if bad(&self.image) {
            return Err(format!(
                "terminal.{k}.image: '{}' is not an image name (an image of this engine, e.g. \"debian:12\")",
                self.image
            ));
        }
        if let Some(h) = &self.host
            && bad(h)
        {
            return Err(format!("terminal.{k}.host: '{h}' is not an engine address"));
        }
        if let Some(m) = &self.memory {
            let digits = m.trim_end_matches(['b', 'k', 'm', 'g', 'B', 'K', 'M', 'G']);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!(
                    "terminal.{k}.memory: '{m}' is not a size (\"512m\", \"2g\")"
                ));
            }
        }
        if let Some(c) = self.cpus
            && !(c > 0.0 && c <= 1024.0)
        {
            return Err(format!("terminal.{k}.cpus must be above 0 (got {c})"));
        }
        if self.network && self.proxy.is_some() {
            return Err(format!(
                "terminal.{k}.network is on and terminal.network is an allow-list: choose one"
            ));
        }
        if self.max_containers == 0 {
            return Err(format!("terminal.{k}.max_containers must be at least 1"));
        }
        if self.pids_limit == 0 {
            return Err(format!("terminal.{k}.pids_limit must be at least 1"));
        }
        if let Some(w) = &self.workspace
            && (!w.is_absolute() || !w.is_dir())
        {
            return Err(format!(
                "terminal.{k}.workspace: '{}' is not an existing absolute folder",
                w.display()
            ));
        }
        for p in &self.ro_binds {
            let s = p.to_string_lossy();
            if !p.is_absolute()
                || s.contains(':')
                || s.contains(',')
                || s.chars().any(|c| c.is_control())
            {
                return Err(format!(
                    "terminal.{k}: cannot bind '{}' into the container (an absolute path without ':' or ',')",
                    p.display()
                ));
            }
        }
        for a in &self.run_args {
            let name = a.split('=').next().unwrap_or("");
            if REFUSED_RUN_ARGS.contains(&name) {
                return Err(format!(
                    "terminal.{k}.run_args: '{a}' is not allowed: it would undo the container's lockdown or our control of it"
                ));
            }
            if a.chars().any(|c| c.is_control()) {
                return Err(format!(
                    "terminal.{k}.run_args: '{a}' has control characters"
                ));
            }
        }
        Ok(())
    }
}

/// How long a container whose command was SIGKILLed may still be reported
/// running before it counts as alive (see `Container::still_running`).
const KILL_SETTLE: Duration = Duration::from_secs(5);

/// Variables of the image's login that are not the command's to keep.
const NOT_STATE: &[&str] = &["_", "SHLVL", "PWD", "OLDPWD", "HOSTNAME", MARK_VAR];

/// The label naming the task a container belongs to.
pub const TASK_LABEL: &str = "hermes-tools.task";

/// Where a task's container runs and how its engine is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The container's id on its engine.
    pub id: String,
    /// The address of the engine that runs it (`-H`); `None`: the
    /// configured one ([`ContainerConfig::host`]).
    pub host: Option<String>,
    /// The scheduler's service that owns the container (swarm).
    pub service: Option<String>,
    /// The node that runs it (swarm: the node's id).
    pub node: Option<String>,
}

/// A host folder bound into a task container.
#[derive(Clone, Debug)]
pub struct Bind {
    pub src: PathBuf,
    pub dst: PathBuf,
    pub ro: bool,
}

/// What every task container gets, whoever starts it: the lockdown (no
/// capabilities, pids, memory and CPU limits, no network unless
/// configured) and the container's own setup. [`EngineRun`] renders it as
/// `run` flags, `crate::swarm` as `service create` flags, so both backends
/// lock their containers down from the same description.
#[derive(Clone, Debug)]
pub struct Lockdown {
    /// The container's (or service's) name: `<runtime prefix>-<slot>-<generation>`.
    pub name: String,
    /// [`OWNER_LABEL`] and [`TASK_LABEL`].
    pub labels: Vec<(String, String)>,
    pub env: Vec<(String, String)>,
    pub binds: Vec<Bind>,
    pub workdir: Option<String>,
    pub pids_limit: u32,
    pub memory: Option<String>,
    pub cpus: Option<f64>,
    /// Network access (off: none, or an internal network with no route out).
    pub network: bool,
    pub image: String,
    /// What `bash -c` runs as the container's main process.
    pub entry_script: String,
}

/// How a backend's task containers are started, removed and found again:
/// `run` on one engine ([`EngineRun`], the docker and podman backends) or
/// a scheduler's service per task (`crate::swarm`). Everything else (execs,
/// prestarted execs, kills, state, files) is [`Container`]'s and the same
/// for both.
pub trait Placement: Send + Sync {
    /// "docker", "podman", "swarm": the backend's name, in messages.
    fn kind(&self) -> &'static str;
    /// Start a container as `spec` says.
    fn start(&self, c: &Container, task: &str, spec: &Lockdown) -> io::Result<Placed>;
    /// Remove containers (and what owns them); errors are ignored.
    fn remove(&self, c: &Container, gone: &[Placed]);
    /// Remove containers whose starting runtime is gone (a crash).
    fn reap_stale(&self, c: &Container);
    /// A `sh` script removing every container of this runtime, which the
    /// crash watcher runs with the engine client as `"$@"`.
    fn crash_script(&self, c: &Container) -> String;
    /// Where commands run, for approval prompts and messages.
    fn location(&self, c: &Container) -> String;
    /// Containers of other runtimes that count against `max_containers`
    /// (a fleet's limit). Default: none.
    fn others(&self, _c: &Container) -> usize {
        0
    }
    /// Words after `max_containers = N` in the limit's error.
    fn quota_scope(&self) -> &'static str {
        ""
    }
    /// Why the container at `p` cannot be reached any more (its node is
    /// gone), checked before each command and after a failed one, so it
    /// must be cheap (no engine call). Default: never.
    fn lost(&self, _c: &Container, _p: &Placed) -> Option<String> {
        None
    }
}

/// The docker and podman backends' placement: `run -d` on the one
/// configured engine, `rm -f`, and the engine's `ps` for a crashed
/// runtime's leftovers on this machine.
pub struct EngineRun;

impl Placement for EngineRun {
    fn kind(&self) -> &'static str {
        // Set per backend by the engine; see `Container::kind`.
        "container"
    }

    fn start(&self, ct: &Container, _task: &str, spec: &Lockdown) -> io::Result<Placed> {
        let c = &ct.cfg;
        let mut cmd = ct.client();
        cmd.args(["run", "-d"]);
        // An init reaps the orphans of killed commands; podman's (catatonit)
        // is a separate package, and without it bash as PID 1 reaps them.
        if c.engine == Engine::Docker
            || ["/usr/libexec/podman/catatonit", "/usr/bin/catatonit"]
                .iter()
                .any(|p| Path::new(p).exists())
        {
            cmd.arg("--init");
        }
        cmd.arg("--name").arg(&spec.name);
        for (k, v) in &spec.labels {
            cmd.arg("--label").arg(format!("{k}={v}"));
        }
        cmd.args(["--cap-drop", "ALL", "--security-opt", "no-new-privileges"]);
        cmd.arg(format!("--pids-limit={}", spec.pids_limit));
        if let Some(m) = &spec.memory {
            cmd.arg(format!("--memory={m}"));
        }
        if let Some(n) = spec.cpus {
            cmd.arg(format!("--cpus={n}"));
        }
        if !spec.network {
            cmd.arg("--network=none");
        }
        for (k, v) in &spec.env {
            cmd.arg("-e").arg(format!("{k}={v}"));
        }
        for b in &spec.binds {
            cmd.arg("-v").arg(format!(
                "{}:{}:{}",
                b.src.display(),
                b.dst.display(),
                if b.ro { "ro" } else { "rw" }
            ));
        }
        if let Some(w) = &spec.workdir {
            cmd.arg("-w").arg(w);
        }
        cmd.args(&c.run_args);
        cmd.args([
            "--entrypoint",
            "bash",
            &spec.image,
            "-c",
            &spec.entry_script,
        ]);
        let out = cmd.stderr(Stdio::piped()).stdout(Stdio::piped()).output()?;
        if !out.status.success() {
            let why = String::from_utf8_lossy(&out.stderr);
            let why = why.trim().lines().last().unwrap_or("").to_string();
            return Err(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                format!(
                    "{}: cannot start a container from image '{}': {}",
                    c.engine.name(),
                    c.image,
                    if why.is_empty() {
                        format!("exited with {}", out.status)
                    } else {
                        why
                    }
                ),
            ));
        }
        let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if id.is_empty() {
            return Err(io::Error::other(format!(
                "{}: run printed no container id",
                c.engine.name()
            )));
        }
        Ok(Placed {
            id,
            host: None,
            service: None,
            node: None,
        })
    }

    fn remove(&self, c: &Container, gone: &[Placed]) {
        let _ = c
            .client()
            .args(["rm", "-f"])
            .args(gone.iter().map(|p| &p.id))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    fn reap_stale(&self, c: &Container) {
        let Ok(out) = c
            .client()
            .args([
                "ps",
                "-a",
                "--filter",
                &format!("label={OWNER_LABEL}"),
                "--format",
                "{{.ID}} {{.Labels}}",
            ])
            .stderr(Stdio::null())
            .output()
        else {
            return;
        };
        let mut stale = Vec::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let Some((id, labels)) = line.split_once(' ') else {
                continue;
            };
            if label_value(labels, OWNER_LABEL).is_some_and(owner_gone) {
                stale.push(Placed {
                    id: id.to_string(),
                    host: None,
                    service: None,
                    node: None,
                });
            }
        }
        if !stale.is_empty() {
            tracing::info!(
                count = stale.len(),
                "container backend: removing containers left by a process that is gone"
            );
            self.remove(c, &stale);
        }
    }

    fn crash_script(&self, c: &Container) -> String {
        format!(
            "ids=$(\"$@\" ps -aq --filter name={}-); [ -z \"$ids\" ] || \"$@\" rm -f $ids",
            c.name()
        )
    }

    fn location(&self, c: &Container) -> String {
        format!(
            "in {} container {} (image {})",
            c.cfg.engine.name(),
            c.name(),
            c.cfg.image
        )
    }
}

/// One task's container.
struct Slot {
    /// The running container and where it runs, when one runs.
    at: Option<Placed>,
    /// Bumped on every start.
    generation: u64,
    /// The slot's number: in the container's name and its commands' marks.
    n: u64,
    /// Execs started ahead for the task's next commands, oldest first.
    warm: VecDeque<Warm>,
}

impl Slot {
    /// Empty the slot: its container id and its waiting execs, taken
    /// together under the slot's lock so that a racing prestart starts
    /// nothing. Stop the execs ([`discard_all`]) once the lock is released.
    fn vacate(&mut self) -> (Option<Placed>, VecDeque<Warm>) {
        (self.at.take(), std::mem::take(&mut self.warm))
    }
}

/// Stop and reap waiting execs that will not be used.
fn discard_all(warm: VecDeque<Warm>) {
    for w in warm {
        w.discard();
    }
}

/// An exec started before its command is known: the engine client runs
/// [`WARM_READER`] in the container, marked with `suffix`, and waits on
/// `feed` (its stdin) for the command's script.
struct Warm {
    generation: u64,
    suffix: String,
    sp: Spawned,
    feed: OwnedFd,
}

impl Warm {
    /// Stop and reap an exec that will not be used. Its reader in the
    /// container ends with the client (its stdin closes).
    fn discard(self) {
        drop(self.feed);
        stop_client(self.sp.pid);
    }
}

/// Kill and reap a local engine client of ours.
fn stop_client(pid: i32) {
    kill_tree(pid, libc::SIGKILL);
    ExitWatch::new(pid).reap();
}

/// What a prestarted exec runs: read the script to the end of stdin (a
/// bash builtin read, no fork of `cat`), then run it as a cold exec would.
/// Nothing read (the client was stopped) ends it quietly.
const WARM_READER: &str =
    "__ht_s=$(</dev/stdin); [ -n \"$__ht_s\" ] || exit 0; exec bash --norc -c \"$__ht_s\"";

/// A started command: its task, mark and the container it ran in.
struct Started {
    task: String,
    token: String,
    generation: u64,
}

pub struct Container {
    client: PathBuf,
    /// How its containers are started, checked and removed.
    placement: Box<dyn Placement>,
    cfg: ContainerConfig,
    /// Prefix of this runtime's marks and its containers' names.
    id: String,
    /// One container per task, each behind its own lock so one task's
    /// start does not hold up another's commands.
    slots: Mutex<HashMap<String, Arc<Mutex<Slot>>>>,
    next_slot: AtomicU64,
    boot: OnceLock<Boot>,
    boot_lock: Mutex<()>,
    started: Mutex<HashMap<i32, Started>>,
    next: AtomicU64,
    closed: AtomicBool,
    reaped: AtomicBool,
    client_env: Vec<(String, String)>,
    /// Removes the containers if this process dies without closing.
    watcher: Mutex<Option<std::process::Child>>,
    /// The proxy's listener in each container (by id), while it runs.
    adopted: Mutex<HashMap<String, crate::netproxy::Adopted>>,
    /// Tasks given a network setting of their own by the host (in place of
    /// `cfg.network` and `cfg.proxy`), applied when their container starts.
    task_net: Mutex<HashMap<String, crate::env::TaskNetwork>>,
    /// With `share_runs`: this runtime's folder of the tasks' shared
    /// folders (0700, one `<slot>` folder per task inside).
    shared: PathBuf,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Container {
    pub fn new(cfg: ContainerConfig) -> Result<Container, String> {
        cfg.validate()?;
        Container::with_placement(cfg, Box::new(EngineRun))
    }

    /// A backend whose containers `placement` starts and removes (the
    /// container backend's own is `run` on one engine; crate::swarm's is a
    /// service per task). `cfg` is taken as validated.
    pub fn with_placement(
        cfg: ContainerConfig,
        placement: Box<dyn Placement>,
    ) -> Result<Container, String> {
        let client = match &cfg.client {
            Some(c) => c.clone(),
            None => find_on_path(cfg.engine.name()).ok_or_else(|| {
                format!(
                    "terminal.backend '{0}' needs the {0} client, which is not installed",
                    cfg.engine.name()
                )
            })?,
        };
        let n = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let id = format!("ht{}x{n}x{nanos:x}", std::process::id());
        Ok(Container {
            client,
            placement,
            shared: std::env::temp_dir().join(format!("hermes-tools-{id}")),
            id,
            cfg,
            slots: Mutex::new(HashMap::new()),
            next_slot: AtomicU64::new(1),
            boot: OnceLock::new(),
            boot_lock: Mutex::new(()),
            started: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            closed: AtomicBool::new(false),
            reaped: AtomicBool::new(false),
            client_env: std::env::vars().collect(),
            watcher: Mutex::new(None),
            adopted: Mutex::new(HashMap::new()),
            task_net: Mutex::new(HashMap::new()),
        })
    }

    /// The prefix of this runtime's container names (`hermes-tools-<id>`;
    /// each is `<prefix>-<slot>-<generation>`).
    pub fn name(&self) -> String {
        format!("hermes-tools-{}", self.id)
    }

    /// Task `task`'s running container, when one runs (for tests).
    pub fn container_id(&self, task: &str) -> Option<String> {
        self.placed(task).map(|p| p.id)
    }

    /// Where task `task`'s container runs, when one runs.
    pub fn placed(&self, task: &str) -> Option<Placed> {
        let slot = lock(&self.slots).get(task_key(task)).cloned()?;
        lock(&slot).at.clone()
    }

    /// The config this backend runs with.
    pub fn config(&self) -> &ContainerConfig {
        &self.cfg
    }

    /// "docker", "podman" or "swarm", for messages.
    pub fn kind(&self) -> &'static str {
        match self.placement.kind() {
            "container" => self.cfg.engine.name(),
            k => k,
        }
    }

    /// The private folder every container of this runtime has (made by
    /// its entry point; the terminal's state captures go there).
    fn state_dir_path(&self) -> String {
        format!("/tmp/.hermes-tools-{}", self.id)
    }

    /// The engine client with the configured address.
    pub fn client(&self) -> Command {
        self.client_at(self.cfg.host.as_deref())
    }

    /// The engine client with address `host` (`None`: the client's own).
    pub fn client_at(&self, host: Option<&str>) -> Command {
        let mut c = Command::new(&self.client);
        if let Some(h) = host {
            c.arg(match self.cfg.engine {
                Engine::Docker => "-H",
                Engine::Podman => "--url",
            });
            c.arg(h);
        }
        c.env_clear().envs(self.client_env.iter().cloned());
        c.stdin(Stdio::null());
        c
    }

    /// The argv of `exec` running `script` in the container; `stdin`
    /// attaches the client's stdin.
    fn exec_argv(
        &self,
        at: &Placed,
        pty: bool,
        stdin: bool,
        mark: Option<&str>,
        script: &str,
    ) -> Vec<String> {
        let mut a = vec![self.client.display().to_string()];
        if let Some(h) = at.host.as_ref().or(self.cfg.host.as_ref()) {
            a.push(
                match self.cfg.engine {
                    Engine::Docker => "-H",
                    Engine::Podman => "--url",
                }
                .into(),
            );
            a.push(h.clone());
        }
        a.push("exec".into());
        // Commands read nothing, as on the local backend (/dev/null): stdin
        // is only attached for a PTY, for scripts fed data (file writes)
        // and for a prestarted exec (its script), which saves the engine a
        // stream per cold call.
        if pty || stdin {
            a.push("-i".into());
        }
        if pty {
            a.push("-t".into());
        }
        if let Some(m) = mark {
            a.push("-e".into());
            a.push(format!("{MARK_VAR}={m}"));
        }
        a.push(at.id.clone());
        a.extend(["bash", "--norc", "-c"].map(String::from));
        a.push(script.into());
        a
    }

    /// Task `task`'s slot, made on first use.
    fn slot(&self, task: &str) -> Arc<Mutex<Slot>> {
        let mut map = lock(&self.slots);
        map.entry(task_key(task).to_string())
            .or_insert_with(|| {
                Arc::new(Mutex::new(Slot {
                    at: None,
                    generation: 0,
                    n: self.next_slot.fetch_add(1, Ordering::Relaxed),
                    warm: VecDeque::new(),
                }))
            })
            .clone()
    }

    /// How many containers of this runtime run now (one per task in use).
    pub fn running_containers(&self) -> usize {
        let slots: Vec<_> = lock(&self.slots).values().cloned().collect();
        slots.iter().filter(|s| lock(s).at.is_some()).count()
    }

    /// Start task `task`'s container unless it runs; returns its id,
    /// generation and slot number.
    fn ensure(&self, task: &str) -> io::Result<(Placed, u64, u64)> {
        if self.closed.load(Ordering::Acquire) {
            return Err(io::Error::other(format!(
                "the {} backend is closed",
                self.kind()
            )));
        }
        if !self.reaped.swap(true, Ordering::AcqRel) {
            self.reap_stale();
            self.watch();
        }
        let slot = self.slot(task);
        let mut cur = lock(&slot);
        if let Some(at) = &cur.at {
            let Some(why) = self.placement.lost(self, at) else {
                return Ok((at.clone(), cur.generation, cur.n));
            };
            // Its node is gone, and what ran there with it: this call
            // fails and says so, the next one starts a new container.
            let (gone, warm) = cur.vacate();
            drop(cur);
            discard_all(warm);
            self.remove(&Vec::from_iter(gone));
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                format!(
                    "{why}; the task's files and processes there are lost. The next command starts a new container."
                ),
            ));
        }
        let max = self.cfg.max_containers.max(1);
        let running = self.running_containers_except(&slot) + self.placement.others(self);
        if running >= max {
            return Err(io::Error::new(
                io::ErrorKind::QuotaExceeded,
                format!(
                    "{}: {running} task containers already run (terminal.docker.max_containers = {max}{}); clean up finished tasks (ht_runtime_cleanup_task) or raise the limit",
                    self.kind(),
                    self.placement.quota_scope()
                ),
            ));
        }
        let at = self.start(task, cur.n, cur.generation + 1)?;
        cur.at = Some(at.clone());
        cur.generation += 1;
        if cur.generation > 1 {
            tracing::info!(container = %self.name(), task = %task_key(task), "container backend: started a new container for the task");
        }
        Ok((at, cur.generation, cur.n))
    }

    fn running_containers_except(&self, me: &Arc<Mutex<Slot>>) -> usize {
        let slots: Vec<_> = lock(&self.slots).values().cloned().collect();
        slots
            .iter()
            .filter(|s| !Arc::ptr_eq(s, me))
            // A slot being started holds its lock: count it.
            .filter(|s| s.try_lock().map(|g| g.at.is_some()).unwrap_or(true))
            .count()
    }

    /// Task `task`'s network: its own setting if the host gave it one,
    /// else the backend's.
    fn net_for(&self, task: &str) -> (bool, Option<Arc<crate::netproxy::NetProxy>>) {
        match lock(&self.task_net).get(task_key(task)) {
            Some(n) => n.parts(),
            None => (self.cfg.network, self.cfg.proxy.clone()),
        }
    }

    /// The command's environment with the proxy's variables of its task's
    /// own network (`None`: as it is). The terminal's base environment was
    /// learnt from one container, with that container's proxy variables
    /// (or none): a task with another setting must not point at a proxy it
    /// does not have, nor carry another proxy's secret placeholders.
    fn proxy_env(&self, req: &SpawnRequest<'_>) -> Option<Vec<(String, String)>> {
        let (_, proxy) = self.net_for(req.task);
        if proxy.is_none() {
            // No proxy for this task: none of a proxy's variables, whether
            // from the base environment or the task's captured state.
            return Some(
                req.env
                    .iter()
                    .filter(|(k, v)| !crate::netproxy::NetProxy::is_proxy_variable(k, v))
                    .cloned()
                    .collect(),
            );
        }
        let own = proxy.map(|p| p.sandbox_env()).unwrap_or_default();
        let names: std::collections::HashSet<String> = self
            .cfg
            .proxy
            .iter()
            .flat_map(|p| p.sandbox_env())
            .chain(own.iter().cloned())
            .map(|(k, _)| k)
            .collect();
        let mut env: Vec<(String, String)> = req
            .env
            .iter()
            .filter(|(k, _)| !names.contains(k))
            .cloned()
            .collect();
        env.extend(own);
        Some(env)
    }

    fn start(&self, task: &str, n: u64, generation: u64) -> io::Result<Placed> {
        let spec = self.lockdown(task, n, generation)?;
        let at = self.placement.start(self, task, &spec)?;
        let (_, proxy) = self.net_for(task);
        if let Some(p) = &proxy
            && let Err(e) = self.adopt(p, &at.id)
        {
            // Fail closed: no container runs without its proxy.
            self.remove(std::slice::from_ref(&at));
            return Err(io::Error::other(format!(
                "{}: cannot give the container its network proxy (terminal.network allow-list; this needs root and a rootful engine): {e}",
                self.kind()
            )));
        }
        tracing::debug!(container = %at.id, image = %self.cfg.image, task = %task_key(task), "container backend: started");
        Ok(at)
    }

    /// What task `task`'s container (slot `n`, start `generation`) gets:
    /// the lockdown and its setup, whoever starts it.
    fn lockdown(&self, task: &str, n: u64, generation: u64) -> io::Result<Lockdown> {
        let c = &self.cfg;
        let (network, proxy) = self.net_for(task);
        let task_label: String = task_key(task)
            .chars()
            .filter(|c| !c.is_control())
            .take(128)
            .collect();
        let mut spec = Lockdown {
            name: format!("{}-{n}-{generation}", self.name()),
            labels: vec![
                (
                    OWNER_LABEL.to_string(),
                    owner_of(std::process::id() as i32).unwrap_or_default(),
                ),
                (TASK_LABEL.to_string(), task_label),
            ],
            env: Vec::new(),
            binds: Vec::new(),
            workdir: c.workspace.as_ref().map(|w| w.display().to_string()),
            pids_limit: c.pids_limit,
            memory: c.memory.clone(),
            cpus: c.cpus,
            network,
            image: c.image.clone(),
            // The private folder for state captures, then sleep forever
            // without depending on `sleep infinity` (busybox).
            entry_script: format!(
                "(umask 077; mkdir -p -- {}); while :; do sleep 86400; done",
                shq(&self.state_dir_path())
            ),
        };
        if let Some(p) = &proxy {
            spec.env.extend(p.sandbox_env());
            if let Some(ca) = p.ca_bundle() {
                spec.binds.push(Bind {
                    src: ca.to_path_buf(),
                    dst: PathBuf::from(crate::netproxy::CA_INSIDE),
                    ro: true,
                });
            }
        }
        if c.share_runs {
            spec.binds.push(Bind {
                src: self.shared_here(n)?,
                dst: PathBuf::from(SHARED_INSIDE),
                ro: false,
            });
        }
        for p in &c.ro_binds {
            spec.binds.push(Bind {
                src: p.clone(),
                dst: p.clone(),
                ro: true,
            });
        }
        if let Some(w) = &c.workspace {
            spec.binds.push(Bind {
                src: w.clone(),
                dst: w.clone(),
                ro: false,
            });
        }
        Ok(spec)
    }
    /// Slot `n`'s shared folder on this machine, made if missing: inside
    /// this runtime's folder (0700: no other user of this machine reaches
    /// it), itself open (0755) since the container's user may be any.
    fn shared_here(&self, n: u64) -> io::Result<PathBuf> {
        shared_folder(&self.shared, &n.to_string())
    }

    /// Make the proxy's listener in container `id`'s network namespace.
    fn adopt(&self, proxy: &crate::netproxy::NetProxy, id: &str) -> io::Result<()> {
        let out = self
            .client()
            .args(["inspect", "--format", "{{.State.Pid}}", id])
            .stderr(Stdio::null())
            .output()?;
        let pid: i32 = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| io::Error::other("the engine reported no process for the container"))?;
        let l = crate::netproxy::listen_in_netns(pid)?;
        let guard = proxy.adopt(l)?;
        lock(&self.adopted).insert(id.to_string(), guard);
        Ok(())
    }

    /// Remove containers of ours whose starting process is gone.
    fn reap_stale(&self) {
        self.placement.reap_stale(self);
    }

    /// Start the watcher that removes this runtime's containers should this
    /// process die without closing it (SIGKILL, a crash, an exit without
    /// cleanup): the process shim in watch mode (`ht-shim -w`), which runs
    /// the removal when its parent's pidfd says the host is gone. Closing
    /// the runtime stops it instead ([`Container::unwatch`]).
    fn watch(&self) {
        let Some(shim) = crate::supervisor::shim_path() else {
            return;
        };
        let mut client: Vec<String> = vec![self.client.display().to_string()];
        if let Some(h) = &self.cfg.host {
            client.push(
                match self.cfg.engine {
                    Engine::Docker => "-H",
                    Engine::Podman => "--url",
                }
                .into(),
            );
            client.push(h.clone());
        }
        let script = format!(
            "{}; rm -rf -- {}",
            self.placement.crash_script(self),
            shq(&self.shared.display().to_string())
        );
        let child = Command::new(shim)
            .args(["-w", "/bin/sh", "-c", &script, "sh"])
            .args(&client)
            .env_clear()
            .envs(self.client_env.iter().cloned())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        match child {
            Ok(c) => *lock(&self.watcher) = Some(c),
            Err(e) => {
                tracing::warn!("container backend: no watcher for a crash of this process: {e}")
            }
        }
    }

    /// Stop the watcher: the runtime removes its containers itself.
    fn unwatch(&self) {
        if let Some(mut c) = lock(&self.watcher).take() {
            crate::sys::kill(c.id() as i32, libc::SIGTERM);
            let _ = c.wait();
        }
    }

    /// Remove containers (their processes are killed with them).
    fn remove(&self, gone: &[Placed]) {
        if gone.is_empty() {
            return;
        }
        {
            let mut adopted = lock(&self.adopted);
            for p in gone {
                adopted.remove(&p.id);
            }
        }
        self.placement.remove(self, gone);
    }

    /// Run `script` in the container at `at`.
    fn run_in(&self, at: &Placed, script: &str, stdin: &[u8]) -> io::Result<ScriptOutput> {
        let argv = self.exec_argv(at, false, true, None, script);
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .env_clear()
            .envs(self.client_env.iter().cloned());
        run_capture(cmd, stdin)
    }

    /// A new mark suffix for a command of slot `n`.
    fn new_suffix(&self, n: u64) -> String {
        format!("-{n}-{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// How the local engine client itself is started.
    fn client_request(&self, pty: bool) -> SpawnRequest<'_> {
        SpawnRequest {
            script: "",
            cwd: Path::new("/"),
            env: &self.client_env,
            pty,
            extra_rw: &[],
            task: "",
            linger: false,
        }
    }

    /// Hand `script` to task `task`'s prestarted exec, when it has a live
    /// one for the container of `generation`; returns it and its mark
    /// suffix. `None` (none, stale or dead): the caller starts one cold.
    fn feed_warm(&self, task: &str, generation: u64, script: &str) -> Option<(Spawned, String)> {
        let slot = lock(&self.slots).get(task_key(task)).cloned()?;
        let w = lock(&slot).warm.pop_front()?;
        if w.generation != generation || ExitWatch::new(w.sp.pid).exited() {
            w.discard();
            return None;
        }
        set_nonblocking(w.feed.as_raw_fd());
        let Warm {
            sp, suffix, feed, ..
        } = w;
        let feed = Input::from_fd(feed);
        // The script goes into the pipe (it waits only while a client that
        // is still starting has not read 64 KiB); dropping the end is the
        // reader's end of input.
        match feed.write_all(script.as_bytes()) {
            Ok(_) => Some((sp, suffix)),
            Err(e) => {
                tracing::debug!(error = %e, "container backend: a prestarted exec did not take its script");
                drop(feed);
                stop_client(sp.pid);
                None
            }
        }
    }

    /// Start task `task`'s next exec ahead, unless it has one or its
    /// container changed meanwhile. A failure only costs the next command
    /// the cold path.
    fn prestart(&self, task: &str, at: &Placed, generation: u64, n: u64) {
        if self.cfg.prestart == 0 || self.closed.load(Ordering::Acquire) {
            return;
        }
        let Some(slot) = lock(&self.slots).get(task_key(task)).cloned() else {
            return;
        };
        let mut cur = lock(&slot);
        if cur.generation != generation || cur.at.as_ref().map(|p| &p.id) != Some(&at.id) {
            return;
        }
        while cur.warm.len() < self.cfg.prestart {
            let suffix = self.new_suffix(n);
            let token = format!("{}{suffix}", self.id);
            let argv = self.exec_argv(at, false, true, Some(&token), WARM_READER);
            match spawn_argv_fed(&argv, &self.client_request(false)) {
                Ok((sp, feed)) => cur.warm.push_back(Warm {
                    generation,
                    suffix,
                    sp,
                    feed,
                }),
                Err(e) => {
                    tracing::debug!(error = %e, "container backend: cannot prestart an exec");
                    break;
                }
            }
        }
    }

    /// Whether the container at `at` still runs (asked only after a failure).
    fn running(&self, at: &Placed) -> bool {
        self.client_at(at.host.as_deref().or(self.cfg.host.as_deref()))
            .args(["inspect", "-f", "{{.State.Running}}", &at.id])
            .stderr(Stdio::null())
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "true")
    }

    /// Whether container `id` still runs after a command in it ended with
    /// `code`. A SIGKILL (137) is what every process of a container gets
    /// when the container is killed or removed, and dockerd can report the
    /// exec's exit before it marks the container stopped. So after a 137 a
    /// "running" answer is checked by running `true` in the container: if
    /// that works the container lives (a command killed on its own, out of
    /// memory or by `kill -9`); if not, the engine is asked again for up to
    /// [`KILL_SETTLE`] (an exec can also fail in a live container whose
    /// pids limit is reached, and a live container is never forgotten).
    fn still_running(&self, at: &Placed, code: i32) -> bool {
        if !self.running(at) {
            return false;
        }
        if code != 128 + libc::SIGKILL || self.answers(at) {
            return true;
        }
        let until = Instant::now() + KILL_SETTLE;
        while Instant::now() < until {
            std::thread::sleep(Duration::from_millis(100));
            if !self.running(at) {
                return false;
            }
        }
        true
    }

    /// Whether `true` runs in the container at `at`.
    fn answers(&self, at: &Placed) -> bool {
        self.client_at(at.host.as_deref().or(self.cfg.host.as_deref()))
            .args(["exec", &at.id, "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Forget task `task`'s container `id` (it is gone); the task's next
    /// command starts another.
    fn forget(&self, task: &str, at: &Placed) {
        let Some(slot) = lock(&self.slots).get(task_key(task)).cloned() else {
            return;
        };
        let mut cur = lock(&slot);
        if cur.at.as_ref().map(|p| &p.id) == Some(&at.id) {
            let (_, warm) = cur.vacate();
            drop(cur);
            discard_all(warm);
            // Whatever is left of it (a stopped container) goes.
            self.remove(std::slice::from_ref(at));
        }
    }

    /// A bash loop that signals every process in the container whose mark
    /// is this runtime's id followed by `suffix`, and each one's process
    /// group.
    fn kill_script(&self, suffix: &str, signal: i32) -> String {
        let pat = format!("{MARK_VAR}={}{suffix}", self.id);
        format!(
            "for f in /proc/[0-9]*/environ; do p=${{f#/proc/}}; p=${{p%/environ}}; [ \"$p\" = $$ ] && continue; \
             while IFS= read -r -d '' kv; do case $kv in {pat}) kill -{signal} -- -$p 2>/dev/null; kill -{signal} $p 2>/dev/null; break;; esac; done < \"$f\" 2>/dev/null; done; true"
        )
    }

    /// Learn the image's login environment and home (once, in the default
    /// task's container: every task's container runs the same image).
    fn boot(&self) -> io::Result<&Boot> {
        if let Some(b) = self.boot.get() {
            return Ok(b);
        }
        let _g = lock(&self.boot_lock);
        if let Some(b) = self.boot.get() {
            return Ok(b);
        }
        let script = boot_script_with_dir(&self.state_dir_path());
        let out = self.run_script("default", &format!("exec bash -l -c {}", shq(&script)), b"")?;
        if out.code != 0 {
            return Err(io::Error::other(format!(
                "{}: cannot prepare the container: {}",
                self.kind(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let boot = parse_boot(&out.stdout, NOT_STATE)?;
        let _ = self.boot.set(boot);
        Ok(self.boot.get().expect("set above"))
    }
}

/// The part of a `ps --format '{{.Labels}}'` line after `key`: docker
/// prints `k=v,k2=v2`, podman `map[k:v k2:v2]`.
pub fn label_value<'a>(labels: &'a str, key: &str) -> Option<&'a str> {
    let at = labels.find(key)? + key.len();
    let rest = labels[at..].strip_prefix(['=', ':'])?;
    let end = rest.find([',', ' ', ']']).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// This boot of this machine (8 hex digits).
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| {
            s.trim()
                .chars()
                .filter(|c| c.is_ascii_hexdigit())
                .take(8)
                .collect()
        })
        .unwrap_or_else(|_| "0".into())
}

/// Whether owner label `owner` (`<boot id>-<pid>-<start time>`) names a
/// process of this boot of this machine that is gone. Another boot's (a
/// reboot, or another machine sharing the engine) is not judged here.
pub fn owner_gone(owner: &str) -> bool {
    let mut parts = owner.split('-');
    let (Some(b), Some(pid), Some(start)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    if b != boot_id() {
        return false;
    }
    let Ok(pid) = pid.parse::<i32>() else {
        return false;
    };
    owner_of(pid).as_deref() != Some(&format!("{b}-{pid}-{start}"))
}

/// `<boot id>-<pid>-<start time>` of a live process (a pid alone can be reused).
pub fn owner_of(pid: i32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    // Fields after the command: state is field 3, start time field 22.
    let start = rest.split_whitespace().nth(19)?;
    Some(format!("{}-{pid}-{start}", boot_id()))
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    crate::env::find_program(name)
}

/// Did the engine say the container is not there (gone or stopped)?
fn container_gone(stderr: &[u8]) -> bool {
    let e = String::from_utf8_lossy(stderr).to_ascii_lowercase();
    e.contains("no such container")
        || e.contains("is not running")
        || e.contains("container state improper")
}

impl RemoteShell for Container {
    fn run_script(&self, task: &str, script: &str, stdin: &[u8]) -> io::Result<ScriptOutput> {
        let (at, _, _) = self.ensure(task)?;
        let out = self.run_in(&at, script, stdin)?;
        if out.code != 0 && container_gone(&out.stderr) {
            // Killed or removed from outside: once more in a new one.
            self.forget(task, &at);
            let (at, _, _) = self.ensure(task)?;
            return self.run_in(&at, script, stdin);
        }
        if out.code != 0
            && let Some(why) = self.placement.lost(self, &at)
        {
            // Its node went away during the call: say so, as `ensure` does.
            self.forget(task, &at);
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                format!(
                    "{why}; the task's files and processes there are lost. The next command starts a new container."
                ),
            ));
        }
        Ok(out)
    }
    fn label(&self) -> String {
        format!("{} container {}", self.kind(), self.name())
    }
}

impl Environment for Container {
    fn name(&self) -> &'static str {
        self.kind()
    }

    fn spawn(&self, req: &SpawnRequest<'_>) -> io::Result<Spawned> {
        let (at, generation, n) = self.ensure(req.task)?;
        let env = self.proxy_env(req);
        let req = &SpawnRequest {
            env: env.as_deref().unwrap_or(req.env),
            ..*req
        };
        let script = command_script(req);
        let warm = if req.pty {
            None
        } else {
            self.feed_warm(req.task, generation, &script)
        };
        let (sp, suffix) = match warm {
            Some(w) => w,
            None => {
                let suffix = self.new_suffix(n);
                let token = format!("{}{suffix}", self.id);
                let argv = self.exec_argv(&at, req.pty, false, Some(&token), &script);
                (spawn_argv(&argv, &self.client_request(req.pty))?, suffix)
            }
        };
        if !req.pty {
            self.prestart(req.task, &at, generation, n);
        }
        let mut started = lock(&self.started);
        if started.len() > 1024 {
            started.retain(|pid, _| crate::tree::tree_alive(*pid));
        }
        started.insert(
            sp.pid,
            Started {
                task: task_key(req.task).to_string(),
                token: suffix,
                generation,
            },
        );
        Ok(sp)
    }

    fn kill(&self, pid: i32, signal: i32) {
        let found = lock(&self.started)
            .get(&pid)
            .map(|s| (s.task.clone(), s.token.clone(), s.generation));
        let Some((task, token, generation)) = found else {
            kill_tree(pid, signal);
            return;
        };
        // The container the command runs in, if it still runs: a kill
        // never starts a container (the task's may be gone or replaced,
        // and what ran in it with it).
        let current = lock(&self.slots).get(&task).cloned().and_then(|slot| {
            let cur = lock(&slot);
            cur.at.clone().filter(|_| cur.generation == generation)
        });
        // Killing the local client alone would leave the command running inside.
        let inside_ok = current.is_some_and(|at| {
            self.run_in(&at, &self.kill_script(&token, signal), b"")
                .is_ok_and(|o| o.code == 0)
        });
        if !inside_ok || signal == libc::SIGKILL {
            kill_tree(pid, signal);
        }
    }

    fn set_task_network(&self, task: &str, net: Option<crate::env::TaskNetwork>) -> io::Result<()> {
        if matches!(net, Some(crate::env::TaskNetwork::Proxy(_))) && self.kind() == "swarm" {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "an allow-list does not work on the swarm backend (its proxy runs on this machine, the task's container may not): \"off\" or \"on\" only",
            ));
        }
        // Held across the check: a start of the task waits for it.
        let slot = self.slot(task);
        let cur = lock(&slot);
        if let Some(at) = &cur.at {
            let id = &at.id;
            return Err(io::Error::new(
                io::ErrorKind::ResourceBusy,
                format!(
                    "task '{}' already has a running container ({}): a container's network is set when it starts; set the task's network before its first command, or clean the task up first",
                    task_key(task),
                    &id[..id.len().min(12)]
                ),
            ));
        }
        let mut nets = lock(&self.task_net);
        match net {
            Some(n) => nets.insert(task_key(task).to_string(), n),
            None => nets.remove(task_key(task)),
        };
        Ok(())
    }

    fn cleanup_task(&self, task: &str) {
        lock(&self.task_net).remove(task_key(task));
        let Some(slot) = lock(&self.slots).remove(task_key(task)) else {
            return;
        };
        let (id, warm, n) = {
            let mut cur = lock(&slot);
            let (id, warm) = cur.vacate();
            (id, warm, cur.n)
        };
        discard_all(warm);
        if let Some(at) = id {
            tracing::debug!(container = %at.id, task = %task_key(task), "container backend: task cleaned up, container removed");
            self.remove(&[at]);
        }
        if self.cfg.share_runs {
            let _ = std::fs::remove_dir_all(self.shared.join(n.to_string()));
        }
    }

    fn cleanup(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let slots: Vec<_> = lock(&self.slots).drain().map(|(_, s)| s).collect();
        let mut ids = Vec::new();
        for slot in &slots {
            let (id, warm) = lock(slot).vacate();
            discard_all(warm);
            ids.extend(id);
        }
        self.remove(&ids);
        if self.cfg.share_runs {
            let _ = std::fs::remove_dir_all(&self.shared);
        }
        self.unwatch();
    }

    fn location(&self) -> String {
        self.placement.location(self)
    }

    fn remote(&self) -> Option<&dyn Remote> {
        Some(self)
    }
}

impl Remote for Container {
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
    fn is_dir(&self, task: &str, path: &Path) -> bool {
        crate::remote_fs::is_dir(self, task, path)
    }
    fn shared_dir(&self, task: &str) -> io::Result<Option<(PathBuf, PathBuf)>> {
        if !self.cfg.share_runs {
            return Ok(None);
        }
        let (_, _, n) = self.ensure(task)?;
        Ok(Some((
            self.shared.join(n.to_string()),
            PathBuf::from(SHARED_INSIDE),
        )))
    }
    fn explain_exit(&self, pid: i32, code: i32) -> Option<String> {
        let s = lock(&self.started).remove(&pid)?;
        if code == 0 {
            return None;
        }
        let slot = lock(&self.slots).get(&s.task).cloned()?;
        let at = {
            let cur = lock(&slot);
            cur.at.clone().filter(|_| cur.generation == s.generation)?
        };
        // A placement that can lose its node answers cheaply (no engine call).
        if let Some(why) = self.placement.lost(self, &at) {
            self.forget(&s.task, &at);
            return Some(format!(
                "{why} during the command; it may have partly run. The next command starts a new container."
            ));
        }
        // The client's own failures and kills (125-127, 128+signal); a
        // command's ordinary failures cost no extra call.
        if (0..125).contains(&code) {
            return None;
        }
        if self.still_running(&at, code) {
            return None;
        }
        self.forget(&s.task, &at);
        Some(format!(
            "the {} container of this task ({}) stopped during the command (killed or removed from outside?); it may have partly run. The next command starts a new container.",
            self.kind(),
            self.name()
        ))
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        self.cleanup();
    }
}

/// The backend as the terminal holds it: one [`Container`] (a container
/// per task) shared with the file tools ([`Environment::files`]).
pub struct ContainerBackend(pub Arc<Container>);

impl ContainerBackend {
    pub fn new(cfg: ContainerConfig) -> Result<ContainerBackend, String> {
        Ok(ContainerBackend(Arc::new(Container::new(cfg)?)))
    }
}

impl Environment for ContainerBackend {
    fn name(&self) -> &'static str {
        self.0.kind()
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
    fn set_task_network(&self, task: &str, net: Option<crate::env::TaskNetwork>) -> io::Result<()> {
        Environment::set_task_network(&*self.0, task, net)
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
        let name = self.0.kind();
        Some(Arc::new(crate::remote_fs::RemoteFs::new(
            self.0.clone(),
            task_key(task),
            name,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_of_both_engines() {
        assert_eq!(
            label_value("a=b,hermes-tools.owner=1f-2-3,c=d", OWNER_LABEL),
            Some("1f-2-3")
        );
        assert_eq!(
            label_value("map[hermes-tools.owner:1f-2-3 x:y]", OWNER_LABEL),
            Some("1f-2-3")
        );
        assert_eq!(label_value("x=y", OWNER_LABEL), None);
    }

    #[test]
    fn lockdown_cannot_be_undone_by_run_args() {
        for a in [
            "--privileged",
            "--cap-add=SYS_ADMIN",
            "--network=host",
            "--pid=host",
            "--security-opt",
        ] {
            let c = ContainerConfig {
                image: "x".into(),
                run_args: vec![a.into()],
                ..Default::default()
            };
            assert!(c.validate().unwrap_err().contains("not allowed"), "{a}");
        }
        let ok = ContainerConfig {
            image: "x".into(),
            run_args: vec!["--ulimit=nofile=1024:1024".into()],
            ..Default::default()
        };
        ok.validate().unwrap();
        let bad = ContainerConfig {
            image: "-x".into(),
            ..Default::default()
        };
        assert!(bad.validate().is_err());
    }

    #[test]
    fn owner_is_this_process() {
        let me = owner_of(std::process::id() as i32).unwrap();
        assert!(me.starts_with(&boot_id()), "{me}");
        assert_eq!(me.split('-').count(), 3, "{me}");
    }
}
