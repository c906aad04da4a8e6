//! The apptainer backend's lifecycle against a stand-in for the apptainer
//! CLI (tests/fixtures/apptainer-standin.sh: instances as folders, `exec`
//! run on this machine with a cleared environment), because apptainer is
//! not packaged for this machine's Debian. What this checks: the image is
//! built once, one instance per task with its overlay, commands marked and
//! killed inside by their mark on a timeout, files through the instance, an
//! instance stopped from outside told apart from a command's failure (and
//! replaced), cleanup stopping every instance. Not checked here:
//! apptainer's own isolation (the runtime test in src/apptainer.rs runs
//! against the real client where it is installed).

mod common;

use hermes_exec::Environment;
use hermes_exec::apptainer::{ApptainerBackend, ApptainerConfig};
use hermes_exec::pump::Ended;
use hermes_exec::remote_fs::RemoteShell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn standin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apptainer-standin.sh")
}

struct Fixture {
    root: PathBuf,
    state: PathBuf,
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        let root = std::env::temp_dir().join(format!("ht-app-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let state = root.join("state");
        std::fs::create_dir_all(&state).unwrap();
        // SAFETY of the test: the stand-in reads its folder from this
        // variable; tests in this file each use their own folder.
        unsafe { std::env::set_var("APPTAINER_STANDIN_STATE", &state) };
        Fixture { root, state }
    }
    fn backend(&self) -> ApptainerBackend {
        ApptainerBackend::new(ApptainerConfig {
            binary: Some(standin()),
            image: "docker://debian:12-slim".into(),
            cache_dir: self.root.join("cache"),
            overlay_root: Some(self.root.join("overlays")),
            ..Default::default()
        })
        .unwrap()
    }
    fn calls(&self) -> Vec<Vec<String>> {
        std::fs::read_to_string(self.state.join("calls"))
            .unwrap_or_default()
            .split('\u{1e}')
            .filter(|l| !l.is_empty())
            .map(|l| {
                l.split('\0')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            })
            .collect()
    }
    fn instances(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.state)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn run(b: &ApptainerBackend, task: &str, script: &str, timeout: Duration) -> (i32, Ended, String) {
    common::run_remote(b, task, script, Path::new("/"), timeout)
}

#[test]
fn lifecycle_against_the_standin_client() {
    let f = Fixture::new("life");
    let b = f.backend();

    // first use: the image is built once, one instance for the task
    let out = b.0.run_script("t1", "echo hi; echo err >&2", b"").unwrap();
    assert_eq!(
        (out.stdout.as_slice(), out.stderr.as_slice()),
        (&b"hi\n"[..], &b"err\n"[..])
    );
    let (code, _, text) = run(
        &b,
        "t1",
        "echo $HERMES_TOOLS_TREE; exit 4",
        Duration::from_secs(20),
    );
    assert_eq!(code, 4);
    assert!(
        text.starts_with("ht-"),
        "the command carries its mark: {text}"
    );
    let calls = f.calls();
    let starts: Vec<&Vec<String>> = calls
        .iter()
        .filter(|c| c.len() > 1 && c[0] == "instance" && c[1] == "start")
        .collect();
    assert_eq!(starts.len(), 1, "{calls:?}");
    let s = starts[0];
    for flag in ["--containall", "--no-home", "--overlay"] {
        assert!(s.iter().any(|a| a == flag), "{s:?}");
    }
    assert!(
        calls
            .iter()
            .filter(|c| c.first().map(String::as_str) == Some("build"))
            .count()
            == 1,
        "{calls:?}"
    );
    assert_eq!(f.instances().len(), 1);

    // a second task gets its own instance
    b.0.run_script("t2", "true", b"").unwrap();
    assert_eq!(f.instances().len(), 2);

    // files through the instance
    let fs = b.files("t1").unwrap();
    let p = f.root.join("file.txt");
    fs.write_atomic(&p, b"data", None).unwrap();
    assert_eq!(fs.read(&p).unwrap(), b"data");

    // a timeout kills the command inside by its mark
    let t0 = Instant::now();
    let (_, ended, text) = run(
        &b,
        "t1",
        "echo start; sleep 30; echo never",
        Duration::from_millis(500),
    );
    assert_eq!(ended, Ended::TimedOut);
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert_eq!(text, "start\n");
    assert!(
        f.calls()
            .iter()
            .any(|c| c.first().map(String::as_str) == Some("exec")
                && c.last().is_some_and(|s| s.contains("/proc/[0-9]*/environ"))),
        "the kill ran inside the instance"
    );

    // an instance stopped from outside: said so, and replaced
    let before = f.instances();
    for n in &before {
        std::fs::remove_dir_all(f.state.join(n)).unwrap();
    }
    let (code, _, text) = run(&b, "t1", "echo x", Duration::from_secs(20));
    assert_eq!(code, 255);
    assert!(text.contains("stopped during the command"), "{text}");
    let (code, _, text) = run(&b, "t1", "echo back", Duration::from_secs(20));
    assert_eq!((code, text.as_str()), (0, "back\n"));

    // cleanup of a task stops its instance and drops its overlay
    let overlays = f.root.join("overlays");
    let n_overlays = std::fs::read_dir(&overlays).unwrap().count();
    b.cleanup_task("t1");
    assert!(f.instances().is_empty(), "{:?}", f.instances());
    assert_eq!(
        std::fs::read_dir(&overlays).unwrap().count(),
        n_overlays - 1
    );
    b.0.run_script("t3", "true", b"").unwrap();
    b.cleanup();
    assert!(f.instances().is_empty(), "{:?}", f.instances());
    assert!(b.0.run_script("t4", "true", b"").is_err(), "closed");
}
