//! A real Docker Swarm for the swarm backend's tests and measurements:
//! two dockerds, each in its own network namespace (nothing of this
//! machine's networking changes; the swarm's bridges and overlays go with
//! the namespaces), its own pid and mount namespace (killing a node's
//! daemon takes its containers with it, as a machine that goes away
//! does), its own storage under /tmp, joined by a veth pair. Node 1 is
//! the manager (`swarm init`), node 2 a worker (`swarm join`), each with
//! the small image built from this machine's files
//! (tests/fixtures/test-image.sh). Started once per test binary; a
//! watchdog shell removes the services, stops the daemons and removes
//! the namespaces and folders when the test process is gone, however it
//! ends. Without root or dockerd the tests skip with the reason; without
//! a second node (veth refused) only the two-node test skips.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};

pub const IMAGE: &str = "hermes-tools-test:1";

/// One node: its daemon's socket, folder and namespace.
pub struct Node {
    pub dir: PathBuf,
    /// `unix://<dir>/d.sock`
    pub host: String,
    pub netns: String,
    /// The node's swarm id.
    pub id: String,
    /// The `unshare` process whose child is the node's pid namespace init
    /// (dockerd): SIGKILL it and the whole node goes.
    pub outer: u32,
}

pub struct Swarm {
    pub client: PathBuf,
    pub manager: Node,
    /// The worker, or why there is none.
    pub worker: Result<Node, String>,
}

impl Node {
    pub fn cmd(&self, client: &Path) -> Command {
        let mut c = Command::new(client);
        c.args(["-H", &self.host]);
        c
    }
}

impl Swarm {
    /// The manager's client.
    pub fn cmd(&self) -> Command {
        self.manager.cmd(&self.client)
    }

    /// A client command's output (stdout, trimmed), or a panic with its stderr.
    pub fn run(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().expect("docker client");
        assert!(
            out.status.success(),
            "docker {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The `terminal.docker` section (the manager as `host`).
    pub fn docker_section(&self) -> serde_json::Value {
        serde_json::json!({
            "image": IMAGE,
            "client": self.client,
            "host": self.manager.host,
            "memory": "256m",
            "cpus": 1.0,
            "pids_limit": 256,
        })
    }

    /// Names of the swarm's services whose name starts with `prefix`.
    pub fn services(&self, prefix: &str) -> Vec<String> {
        self.run(&["service", "ls", "--format", "{{.Name}}"])
            .lines()
            .filter(|n| n.starts_with(prefix))
            .map(String::from)
            .collect()
    }

    /// Names of the swarm's networks whose name starts with `prefix`.
    pub fn networks(&self, prefix: &str) -> Vec<String> {
        self.run(&["network", "ls", "--format", "{{.Name}}"])
            .lines()
            .filter(|n| n.starts_with(prefix))
            .map(String::from)
            .collect()
    }

    /// Containers (any state) of `node` named after a service starting with `prefix`.
    pub fn containers(&self, node: &Node, prefix: &str) -> Vec<String> {
        let out = node
            .cmd(&self.client)
            .args(["ps", "-a", "--format", "{{.Names}}"])
            .output()
            .expect("docker client");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|n| n.starts_with(prefix))
            .map(String::from)
            .collect()
    }

    /// Every node that is up.
    pub fn nodes(&self) -> Vec<&Node> {
        let mut v = vec![&self.manager];
        if let Ok(w) = &self.worker {
            v.push(w);
        }
        v
    }
}

fn sh(script: &str) -> Result<String, String> {
    let out = Command::new("sh")
        .args(["-c", script])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "`{script}`: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

use crate::container_common::wait_ready;

/// Start a node's dockerd in network namespace `netns`; returns the node
/// (without its swarm id yet).
fn start_node(client: &Path, tag: char) -> Result<Node, String> {
    let me = std::process::id();
    // Short: dockerd's sockets live under it (a unix socket path is at most 107 bytes).
    let dir = PathBuf::from(format!("/tmp/hsw{me}{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let d = dir.display();
    let netns = format!("hsw{me}{tag}");
    sh(&format!(
        "ip netns add {netns} && ip -n {netns} link set lo up"
    ))?;
    // The watchdog: when this test process is gone, remove the services,
    // kill the daemon's pid namespace (its containers go with it; a
    // graceful swarm node stop takes over 10 s), then the containers'
    // cgroups, the namespace and the folder.
    let watchdog = format!(
        "while kill -0 {me} 2>/dev/null; do sleep 1; done; \
         c='{client} -H unix://{d}/d.sock'; \
         $c service rm $($c service ls -q) >/dev/null 2>&1; \
         $c ps -aq --no-trunc >>{d}/ids 2>/dev/null; \
         kill -9 $(cat {d}/outer 2>/dev/null) 2>/dev/null; sleep 1; \
         for id in $(cat {d}/ids 2>/dev/null); do rmdir /sys/fs/cgroup/*/docker/$id /sys/fs/cgroup/docker/$id 2>/dev/null; done; \
         ip netns del {netns} 2>/dev/null; rm -rf {d}",
        client = client.display()
    );
    Command::new("setsid")
        .args(["sh", "-c", &watchdog])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let log = std::fs::File::create(dir.join("dockerd.log")).map_err(|e| e.to_string())?;
    let child = Command::new("nsenter")
        .arg(format!("--net=/run/netns/{netns}"))
        .args([
            "unshare",
            "--pid",
            "--fork",
            "--mount",
            "--mount-proc",
            "--kill-child",
            "/usr/sbin/dockerd",
        ])
        .arg(format!("--data-root={d}/data"))
        .arg(format!("--exec-root={d}/exec"))
        .arg(format!("--host=unix://{d}/d.sock"))
        .arg(format!("--pidfile={d}/d.pid"))
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("cannot start dockerd: {e}"))?;
    let outer = child.id();
    // The process is reaped by nobody in particular: dropping the handle
    // leaves it running, as the daemon must.
    drop(child);
    std::fs::write(dir.join("outer"), outer.to_string()).map_err(|e| e.to_string())?;
    let node = Node {
        host: format!("unix://{d}/d.sock"),
        dir: dir.clone(),
        netns,
        id: String::new(),
        outer,
    };
    wait_ready(
        || {
            node.cmd(client)
                .arg("version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        },
        "dockerd",
        &dir.join("dockerd.log"),
    )?;
    Ok(node)
}

fn import_image(client: &Path, node: &Node) -> Result<(), String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/test-image.sh");
    // With python3: execute_code's relay runs in the task's container.
    let out = Command::new(script)
        .env("HT_TEST_IMAGE_PYTHON", "1")
        .arg(IMAGE)
        .arg(client)
        .args(["-H", &node.host])
        .output()
        .map_err(|x| x.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "building the test image failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

fn node_id(client: &Path, node: &Node) -> Result<String, String> {
    let out = node
        .cmd(client)
        .args(["info", "--format", "{{.Swarm.NodeID}}"])
        .output()
        .map_err(|e| e.to_string())?;
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if id.is_empty() {
        return Err("the node has no swarm id".into());
    }
    Ok(id)
}

/// Link the worker's namespace to the manager's by a veth pair.
fn link(manager: &Node, worker: &Node) -> Result<(), String> {
    let veth = format!("hv{}", std::process::id());
    sh(&format!(
        "ip link add {veth}a netns {m} type veth peer name {veth}b netns {n} && \
         ip -n {m} addr add 172.31.231.2/24 dev {veth}a && ip -n {n} addr add 172.31.231.3/24 dev {veth}b && \
         ip -n {m} link set {veth}a up && ip -n {n} link set {veth}b up",
        m = manager.netns,
        n = worker.netns
    ))
    .map(drop)
    .map_err(|e| format!("no second node (a veth pair between two network namespaces): {e}"))
}

/// Join the worker to the manager's swarm and give it the image.
fn join(client: &Path, manager: &Node, mut w: Node) -> Result<Node, String> {
    let token = {
        let out = manager
            .cmd(client)
            .args(["swarm", "join-token", "-q", "worker"])
            .output()
            .map_err(|e| e.to_string())?;
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let out = w
        .cmd(client)
        .args([
            "swarm",
            "join",
            "--token",
            &token,
            "--advertise-addr",
            "172.31.231.3",
            "--listen-addr",
            "172.31.231.3:2377",
            "172.31.231.2:2377",
        ])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "swarm join: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    w.id = node_id(client, &w)?;
    import_image(client, &w)?;
    Ok(w)
}

fn start() -> Result<Swarm, String> {
    if !Path::new("/usr/sbin/dockerd").exists() {
        return Err("dockerd is not installed (apt-get install docker.io)".into());
    }
    if not_root() {
        return Err("the swarm tests need root (network namespaces, dockerd)".into());
    }
    let client = ["/usr/bin/docker", "/usr/local/bin/docker"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .ok_or("the docker client is not installed")?;
    // Both daemons start together.
    let (manager, worker) = std::thread::scope(|s| {
        let c = &client;
        let w = s.spawn(move || start_node(c, 'b'));
        let m = start_node(c, 'a');
        (m, w.join().unwrap_or_else(|_| Err("start panicked".into())))
    });
    let mut manager = manager?;
    let worker = worker.and_then(|w| link(&manager, &w).map(|()| w));
    // One node alone advertises its loopback.
    let addr = if worker.is_ok() {
        "172.31.231.2"
    } else {
        "127.0.0.1"
    };
    let out = manager
        .cmd(&client)
        .args([
            "swarm",
            "init",
            "--advertise-addr",
            addr,
            "--listen-addr",
            &format!("{addr}:2377"),
        ])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "swarm init: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    manager.id = node_id(&client, &manager)?;
    // The image on the manager while the worker joins and gets it.
    let (img, worker) = std::thread::scope(|s| {
        let (m, c) = (&manager, &client);
        let w = s.spawn(move || worker.and_then(|w| join(c, m, w)));
        let img = import_image(c, m);
        (
            img,
            w.join().unwrap_or_else(|_| Err("join panicked".into())),
        )
    });
    img?;
    Ok(Swarm {
        client,
        manager,
        worker,
    })
}

fn not_root() -> bool {
    // /proc/self/status's Uid line: real, effective, saved, fs.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u != "0"))
        })
        .unwrap_or(true)
}

/// The swarm of this test binary, or why there is none.
pub fn swarm() -> Result<&'static Swarm, String> {
    static S: OnceLock<Result<Swarm, String>> = OnceLock::new();
    S.get_or_init(start).as_ref().map_err(Clone::clone)
}

/// Held by each swarm test: they count the swarm's services, and one
/// kills a node, so they take turns.
pub fn turn() -> MutexGuard<'static, ()> {
    static T: Mutex<()> = Mutex::new(());
    T.lock().unwrap_or_else(|e| e.into_inner())
}
