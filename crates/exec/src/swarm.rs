//! The swarm backend: each task's container is a Docker Swarm service of
//! one replica, so a scheduler we do not write places it on a fleet of
//! machines by free resources and node labels. Everything after placement
//! is the container backend's ([`Container`]): the same lockdown (one
//! [`Lockdown`] rendered as `service create` flags here), `docker exec`
//! with prestarted execs, marks and kills inside, cwd/env capture, file
//! tools, the crash watcher. This module only says how a task's container
//! is started, found, removed and lost ([`Placement`]).
//!
//! * **Start**: `service create` on a manager (`terminal.docker.host`)
//!   with `--restart-condition none` (a container that dies is reported,
//!   not silently replaced by an empty one elsewhere), limits as limits
//!   *and* reservations (the scheduler places by free memory and CPU),
//!   the config's constraints and preferences; then the task's state is
//!   polled until it runs, and its node's engine address is found (the
//!   config's `nodes`, else the node label [`ENGINE_LABEL`], else the
//!   manager's own address for the manager's node). At most
//!   `start_concurrency` starts run at once; the rest wait their turn.
//! * **Network**: swarm refuses `--network none` for services, so with the
//!   network off each task gets its own overlay network made `--internal`
//!   (no gateway, no route out, no other task on it), removed with it.
//! * **Exec**: `docker -H <node's engine> exec` into the task's container.
//! * **Lost nodes**: before each command (and after a failed one) the
//!   node's engine socket is connected to (no engine call: microseconds on
//!   a unix socket, one round trip on tcp). If it does not answer, the
//!   call fails saying so, the service is removed, and the node is avoided
//!   (`node.id!=`) by this runtime's next placements for [`AVOID_FOR`]
//!   while the managers notice it is down; the next command starts a new
//!   container elsewhere.
//! * **Leftovers**: services and networks carry the owner label of the
//!   container backend plus [`MACHINE_LABEL`]: the next runtime on the same
//!   machine removes those whose process is gone (or whose machine
//!   rebooted). A host on another machine cannot be judged from here and
//!   is left alone. `max_containers` counts every hermes-tools service of
//!   the swarm (a fleet's limit), not just this runtime's.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::process::Stdio;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::container::{
    Container, ContainerBackend, ContainerConfig, Engine, Lockdown, OWNER_LABEL, Placed, Placement,
    boot_id, owner_gone,
};

/// The node label naming a node's engine address (`tcp://10.0.0.7:2376`),
/// when the config's `nodes` does not.
pub const ENGINE_LABEL: &str = "hermes-tools.engine";

/// The label naming the machine (its `/etc/machine-id`) whose runtime
/// made a service: only that machine's runtimes judge whether its owner
/// is gone.
pub const MACHINE_LABEL: &str = "hermes-tools.machine";

/// How long a node found unreachable is kept out of this runtime's
/// placements (the managers mark it down within about 15 s).
pub const AVOID_FOR: Duration = Duration::from_secs(60);

/// How long a task may stay pending with a scheduler's complaint (no
/// suitable node: constraints nobody meets, resources all reserved) before
/// the start fails with it.
const PENDING_GRACE: Duration = Duration::from_secs(10);

/// How often the tasks being started are looked at.
const POLL_EVERY: Duration = Duration::from_millis(100);

/// What one poll saw of a starting service's task.
#[derive(Clone, Default)]
struct Seen {
    /// `Running 2 seconds ago`, `Pending`, ... or `Gone`.
    state: String,
    err: String,
    node: String,
    container: String,
}

/// The starts waiting for their tasks, and the latest poll's findings.
#[derive(Default)]
struct PollState {
    waiting: std::collections::HashSet<String>,
    seen: HashMap<String, Seen>,
    /// A waiter is polling for everyone now.
    polling: bool,
}

#[derive(Default)]
struct Poll {
    state: Mutex<PollState>,
    cv: Condvar,
}

/// One look at services `names`: each one's newest task's state, and for
/// those running their node and container (two client calls in all).
fn poll_tasks(c: &Container, names: &[String]) -> Vec<(String, Seen)> {
    let mut found = Vec::new();
    if names.is_empty() {
        return found;
    }
    let Ok(out) = c
        .client()
        .args([
            "service",
            "ps",
            "--no-trunc",
            "--format",
            "{{.ID}}|{{.Name}}|{{.CurrentState}}|{{.Error}}",
        ])
        .args(names)
        .stdin(Stdio::null())
        .output()
    else {
        return found;
    };
    if !out.status.success() {
        // One service gone fails the whole listing: tell its waiter.
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        for n in names {
            if err.contains(n.as_str()) {
                found.push((
                    n.clone(),
                    Seen {
                        state: "Gone".into(),
                        err: last_line(err.as_bytes()),
                        ..Seen::default()
                    },
                ));
            }
        }
        return found;
    }
    let mut running: Vec<(String, String)> = Vec::new();
    let mut seen_names = std::collections::HashSet::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut f = line.splitn(4, '|');
        let (id, task, state, err) = (
            f.next().unwrap_or(""),
            f.next().unwrap_or(""),
            f.next().unwrap_or(""),
            f.next().unwrap_or("").trim(),
        );
        // `<service>.<slot>`; the newest task of a service comes first.
        let service = task.rsplit_once('.').map(|(s, _)| s).unwrap_or(task);
        if !seen_names.insert(service.to_string()) {
            continue;
        }
        if state.starts_with("Running") {
            running.push((id.to_string(), service.to_string()));
        }
        found.push((
            service.to_string(),
            Seen {
                state: state.to_string(),
                err: err.to_string(),
                ..Seen::default()
            },
        ));
    }
    if !running.is_empty() {
        let ids: Vec<&str> = running.iter().map(|(id, _)| id.as_str()).collect();
        let out = c
            .client()
            .args([
                "inspect",
                "--type",
                "task",
                "--format",
                "{{.ID}} {{.NodeID}} {{.Status.ContainerStatus.ContainerID}}",
            ])
            .args(&ids)
            .stdin(Stdio::null())
            .output();
        if let Ok(out) = out {
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                let mut f = line.split_whitespace();
                let (Some(id), Some(node), Some(cid)) = (f.next(), f.next(), f.next()) else {
                    continue;
                };
                let Some((_, service)) = running.iter().find(|(t, _)| t == id) else {
                    continue;
                };
                if let Some((_, s)) = found.iter_mut().find(|(n, _)| n == service) {
                    s.node = node.to_string();
                    s.container = cid.to_string();
                }
            }
        }
    }
    found
}

/// What the swarm backend adds to a container config.
#[derive(Clone)]
pub struct SwarmConfig {
    /// Image, limits, prestart and `max_containers` (the fleet's); `host`
    /// is a manager's address.
    pub base: ContainerConfig,
    /// `--constraint` expressions (`node.labels.pool==agents`).
    pub constraints: Vec<String>,
    /// `--placement-pref` expressions (`spread=node.labels.zone`).
    pub preferences: Vec<String>,
    /// Engine address per node id or hostname (before the node label).
    pub nodes: BTreeMap<String, String>,
    /// Memory reserved per task (default: the memory limit).
    pub reserve_memory: Option<String>,
    /// CPUs reserved per task (default 0.1: a shell idles most of the time).
    pub reserve_cpus: Option<f64>,
    /// Task containers being started at once (default 8).
    pub start_concurrency: usize,
    /// How long a start may take, image pull included (default 120 s).
    pub start_timeout: Duration,
    /// With `network` on: networks to attach (default none: the node's
    /// default bridge).
    pub networks: Vec<String>,
    /// Where placements are reported.
    pub events: Option<Arc<dyn SwarmEvents>>,
}

impl std::fmt::Debug for SwarmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwarmConfig")
            .field("base", &self.base)
            .field("constraints", &self.constraints)
            .field("preferences", &self.preferences)
            .field("nodes", &self.nodes)
            .finish_non_exhaustive()
    }
}

impl Default for SwarmConfig {
    fn default() -> Self {
        SwarmConfig {
            base: ContainerConfig::default(),
            constraints: Vec::new(),
            preferences: Vec::new(),
            nodes: BTreeMap::new(),
            reserve_memory: None,
            reserve_cpus: None,
            start_concurrency: 8,
            start_timeout: Duration::from_secs(120),
            networks: Vec::new(),
            events: None,
        }
    }
}

/// Placement reports, for the host's event handler.
pub trait SwarmEvents: Send + Sync {
    /// Task `task`'s container now runs on node `node_name`.
    fn placed(&self, task: &str, at: &Placed, node_name: &str);
    /// The node of the container at `at` cannot be reached any more.
    fn lost(&self, at: &Placed, why: &str);
}

fn bad_word(s: &str) -> bool {
    s.is_empty() || s.starts_with('-') || s.chars().any(|c| c.is_control())
}

impl SwarmConfig {
    /// One-line errors for what cannot work.
    pub fn validate(&self) -> Result<(), String> {
        self.base.validate()?;
        let b = &self.base;
        if b.engine != Engine::Docker {
            return Err("terminal.backend 'swarm' needs docker (terminal.docker.engine)".into());
        }
        if b.proxy.is_some() {
            return Err(
                "terminal.network as an allow-list does not work on the swarm backend (its proxy runs on this machine); use terminal.docker.network or leave it off"
                    .into(),
            );
        }
        if !b.run_args.is_empty() {
            return Err(
                "terminal.docker.run_args are `docker run` flags, which a swarm service does not take; leave them out on the swarm backend"
                    .into(),
            );
        }
        for c in &self.constraints {
            if bad_word(c) || !(c.contains("==") || c.contains("!=")) {
                return Err(format!(
                    "terminal.swarm.constraints: '{c}' is not a constraint (\"node.labels.pool==agents\")"
                ));
            }
        }
        for p in &self.preferences {
            if bad_word(p) || !p.starts_with("spread=") {
                return Err(format!(
                    "terminal.swarm.preferences: '{p}' is not a placement preference (\"spread=node.labels.zone\")"
                ));
            }
        }
        for (node, addr) in &self.nodes {
            if bad_word(node) || bad_word(addr) || addr.chars().any(char::is_whitespace) {
                return Err(format!(
                    "terminal.swarm.nodes: '{node}': '{addr}' is not an engine address (\"tcp://10.0.0.7:2376\")"
                ));
            }
        }
        for n in &self.networks {
            if bad_word(n) {
                return Err(format!(
                    "terminal.swarm.networks: '{n}' is not a network name"
                ));
            }
        }
        if !self.networks.is_empty() && !b.network {
            return Err(
                "terminal.swarm.networks needs terminal.docker.network on (off: each task gets an internal network with no route out)"
                    .into(),
            );
        }
        if let Some(m) = &self.reserve_memory {
            let digits = m.trim_end_matches(['b', 'k', 'm', 'g', 'B', 'K', 'M', 'G']);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!(
                    "terminal.swarm.reserve_memory: '{m}' is not a size (\"256m\", \"1g\")"
                ));
            }
        }
        if let Some(c) = self.reserve_cpus
            && !(c >= 0.0 && c <= b.cpus.unwrap_or(1024.0))
        {
            return Err(format!(
                "terminal.swarm.reserve_cpus must be between 0 and terminal.docker.cpus (got {c})"
            ));
        }
        if self.start_concurrency == 0 {
            return Err("terminal.swarm.start_concurrency must be at least 1".into());
        }
        if self.start_timeout.is_zero() {
            return Err("terminal.swarm.start_timeout must be above 0".into());
        }
        Ok(())
    }
}

/// The swarm backend: a [`ContainerBackend`] whose containers are services.
pub fn backend(cfg: SwarmConfig) -> Result<ContainerBackend, String> {
    cfg.validate()?;
    let base = cfg.base.clone();
    let placement = SwarmPlacement {
        gate: Gate::new(cfg.start_concurrency),
        poll: Poll::default(),
        cfg,
        nodes: Mutex::new(HashMap::new()),
        avoid: Mutex::new(HashMap::new()),
        manager_node: Mutex::new(None),
    };
    Ok(ContainerBackend(Arc::new(Container::with_placement(
        base,
        Box::new(placement),
    )?)))
}

/// A counting semaphore: at most `n` holders at once.
struct Gate {
    free: Mutex<usize>,
    cv: Condvar,
}

struct Permit<'a>(&'a Gate);

impl Gate {
    fn new(n: usize) -> Gate {
        Gate {
            free: Mutex::new(n.max(1)),
            cv: Condvar::new(),
        }
    }
    fn enter(&self) -> Permit<'_> {
        let mut free = lock(&self.free);
        while *free == 0 {
            free = self.cv.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        *lock(&self.0.free) += 1;
        self.0.cv.notify_one();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A node as this runtime knows it.
#[derive(Clone)]
struct Node {
    hostname: String,
    /// Its engine's address (`None`: the manager's own, the client's default).
    host: Option<String>,
}

struct SwarmPlacement {
    cfg: SwarmConfig,
    gate: Gate,
    /// The shared look at starting services.
    poll: Poll,
    /// Nodes seen, by id.
    nodes: Mutex<HashMap<String, Node>>,
    /// Nodes found unreachable, until when they are avoided.
    avoid: Mutex<HashMap<String, Instant>>,
    /// The id of the node whose engine is `terminal.docker.host`.
    manager_node: Mutex<Option<String>>,
}

/// This machine's id (`/etc/machine-id`, else the hostname).
fn machine_id() -> String {
    let id = std::fs::read_to_string("/etc/machine-id")
        .or_else(|_| std::fs::read_to_string("/proc/sys/kernel/hostname"))
        .unwrap_or_default();
    let id: String = id
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
        .take(64)
        .collect();
    if id.is_empty() { "unknown".into() } else { id }
}

/// The last non-empty line of an engine's complaint.
fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// Whether the engine at `addr` accepts a connection (`None`: an address
/// this cannot check, such as `ssh://`).
fn engine_answers(addr: &str) -> Option<io::Result<()>> {
    if let Some(path) = addr.strip_prefix("unix://") {
        return Some(std::os::unix::net::UnixStream::connect(path).map(drop));
    }
    let hostport = addr.strip_prefix("tcp://")?;
    let hostport = hostport.split('/').next().unwrap_or(hostport);
    let mut last = io::Error::other("no address");
    use std::net::ToSocketAddrs;
    for sa in hostport.to_socket_addrs().ok()? {
        match std::net::TcpStream::connect_timeout(&sa, Duration::from_secs(2)) {
            Ok(_) => return Some(Ok(())),
            Err(e) => last = e,
        }
    }
    Some(Err(last))
}

impl SwarmPlacement {
    /// The engine address commands of a container on `node` use.
    fn node(&self, c: &Container, node: &str) -> io::Result<Node> {
        if let Some(n) = lock(&self.nodes).get(node) {
            return Ok(n.clone());
        }
        let out = c
            .client()
            .args([
                "node",
                "inspect",
                node,
                "--format",
                &format!(
                    "{{{{.Description.Hostname}}}}|{{{{index .Spec.Labels \"{ENGINE_LABEL}\"}}}}"
                ),
            ])
            .stdin(Stdio::null())
            .output()?;
        if !out.status.success() {
            return Err(io::Error::other(format!(
                "swarm: cannot inspect node {node}: {}",
                last_line(&out.stderr)
            )));
        }
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let (hostname, label) = text.split_once('|').unwrap_or((&text, ""));
        let label = label.trim();
        let host = if let Some(a) = self
            .cfg
            .nodes
            .get(node)
            .or_else(|| self.cfg.nodes.get(hostname))
        {
            Some(a.clone())
        } else if !label.is_empty() && label != "<no value>" {
            Some(label.to_string())
        } else if self.manager_node(c).as_deref() == Some(node) {
            self.cfg.base.host.clone()
        } else {
            return Err(io::Error::other(format!(
                "swarm: the task was placed on node {hostname} ({node}), which has no engine address: set terminal.swarm.nodes.{node} or label the node {ENGINE_LABEL}=<address> (docker node update --label-add)"
            )));
        };
        let n = Node {
            hostname: hostname.to_string(),
            host,
        };
        lock(&self.nodes).insert(node.to_string(), n.clone());
        Ok(n)
    }

    /// The id of the node whose engine the client talks to.
    fn manager_node(&self, c: &Container) -> Option<String> {
        if let Some(id) = lock(&self.manager_node).clone() {
            return Some(id);
        }
        let out = c
            .client()
            .args(["info", "--format", "{{.Swarm.NodeID}}"])
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if id.is_empty() {
            return None;
        }
        *lock(&self.manager_node) = Some(id.clone());
        Some(id)
    }

    /// Nodes to keep out of new placements now.
    fn avoided(&self) -> Vec<String> {
        let now = Instant::now();
        let mut avoid = lock(&self.avoid);
        avoid.retain(|_, until| *until > now);
        avoid.keys().cloned().collect()
    }

    fn avoid(&self, node: &str) {
        lock(&self.avoid).insert(node.to_string(), Instant::now() + AVOID_FOR);
    }

    /// `service create` for `spec`; returns nothing but errors.
    fn create(&self, c: &Container, spec: &Lockdown) -> io::Result<()> {
        let b = &self.cfg.base;
        let mut labels = spec.labels.clone();
        labels.push((MACHINE_LABEL.into(), machine_id()));
        if !spec.network {
            // Its own network, internal: no gateway, no route out.
            let mut net = c.client();
            net.args(["network", "create", "-d", "overlay", "--internal"]);
            for (k, v) in &labels {
                net.arg("--label").arg(format!("{k}={v}"));
            }
            let out = net.arg(&spec.name).stdin(Stdio::null()).output()?;
            if !out.status.success() {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    format!(
                        "swarm: cannot create the task's internal network (is terminal.docker.host a swarm manager?): {}",
                        last_line(&out.stderr)
                    ),
                ));
            }
        }
        let mut cmd = c.client();
        cmd.args(["service", "create", "-d", "-q", "--name", &spec.name]);
        cmd.args(["--replicas", "1", "--restart-condition", "none"]);
        // Removal kills at once: nothing in a task container is waited for.
        cmd.args(["--stop-signal", "SIGKILL", "--stop-grace-period", "0s"]);
        cmd.args(["--init", "--cap-drop", "ALL"]);
        for (k, v) in &labels {
            cmd.arg("--label").arg(format!("{k}={v}"));
            cmd.arg("--container-label").arg(format!("{k}={v}"));
        }
        cmd.arg(format!("--limit-pids={}", spec.pids_limit));
        if let Some(m) = &spec.memory {
            cmd.arg(format!("--limit-memory={m}"));
        }
        if let Some(m) = self.cfg.reserve_memory.as_ref().or(spec.memory.as_ref()) {
            cmd.arg(format!("--reserve-memory={m}"));
        }
        if let Some(n) = spec.cpus {
            cmd.arg(format!("--limit-cpu={n}"));
        }
        let reserve_cpus = self.cfg.reserve_cpus.unwrap_or(0.1);
        if reserve_cpus > 0.0 {
            cmd.arg(format!("--reserve-cpu={reserve_cpus}"));
        }
        if spec.network {
            for n in &self.cfg.networks {
                cmd.arg("--network").arg(n);
            }
        } else {
            cmd.arg("--network").arg(&spec.name);
        }
        for (k, v) in &spec.env {
            cmd.arg("--env").arg(format!("{k}={v}"));
        }
        for bind in &spec.binds {
            cmd.arg("--mount").arg(format!(
                "type=bind,src={},dst={}{}",
                bind.src.display(),
                bind.dst.display(),
                if bind.ro { ",readonly" } else { "" }
            ));
        }
        if let Some(w) = &spec.workdir {
            cmd.arg("--workdir").arg(w);
        }
        for x in &self.cfg.constraints {
            cmd.arg("--constraint").arg(x);
        }
        for node in self.avoided() {
            cmd.arg("--constraint").arg(format!("node.id!={node}"));
        }
        for p in &self.cfg.preferences {
            cmd.arg("--placement-pref").arg(p);
        }
        cmd.args(["--entrypoint", "bash", &b.image, "-c", &spec.entry_script]);
        let out = cmd.stdin(Stdio::null()).output()?;
        if !out.status.success() {
            self.remove_names(c, std::slice::from_ref(&spec.name));
            return Err(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                format!(
                    "swarm: cannot create a service from image '{}': {}",
                    b.image,
                    last_line(&out.stderr)
                ),
            ));
        }
        Ok(())
    }

    /// Wait until service `name`'s task runs; its node id and container
    /// id. Every start waiting at once shares one poll of the manager (two
    /// client calls a round, however many tasks start): a client call
    /// costs tens of milliseconds of CPU, and a poll per task would have
    /// twenty starts spend the machine on asking.
    fn wait_running(&self, c: &Container, name: &str) -> io::Result<(String, String)> {
        let image = &self.cfg.base.image;
        let started = Instant::now();
        let mut complaint: Option<(String, Instant)> = None;
        let mut st = lock(&self.poll.state);
        st.waiting.insert(name.to_string());
        let result = loop {
            if let Some(seen) = st.seen.get(name).cloned() {
                let word = seen.state.split_whitespace().next().unwrap_or("");
                match word {
                    "Running" if !seen.node.is_empty() && !seen.container.is_empty() => {
                        break Ok((seen.node, seen.container));
                    }
                    "Gone" => {
                        break Err(io::Error::other(format!(
                            "swarm: service {name} went away while starting: {}",
                            seen.err
                        )));
                    }
                    "Failed" | "Rejected" | "Shutdown" | "Complete" | "Orphaned" | "Remove" => {
                        break Err(io::Error::new(
                            io::ErrorKind::ConnectionRefused,
                            format!(
                                "swarm: the task container from image '{image}' did not start ({}): {}",
                                word.to_ascii_lowercase(),
                                if seen.err.is_empty() {
                                    "no reason given"
                                } else {
                                    &seen.err
                                }
                            ),
                        ));
                    }
                    _ => {}
                }
                if !seen.err.is_empty() {
                    let since = match &complaint {
                        Some((e, at)) if *e == seen.err => *at,
                        _ => {
                            complaint = Some((seen.err.clone(), Instant::now()));
                            Instant::now()
                        }
                    };
                    if since.elapsed() > PENDING_GRACE {
                        break Err(io::Error::new(
                            io::ErrorKind::QuotaExceeded,
                            format!(
                                "swarm: the scheduler cannot place the task container: {}",
                                seen.err
                            ),
                        ));
                    }
                }
            }
            if started.elapsed() > self.cfg.start_timeout {
                let state = st
                    .seen
                    .get(name)
                    .map(|s| s.state.clone())
                    .unwrap_or_else(|| "no task yet".into());
                break Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "swarm: the task container did not start within {} s (state: {state}); raise terminal.swarm.start_timeout if images are large",
                        self.cfg.start_timeout.as_secs()
                    ),
                ));
            }
            if st.polling {
                st = self
                    .poll
                    .cv
                    .wait_timeout(st, Duration::from_secs(1))
                    .map(|(g, _)| g)
                    .unwrap_or_else(|e| e.into_inner().0);
                continue;
            }
            // This thread polls for everyone waiting.
            st.polling = true;
            let names: Vec<String> = st.waiting.iter().cloned().collect();
            drop(st);
            std::thread::sleep(POLL_EVERY);
            let found = poll_tasks(c, &names);
            st = lock(&self.poll.state);
            st.polling = false;
            for (n, seen) in found {
                if st.waiting.contains(&n) {
                    st.seen.insert(n, seen);
                }
            }
            self.poll.cv.notify_all();
        };
        st.waiting.remove(name);
        st.seen.remove(name);
        result
    }

    /// `service rm` and `network rm` by name (errors ignored: each may be
    /// gone already); a network still in use a moment after its service
    /// is removed is tried again for a few seconds.
    fn remove_names(&self, c: &Container, names: &[String]) {
        if names.is_empty() {
            return;
        }
        let _ = c
            .client()
            .args(["service", "rm"])
            .args(names)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if self.cfg.base.network {
            return;
        }
        for n in names {
            let until = Instant::now() + Duration::from_secs(5);
            loop {
                let Ok(out) = c
                    .client()
                    .args(["network", "rm", n])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .output()
                else {
                    break;
                };
                let err = String::from_utf8_lossy(&out.stderr).to_ascii_lowercase();
                if out.status.success()
                    || err.contains("no such network")
                    || err.contains("not found")
                    || Instant::now() > until
                {
                    break;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }

    /// Lines of `<name> <owner> <machine>` for hermes-tools objects of
    /// `what` ("service" or "network").
    fn owned(&self, c: &Container, what: &str) -> Vec<(String, String, String)> {
        let list = c
            .client()
            .args([
                what,
                "ls",
                "-q",
                "--filter",
                &format!("label={OWNER_LABEL}"),
            ])
            .stderr(Stdio::null())
            .output();
        let ids: Vec<String> = list
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .split_whitespace()
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        if ids.is_empty() {
            return Vec::new();
        }
        let name = if what == "service" {
            "{{.Spec.Name}}"
        } else {
            "{{.Name}}"
        };
        let labels = if what == "service" {
            ".Spec.Labels"
        } else {
            ".Labels"
        };
        let format = format!(
            "{name} {{{{index {labels} \"{OWNER_LABEL}\"}}}} {{{{index {labels} \"{MACHINE_LABEL}\"}}}}"
        );
        let Ok(out) = c
            .client()
            .args([what, "inspect", "--format", &format])
            .args(&ids)
            .stderr(Stdio::null())
            .output()
        else {
            return Vec::new();
        };
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                Some((
                    f.next()?.to_string(),
                    f.next().unwrap_or("").to_string(),
                    f.next().unwrap_or("").to_string(),
                ))
            })
            .collect()
    }
}

/// Whether a service or network with owner `owner` made on machine
/// `machine` was left by a runtime that is gone: this machine's, from an
/// earlier boot or a process that no longer runs.
fn stale(owner: &str, machine: &str) -> bool {
    if machine != machine_id() {
        return false;
    }
    let boot = owner.split('-').next().unwrap_or("");
    boot != boot_id() || owner_gone(owner)
}

impl Placement for SwarmPlacement {
    fn kind(&self) -> &'static str {
        "swarm"
    }

    fn start(&self, c: &Container, task: &str, spec: &Lockdown) -> io::Result<Placed> {
        let _turn = self.gate.enter();
        // A node may die between placement and use: once more elsewhere.
        let mut attempt = 0;
        loop {
            attempt += 1;
            self.create(c, spec)?;
            let (node_id, cid) = match self.wait_running(c, &spec.name) {
                Ok(x) => x,
                Err(e) => {
                    self.remove_names(c, std::slice::from_ref(&spec.name));
                    return Err(e);
                }
            };
            let node = match self.node(c, &node_id) {
                Ok(n) => n,
                Err(e) => {
                    self.remove_names(c, std::slice::from_ref(&spec.name));
                    return Err(e);
                }
            };
            let at = Placed {
                id: cid,
                host: node.host.clone(),
                service: Some(spec.name.clone()),
                node: Some(node_id.clone()),
            };
            if let Some(why) = self.lost(c, &at) {
                self.remove_names(c, std::slice::from_ref(&spec.name));
                if attempt < 2 {
                    continue;
                }
                return Err(io::Error::new(io::ErrorKind::ConnectionRefused, why));
            }
            tracing::info!(task = %task, service = %spec.name, node = %node.hostname, node_id = %node_id, "swarm backend: task container placed");
            if let Some(ev) = &self.cfg.events {
                ev.placed(task, &at, &node.hostname);
            }
            return Ok(at);
        }
    }

    fn remove(&self, c: &Container, gone: &[Placed]) {
        let names: Vec<String> = gone.iter().filter_map(|p| p.service.clone()).collect();
        self.remove_names(c, &names);
    }

    fn reap_stale(&self, c: &Container) {
        let mut names: Vec<String> = self
            .owned(c, "service")
            .into_iter()
            .filter(|(_, owner, machine)| stale(owner, machine))
            .map(|(n, _, _)| n)
            .collect();
        // Networks whose service was removed but which outlived it.
        for (n, owner, machine) in self.owned(c, "network") {
            if stale(&owner, &machine) && !names.contains(&n) {
                names.push(n);
            }
        }
        if !names.is_empty() {
            tracing::info!(
                count = names.len(),
                "swarm backend: removing services left by a runtime that is gone"
            );
            self.remove_names(c, &names);
        }
    }

    fn crash_script(&self, c: &Container) -> String {
        let p = c.name();
        format!(
            "ids=$(\"$@\" service ls -q --filter name={p}-); [ -z \"$ids\" ] || \"$@\" service rm $ids; \
             for i in 1 2 3 4 5 6 7 8 9 10 11 12; do n=$(\"$@\" network ls -q --filter name={p}-); [ -z \"$n\" ] && break; \"$@\" network rm $n >/dev/null 2>&1 || sleep 2; done"
        )
    }

    fn location(&self, c: &Container) -> String {
        format!(
            "in a swarm service of {} (image {})",
            c.name(),
            self.cfg.base.image
        )
    }

    fn others(&self, c: &Container) -> usize {
        let Ok(out) = c
            .client()
            .args([
                "service",
                "ls",
                "--filter",
                &format!("label={OWNER_LABEL}"),
                "--format",
                "{{.Name}}",
            ])
            .stderr(Stdio::null())
            .output()
        else {
            return 0;
        };
        let mine = format!("{}-", c.name());
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|n| !n.is_empty() && !n.starts_with(&mine))
            .count()
    }

    fn quota_scope(&self) -> &'static str {
        ", counted over the whole swarm"
    }

    fn lost(&self, _c: &Container, p: &Placed) -> Option<String> {
        let addr = p
            .host
            .clone()
            .or_else(|| std::env::var("DOCKER_HOST").ok())
            .unwrap_or_else(|| "unix:///var/run/docker.sock".into());
        let Err(e) = engine_answers(&addr)? else {
            return None;
        };
        let node_id = p.node.clone().unwrap_or_default();
        let hostname = lock(&self.nodes)
            .get(&node_id)
            .map(|n| n.hostname.clone())
            .unwrap_or_default();
        self.avoid(&node_id);
        let why = format!(
            "swarm: node {hostname} ({node_id}) that ran this task's container (service {}) cannot be reached at {addr} ({e})",
            p.service.as_deref().unwrap_or("?")
        );
        tracing::warn!("{why}");
        if let Some(ev) = &self.cfg.events {
            ev.lost(p, &why);
        }
        Some(why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> SwarmConfig {
        SwarmConfig {
            base: ContainerConfig {
                image: "x".into(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn config_errors_are_clear() {
        cfg().validate().unwrap();
        let mut c = cfg();
        c.constraints = vec!["node.role".into()];
        assert!(c.validate().unwrap_err().contains("not a constraint"));
        let mut c = cfg();
        c.preferences = vec!["node.labels.zone".into()];
        assert!(c.validate().unwrap_err().contains("placement preference"));
        let mut c = cfg();
        c.base.run_args = vec!["--ulimit=nofile=1:1".into()];
        assert!(c.validate().unwrap_err().contains("run_args"));
        let mut c = cfg();
        c.base.engine = Engine::Podman;
        assert!(c.validate().unwrap_err().contains("needs docker"));
        let mut c = cfg();
        c.start_concurrency = 0;
        assert!(c.validate().unwrap_err().contains("start_concurrency"));
        let mut c = cfg();
        c.reserve_cpus = Some(9.0);
        assert!(c.validate().unwrap_err().contains("reserve_cpus"));
        let mut c = cfg();
        c.networks = vec!["web".into()];
        assert!(c.validate().unwrap_err().contains("network on"));
    }

    #[test]
    fn stale_owners() {
        let me = crate::container::owner_of(std::process::id() as i32).unwrap();
        assert!(!stale(&me, &machine_id()));
        assert!(!stale(&me, "another-machine"));
        let gone = format!("{}-999999-1", boot_id());
        assert!(stale(&gone, &machine_id()));
        assert!(!stale(&gone, "another-machine"));
        assert!(stale("0badb00t-1-1", &machine_id()));
    }

    #[test]
    fn unreachable_engines_are_told() {
        assert!(engine_answers("ssh://host").is_none());
        assert!(
            engine_answers("unix:///nonexistent/ht.sock")
                .unwrap()
                .is_err()
        );
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = format!("tcp://{}", l.local_addr().unwrap());
        assert!(engine_answers(&addr).unwrap().is_ok());
        drop(l);
        assert!(engine_answers(&addr).unwrap().is_err());
    }

    #[test]
    fn at_most_n_starts_at_once() {
        let g = Arc::new(Gate::new(2));
        let live = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let hs: Vec<_> = (0..8)
            .map(|_| {
                let (g, live, peak) = (g.clone(), live.clone(), peak.clone());
                std::thread::spawn(move || {
                    let _p = g.enter();
                    let n = live.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                    peak.fetch_max(n, std::sync::atomic::Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    live.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(peak.load(std::sync::atomic::Ordering::SeqCst), 2);
    }
}
