//! A real sshd on 127.0.0.1 for the ssh backend's tests and bench: a free
//! port, throwaway host and client keys, known_hosts filled from the host
//! key, everything in a temporary folder, stopped on drop.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Sshd {
    pub dir: tempfile::TempDir,
    pub port: u16,
    pid: Option<i32>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn keygen(path: &Path) -> bool {
    Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

impl Sshd {
    /// Start one, or say why not (the caller skips with that reason).
    pub fn start() -> Result<Sshd, String> {
        let sshd = Path::new("/usr/sbin/sshd");
        if !sshd.exists() {
            return Err("/usr/sbin/sshd is not installed (apt-get install openssh-server)".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let d = dir.path();
        let _ = std::fs::create_dir_all("/run/sshd");
        if !keygen(&d.join("hostkey")) || !keygen(&d.join("clientkey")) {
            return Err("ssh-keygen failed".into());
        }
        std::fs::copy(d.join("clientkey.pub"), d.join("authorized_keys"))
            .map_err(|e| e.to_string())?;
        let hostpub = std::fs::read_to_string(d.join("hostkey.pub")).map_err(|e| e.to_string())?;
        let mut last = String::new();
        for _ in 0..5 {
            let port = free_port();
            std::fs::write(
                d.join("known_hosts"),
                format!("[127.0.0.1]:{port} {}", hostpub.trim()),
            )
            .map_err(|e| e.to_string())?;
            std::fs::write(
                d.join("sshd_config"),
                format!(
                    "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/hostkey\nPidFile {d}/sshd.pid\n\
                     AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n\
                     PasswordAuthentication no\nKbdInteractiveAuthentication no\nStrictModes no\nUsePAM no\n\
                     MaxSessions 100\nMaxStartups 100\nAllowAgentForwarding no\n",
                    d = d.display()
                ),
            )
            .map_err(|e| e.to_string())?;
            let st = Command::new(sshd)
                .arg("-f")
                .arg(d.join("sshd_config"))
                .arg("-E")
                .arg(d.join("sshd.log"))
                .status()
                .map_err(|e| e.to_string())?;
            if !st.success() {
                last = std::fs::read_to_string(d.join("sshd.log")).unwrap_or_default();
                continue;
            }
            let until = Instant::now() + Duration::from_secs(5);
            while Instant::now() < until {
                if let Ok(p) = std::fs::read_to_string(d.join("sshd.pid"))
                    && std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
                {
                    return Ok(Sshd {
                        pid: p.trim().parse().ok(),
                        dir,
                        port,
                    });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            last = std::fs::read_to_string(d.join("sshd.log")).unwrap_or_default();
        }
        Err(format!("sshd did not start: {}", last.trim()))
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The `terminal.ssh` section for this server.
    pub fn section(&self) -> Value {
        json!({
            "host": "127.0.0.1",
            "port": self.port,
            "user": "root",
            "identity_file": self.path("clientkey"),
            "known_hosts": self.path("known_hosts"),
        })
    }

    /// A bare ssh argv (no master) for comparisons.
    pub fn ssh_args(&self) -> Vec<String> {
        vec![
            "-o".into(),
            "BatchMode=yes".into(),
            "-o".into(),
            format!("UserKnownHostsFile={}", self.path("known_hosts").display()),
            "-o".into(),
            "IdentitiesOnly=yes".into(),
            "-i".into(),
            self.path("clientkey").display().to_string(),
            "-p".into(),
            self.port.to_string(),
            "-l".into(),
            "root".into(),
        ]
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        if let Some(p) = self.pid {
            let _ = Command::new("kill").arg(p.to_string()).status();
        }
    }
}

/// Start sshd or print why the test is skipped.
#[macro_export]
macro_rules! sshd_or_skip {
    () => {
        match ssh_common::Sshd::start() {
            Ok(s) => s,
            Err(why) => {
                eprintln!("SKIPPED: {why}");
                return;
            }
        }
    };
}
