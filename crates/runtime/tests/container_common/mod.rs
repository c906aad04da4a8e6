//! A real docker daemon (networking off) and a real podman, each with its
//! own storage in a temporary folder, and a small image built from this
//! machine's files (tests/fixtures/test-image.sh): for the container
//! backend's tests and bench. Each is started once per test binary; a
//! watchdog shell stops the daemon and removes the folder when the test
//! process is gone.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub const IMAGE: &str = "hermes-tools-test:1";

pub struct Engine {
    pub name: &'static str,
    /// The client to give the backend (podman: a wrapper naming our storage).
    pub client: PathBuf,
    /// `-H` address (docker).
    pub host: Option<String>,
    pub dir: PathBuf,
    /// Extra `run` arguments this machine needs.
    pub run_args: Vec<String>,
}

impl Engine {
    /// The client command with its address.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(&self.client);
        if let Some(h) = &self.host {
            c.args(["-H", h]);
        }
        c
    }

    /// The `terminal.docker` section.
    pub fn section(&self) -> Value {
        let mut s = json!({
            "engine": self.name,
            "image": IMAGE,
            "client": self.client,
            "run_args": self.run_args,
            "memory": "512m",
            "cpus": 1.0,
            "pids_limit": 256,
        });
        if let Some(h) = &self.host {
            s["host"] = json!(h);
        }
        s
    }

    /// Ids of running containers with our label.
    pub fn ours(&self) -> Vec<String> {
        let out = self
            .cmd()
            .args(["ps", "-q", "--filter", "label=hermes-tools.owner"])
            .output()
            .expect("ps");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(String::from)
            .collect()
    }
}

fn watchdog(dir: &Path, start: &str, on_exit: &str) -> Result<(), String> {
    // The daemon runs under a shell that waits for this test process: when
    // it ends, the shell stops the daemon and removes the folder.
    let script = format!(
        "{start} & d=$!; while kill -0 {me} 2>/dev/null; do sleep 1; done; {on_exit}; kill $d 2>/dev/null; \
         for i in 1 2 3 4 5 6 7 8 9 10; do kill -0 $d 2>/dev/null || break; sleep 1; done; kill -9 $d 2>/dev/null; \
         umount -R {d}/data {d}/exec {d}/root {d}/run 2>/dev/null; rm -rf {d}",
        me = std::process::id(),
        d = dir.display()
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Poll `probe` until it holds (40 s at most); else the daemon's last log lines.
pub fn wait_ready(mut probe: impl FnMut() -> bool, what: &str, log: &Path) -> Result<(), String> {
    let until = Instant::now() + Duration::from_secs(40);
    while Instant::now() < until {
        if probe() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let log = std::fs::read_to_string(log).unwrap_or_default();
    Err(format!(
        "{what} did not become ready: {}",
        log.lines().rev().take(3).collect::<Vec<_>>().join(" | ")
    ))
}

fn build_image(e: &Engine) -> Result<(), String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/test-image.sh");
    let mut c = Command::new(script);
    c.arg(IMAGE).arg(&e.client);
    if let Some(h) = &e.host {
        c.args(["-H", h]);
    }
    let out = c.output().map_err(|x| x.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "building the test image failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

fn tempdir(prefix: &str) -> Result<PathBuf, String> {
    // Short: dockerd's sockets live under it (a unix socket path is at most 107 bytes).
    let d = PathBuf::from(format!("/tmp/{prefix}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).map_err(|e| e.to_string())?;
    Ok(d)
}

fn start_docker() -> Result<Engine, String> {
    let dockerd = Path::new("/usr/sbin/dockerd");
    if !dockerd.exists() {
        return Err("dockerd is not installed (apt-get install docker.io)".into());
    }
    let client = ["/usr/bin/docker", "/usr/local/bin/docker"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .ok_or("the docker client is not installed")?;
    let dir = tempdir("htd")?;
    let d = dir.display();
    let sock = format!("unix://{d}/docker.sock");
    watchdog(
        &dir,
        &format!(
            "{} --data-root {d}/data --exec-root {d}/exec -H {sock} --pidfile {d}/dockerd.pid \
             --bridge=none --iptables=false --ip-masq=false >{d}/dockerd.log 2>&1",
            dockerd.display()
        ),
        &format!(
            "{} -H {sock} rm -f $({} -H {sock} ps -aq) >/dev/null 2>&1",
            client.display(),
            client.display()
        ),
    )?;
    let e = Engine {
        name: "docker",
        client,
        host: Some(sock),
        dir: dir.clone(),
        run_args: vec![],
    };
    wait_ready(
        || {
            e.cmd()
                .arg("version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        },
        "dockerd",
        &dir.join("dockerd.log"),
    )?;
    build_image(&e)?;
    Ok(e)
}

fn start_podman() -> Result<Engine, String> {
    let podman = ["/usr/bin/podman"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .ok_or("podman is not installed (apt-get install podman)")?;
    let dir = tempdir("htp")?;
    let d = dir.display();
    // A wrapper naming storage of our own: the tests touch nothing of the machine's.
    let wrapper = dir.join("podman");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec {} --root {d}/root --runroot {d}/run --storage-driver vfs \
             --cgroup-manager cgroupfs --events-backend file --tmpdir {d}/tmp \"$@\"\n",
            podman.display()
        ),
    )
    .map_err(|e| e.to_string())?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| e.to_string())?;
    }
    // podman has no daemon; the watchdog removes its containers and storage.
    watchdog(
        &dir,
        "sleep 2147483647",
        &format!("{} rm -af -t 0 >/dev/null 2>&1", wrapper.display()),
    )?;
    let e = Engine {
        name: "podman",
        client: wrapper,
        host: None,
        dir,
        // The default nofile/nproc limits of these machines are refused by crun.
        run_args: vec![
            "--ulimit=nofile=1024:1024".into(),
            "--ulimit=nproc=1024:1024".into(),
        ],
    };
    let out = e.cmd().arg("info").output().map_err(|x| x.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "podman cannot run here: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    build_image(&e)?;
    Ok(e)
}

/// The docker daemon of this test binary, or why there is none.
pub fn docker() -> Result<&'static Engine, String> {
    static D: OnceLock<Result<Engine, String>> = OnceLock::new();
    D.get_or_init(start_docker).as_ref().map_err(Clone::clone)
}

/// Podman with storage of this test binary, or why there is none.
pub fn podman() -> Result<&'static Engine, String> {
    static P: OnceLock<Result<Engine, String>> = OnceLock::new();
    P.get_or_init(start_podman).as_ref().map_err(Clone::clone)
}
