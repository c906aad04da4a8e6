//! The sandbox's network allow-list (issue 32), with real servers on this
//! machine's loopback and a real bubblewrap sandbox: the sandbox keeps its
//! own network namespace and reaches the servers only through the runtime's
//! proxy, which maps test names to 127.0.0.1 through its `hosts` table.
//! Tests skip (pass with a note) where bubblewrap cannot run.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hermes_exec::netproxy::{NetEvents, NetProxy, Refusal, Rules, Secret};
use hermes_exec::pump::{PumpOpts, pump};
use hermes_exec::sandbox::{Sandbox, SandboxConfig};
use hermes_exec::{Environment, SpawnRequest};

fn bwrap_works() -> bool {
    hermes_exec::sandbox::find_bwrap().is_some_and(|b| {
        std::process::Command::new(b)
            .args([
                "--ro-bind",
                "/",
                "/",
                "--unshare-user",
                "--unshare-net",
                "--",
                "/bin/true",
            ])
            .status()
            .is_ok_and(|s| s.success())
    })
}

macro_rules! need_bwrap {
    () => {
        if !bwrap_works() {
            eprintln!("skipped: bubblewrap cannot run here");
            return;
        }
    };
}

struct Workspace(PathBuf);

impl Workspace {
    fn new(tag: &str) -> Workspace {
        let p = std::env::temp_dir().join(format!(
            "hermes-net-{tag}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        ));
        std::fs::create_dir_all(&p).unwrap();
        Workspace(std::fs::canonicalize(&p).unwrap())
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A test HTTP server on 127.0.0.1: answers every request with
/// `hello from NAME`, then the request head it received; counts requests.
struct Server {
    port: u16,
    hits: Arc<AtomicUsize>,
}

fn server(name: &'static str) -> Server {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            let h = h.clone();
            std::thread::spawn(move || {
                let mut r = BufReader::new(c.try_clone().unwrap());
                let mut head = String::new();
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push_str(&line);
                }
                h.fetch_add(1, Ordering::SeqCst);
                let body = format!("hello from {name}\n{head}");
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    Server { port, hits }
}

#[derive(Default)]
struct Events(Mutex<Vec<Refusal>>);

impl NetEvents for Events {
    fn refused(&self, r: &Refusal) {
        self.0.lock().unwrap().push(r.clone());
    }
}

fn rules(allow: &[&str], deny: &[&str], names: &[&str]) -> Rules {
    let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let hosts: BTreeMap<String, Vec<String>> = names
        .iter()
        .map(|n| (n.to_string(), vec!["127.0.0.1".to_string()]))
        .collect();
    Rules::new(&v(allow), &v(deny), false, &hosts).unwrap()
}

fn sandbox(ws: &Workspace, proxy: Arc<NetProxy>) -> Sandbox {
    Sandbox::new(&SandboxConfig {
        root: ws.0.clone(),
        proxy: Some(proxy),
        ..SandboxConfig::default()
    })
    .expect("sandbox")
}

/// Run `script` in the sandbox: exit code and output.
fn run(sb: &Sandbox, script: &str) -> (i32, String) {
    run_as(sb, script, false)
}

/// [`run`], as a background command (`linger`: the shim supervises it and
/// waits for everything it leaves behind) when `linger`.
fn run_as(sb: &Sandbox, script: &str, linger: bool) -> (i32, String) {
    let env: Vec<(String, String)> = vec![
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("HOME".into(), "/nonexistent-home".into()),
        ("LANG".into(), "C".into()),
    ];
    let req = SpawnRequest {
        script,
        cwd: sb.root(),
        env: &env,
        pty: false,
        extra_rw: &[],
        task: "",
        linger,
    };
    let sp = sb.spawn(&req).expect("spawn");
    let opts = PumpOpts {
        timeout: Some(Duration::from_secs(120)),
        ..PumpOpts::default()
    };
    let mut out = Vec::new();
    let (code, _) = pump(sp.pid, &sp.output, sb, &opts, &mut |d| {
        out.extend_from_slice(d)
    });
    (code, String::from_utf8_lossy(&out).into_owned())
}

#[test]
fn an_allowed_name_is_reached_through_the_proxy() {
    need_bwrap!();
    let ws = Workspace::new("allowed");
    let s = server("allowed");
    let proxy = NetProxy::start(
        rules(&["allowed.test"], &[], &["allowed.test"]),
        vec![],
        None,
    )
    .unwrap();
    let sb = sandbox(&ws, proxy);
    let p = s.port;
    // Plain HTTP (HTTP_PROXY), a CONNECT tunnel (as HTTPS goes), SOCKS5.
    let (code, out) = run(
        &sb,
        &format!(
            "curl -sS http://allowed.test:{p}/plain && curl -sS -p http://allowed.test:{p}/tunnel && curl -sS --proxy \"$ALL_PROXY\" http://allowed.test:{p}/socks && echo \"proxy=$HTTPS_PROXY\""
        ),
    );
    assert_eq!(code, 0, "{out}");
    for path in [
        "GET /plain HTTP/1.1",
        "GET /tunnel HTTP/1.1",
        "GET /socks HTTP/1.1",
    ] {
        assert!(out.contains(path), "{path} missing: {out}");
    }
    assert_eq!(out.matches("hello from allowed").count(), 3, "{out}");
    assert!(out.contains("proxy=http://127.0.0.1:3128"), "{out}");
    assert_eq!(s.hits.load(Ordering::SeqCst), 3);
    // A background command (supervised by the shim) too, and it ends when
    // its tree does (the keeper is no part of it).
    let started = std::time::Instant::now();
    let (code, out) = run_as(
        &sb,
        &format!("(sleep 0.2; curl -sS http://allowed.test:{p}/bg) & wait"),
        true,
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("GET /bg HTTP/1.1"), "{out}");
    assert!(started.elapsed() < Duration::from_secs(20));
    // Each command hands the proxy a listener in its own namespace; the
    // proxy lets it go when the command's sandbox ends (no descriptor, and
    // so no network namespace, is kept per command).
    let fds = || std::fs::read_dir("/proc/self/fd").unwrap().count();
    let before = fds();
    for _ in 0..10 {
        assert_eq!(run(&sb, "true").0, 0);
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while fds() > before + 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        fds() <= before + 2,
        "{} descriptors left over",
        fds() - before
    );
}

#[test]
fn a_denied_or_unlisted_name_is_refused_naming_host_and_rule() {
    need_bwrap!();
    let ws = Workspace::new("denied");
    let s = server("denied");
    let ev = Arc::new(Events::default());
    let proxy = NetProxy::start(
        rules(
            &["*.test"],
            &["denied.test"],
            &["denied.test", "other.example"],
        ),
        vec![],
        Some(ev.clone()),
    )
    .unwrap();
    let sb = sandbox(&ws, proxy);
    let p = s.port;
    let (_, out) = run(
        &sb,
        &format!(
            "curl -sS http://denied.test:{p}/; echo; curl -sS -p http://other.example:{p}/ 2>&1; echo; curl -sS -o /dev/null -w '%{{http_code}}\\n' -p http://other.example:{p}/; curl -sS --proxy \"$ALL_PROXY\" http://denied.test:{p}/ 2>&1"
        ),
    );
    assert!(
        out.contains("connection to denied.test:")
            && out.contains("(deny:denied.test): denied.test matches the deny rule 'denied.test'"),
        "{out}"
    );
    // A client that shows only the status line still learns why.
    assert!(out.contains("403"), "{out}");
    assert!(out.contains("SOCKS") || out.contains("socks"), "{out}");
    assert_eq!(
        s.hits.load(Ordering::SeqCst),
        0,
        "the server was reached: {out}"
    );
    let ev = ev.0.lock().unwrap();
    let rules: Vec<&str> = ev.iter().map(|r| r.rule.as_str()).collect();
    assert_eq!(
        rules,
        [
            "deny:denied.test",
            "not-allowed",
            "not-allowed",
            "deny:denied.test"
        ],
        "{ev:?}"
    );
    assert_eq!(ev[1].host, "other.example");
}

#[test]
fn a_direct_connection_has_no_route_and_udp_and_raw_sockets_go_nowhere() {
    need_bwrap!();
    let ws = Workspace::new("direct");
    let s = server("direct");
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(1500)))
        .unwrap();
    let uport = udp.local_addr().unwrap().port();
    let proxy = NetProxy::start(
        rules(&["allowed.test"], &[], &["allowed.test"]),
        vec![],
        None,
    )
    .unwrap();
    let sb = sandbox(&ws, proxy);
    let p = s.port;
    let script = format!(
        r#"curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:{p}/ 2>&1; echo "curl-direct=$?"
/usr/bin/python3 - <<'EOF'
import socket, errno
def tcp(addr):
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect(addr); return "connected"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e))
print("tcp-public", tcp(("93.184.216.34", 80)))
print("tcp-metadata", tcp(("169.254.169.254", 80)))
print("tcp-host-loopback", tcp(("127.0.0.1", {p})))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for a in [("127.0.0.1", {uport}), ("8.8.8.8", 53)]:
    try:
        u.sendto(b"leak", a); print("udp", a[0], "sent")
    except OSError as e:
        print("udp", a[0], errno.errorcode.get(e.errno, str(e)))
try:
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); print("raw opened")
except OSError as e:
    print("raw", errno.errorcode.get(e.errno, str(e)))
try:
    socket.socket(socket.AF_PACKET, socket.SOCK_RAW); print("packet opened")
except OSError as e:
    print("packet", errno.errorcode.get(e.errno, str(e)))
EOF"#
    );
    let (code, out) = run(&sb, &script);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("curl-direct=0"), "{out}");
    assert!(out.contains("tcp-public ENETUNREACH"), "{out}");
    assert!(out.contains("tcp-metadata ENETUNREACH"), "{out}");
    // The sandbox's loopback is its own: the host's server is not there.
    assert!(out.contains("tcp-host-loopback ECONNREFUSED"), "{out}");
    assert!(out.contains("udp 8.8.8.8 ENETUNREACH"), "{out}");
    assert!(
        out.contains("raw EPERM") && out.contains("packet EPERM"),
        "{out}"
    );
    let mut b = [0u8; 16];
    assert!(
        udp.recv_from(&mut b).is_err(),
        "a UDP datagram left the sandbox"
    );
    assert_eq!(s.hits.load(Ordering::SeqCst), 0);
}

#[test]
fn the_metadata_address_and_private_answers_are_refused() {
    need_bwrap!();
    let ws = Workspace::new("metadata");
    let ev = Arc::new(Events::default());
    // `localhost` is allowed by name but resolves (system resolver) to
    // loopback: refused all the same; an address literal needs a range.
    let proxy = NetProxy::start(
        rules(&["localhost", "*.amazonaws.com"], &[], &[]),
        vec![],
        Some(ev.clone()),
    )
    .unwrap();
    let sb = sandbox(&ws, proxy);
    let (_, out) = run(
        &sb,
        "curl -sS http://169.254.169.254/latest/meta-data/; echo; curl -sS -p http://169.254.169.254:80/; echo; NO_PROXY= no_proxy= curl -sS http://localhost:9/; echo; curl -sS 'http://[fd00:ec2::254]/latest/'",
    );
    assert!(
        out.contains("connection to 169.254.169.254:80 refused (not-allowed)"),
        "{out}"
    );
    assert!(
        out.contains("connection to localhost:9 refused (private-address)")
            && out.contains("a loopback address"),
        "{out}"
    );
    let ev = ev.0.lock().unwrap();
    let rules: Vec<&str> = ev.iter().map(|r| r.rule.as_str()).collect();
    assert_eq!(
        rules,
        [
            "not-allowed",
            "not-allowed",
            "private-address",
            "not-allowed"
        ],
        "{ev:?}"
    );
}

#[test]
fn a_secret_is_put_in_place_for_its_host_only() {
    need_bwrap!();
    let ws = Workspace::new("secret");
    let api = server("api");
    let other = server("other");
    let ev = Arc::new(Events::default());
    let real = "sk-real-value-9f8e7d";
    let secret = Secret::new(
        "API_TOKEN",
        real.into(),
        &["api.test".to_string()],
        vec!["HERMES_TEST_REAL_TOKEN".into()],
    )
    .unwrap();
    let placeholder = secret.placeholder.clone();
    let proxy = NetProxy::start(
        rules(
            &["api.test", "other.test"],
            &[],
            &["api.test", "other.test"],
        ),
        vec![secret],
        Some(ev.clone()),
    )
    .unwrap();
    let sb = sandbox(&ws, proxy);
    let (a, o) = (api.port, other.port);
    let (_, out) = run(
        &sb,
        &format!(
            r#"echo "seen=$API_TOKEN"; env | grep -c sk-real || true
curl -sS -H "Authorization: Bearer $API_TOKEN" http://api.test:{a}/v1; echo
curl -sS -H "X-Key: $API_TOKEN" http://other.test:{o}/steal; echo
curl -sS -p -H "X-Key: $API_TOKEN" http://other.test:{o}/tunnel"#
        ),
    );
    assert!(out.contains(&format!("seen={placeholder}")), "{out}");
    assert!(
        out.starts_with(&format!("seen={placeholder}\n0\n")),
        "{out}"
    );
    // The allowed host got the value.
    assert!(
        out.contains(&format!("Authorization: Bearer {real}")),
        "{out}"
    );
    // Another host: refused, naming the secret; the server saw nothing.
    assert!(out.contains("refused (secret-host:API_TOKEN)"), "{out}");
    // Inside a tunnel the proxy sees nothing: the placeholder goes as it is.
    assert!(out.contains(&format!("X-Key: {placeholder}")), "{out}");
    assert_eq!(out.matches(real).count(), 1, "{out}");
    assert_eq!(api.hits.load(Ordering::SeqCst), 1);
    assert_eq!(
        other.hits.load(Ordering::SeqCst),
        1,
        "only the tunnel reached it"
    );
    let ev = ev.0.lock().unwrap();
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0].rule, "secret-host:API_TOKEN");
    assert!(!format!("{ev:?}").contains(real));
}

/// A wheel of package `hermes-probe` 1.0 (built by hand: a zip with the
/// module and its dist-info), and a PEP 503 simple index for it.
fn write_index(root: &Path) {
    let script = r#"
import base64, hashlib, os, sys, zipfile
root = sys.argv[1]
pkg = os.path.join(root, "simple", "hermes-probe")
os.makedirs(pkg)
name = "hermes_probe-1.0-py3-none-any.whl"
files = {
    "hermes_probe.py": b"VALUE = 42\n",
    "hermes_probe-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: hermes-probe\nVersion: 1.0\n",
    "hermes_probe-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
def h(b):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
record = "".join(f"{k},{h(v)},{len(v)}\n" for k, v in files.items()) + "hermes_probe-1.0.dist-info/RECORD,,\n"
path = os.path.join(pkg, name)
with zipfile.ZipFile(path, "w") as z:
    for k, v in files.items():
        z.writestr(k, v)
    z.writestr("hermes_probe-1.0.dist-info/RECORD", record)
digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
open(os.path.join(pkg, "index.html"), "w").write(
    f'<html><body><a href="{name}#sha256={digest}">{name}</a></body></html>\n')
open(os.path.join(root, "simple", "index.html"), "w").write(
    '<html><body><a href="hermes-probe/">hermes-probe</a></body></html>\n')
"#;
    let st = std::process::Command::new("/usr/bin/python3")
        .args(["-c", script])
        .arg(root)
        .status()
        .unwrap();
    assert!(st.success());
}

/// A port free now on 127.0.0.1.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Child(std::process::Child);
impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn pip_downloads_from_an_allowed_index() {
    need_bwrap!();
    let have_pip = std::process::Command::new("/usr/bin/python3")
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_pip {
        eprintln!("skipped: no pip for /usr/bin/python3");
        return;
    }
    let ws = Workspace::new("pip");
    let index = ws.0.join("index");
    std::fs::create_dir_all(&index).unwrap();
    write_index(&index);
    let port = free_port();
    let mut child = Child(
        std::process::Command::new("/usr/bin/python3")
            .args(["-m", "http.server", "--bind", "127.0.0.1", "--directory"])
            .arg(&index)
            .arg(port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    // Wait for the index to answer.
    let mut up = false;
    for _ in 0..100 {
        if let Ok(mut c) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            let _ = c.write_all(b"GET /simple/ HTTP/1.0\r\n\r\n");
            let mut s = String::new();
            let _ = c.read_to_string(&mut s);
            if s.contains("hermes-probe") {
                up = true;
                break;
            }
        }
        if let Ok(Some(_)) = child.0.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(up, "the test index did not start");
    let proxy = NetProxy::start(rules(&["pypi.test"], &[], &["pypi.test"]), vec![], None).unwrap();
    let sb = sandbox(&ws, proxy);
    let (code, out) = run(
        &sb,
        &format!(
            "PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 /usr/bin/python3 -m pip download --no-deps --index-url http://pypi.test:{port}/simple/ --trusted-host pypi.test hermes-probe -d dl 2>&1 && ls dl && \
             /usr/bin/python3 -m pip download --no-deps --index-url http://elsewhere.test:{port}/simple/ --trusted-host elsewhere.test hermes-probe -d dl2 --retries 0 --timeout 5 -vvv 2>&1 | grep -i -e 403 -e forbid; echo pip2=${{PIPESTATUS[0]}}"
        ),
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("hermes_probe-1.0-py3-none-any.whl"), "{out}");
    assert!(ws.0.join("dl/hermes_probe-1.0-py3-none-any.whl").is_file());
    assert!(out.contains("pip2=1"), "{out}");
    assert!(
        out.contains(
            "403 Client Error: Forbidden by sandbox network policy: elsewhere.test (not-allowed)"
        ),
        "{out}"
    );
}

/// A server for the bench: `/big` is 100 MiB, anything else 2 bytes.
fn bench_server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let chunk = vec![b'x'; 1 << 20];
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            let chunk = chunk.clone();
            std::thread::spawn(move || {
                let _ = c.set_nodelay(true);
                let mut r = BufReader::new(c.try_clone().unwrap());
                let mut first = String::new();
                let _ = r.read_line(&mut first);
                let mut line = String::new();
                while r.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                    line.clear();
                }
                if first.contains("/big") {
                    let _ = write!(
                        c,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        100 << 20
                    );
                    for _ in 0..100 {
                        if c.write_all(&chunk).is_err() {
                            return;
                        }
                    }
                } else {
                    let _ = c.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                    );
                }
            });
        }
    });
    port
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// 100 MiB and 50 small requests (a new connection each), from a sandbox
/// with the host's network against one behind the proxy. Figures for the
/// README: `cargo test --release -p hermes-exec --test netproxy -- --ignored
/// --nocapture bench_proxy_against_direct`.
#[test]
#[ignore]
fn bench_proxy_against_direct() {
    need_bwrap!();
    let ws = Workspace::new("bench");
    let port = bench_server();
    let direct = Sandbox::new(&SandboxConfig {
        root: ws.0.clone(),
        network: true,
        ..SandboxConfig::default()
    })
    .unwrap();
    let proxy =
        NetProxy::start(rules(&["bench.test"], &[], &["bench.test"]), vec![], None).unwrap();
    let proxied = sandbox(&ws, proxy);
    let script = |host: &str| {
        format!(
            "for i in 1 2 3 4 5; do curl -s -o /dev/null -w 'big %{{time_total}}\\n' http://{host}:{port}/big; done; \
             for i in $(seq 50); do curl -s -o /dev/null -w 'small %{{time_total}}\\n' http://{host}:{port}/small; done"
        )
    };
    let measure = |sb: &Sandbox, host: &str| {
        let (code, out) = run(sb, &script(host));
        assert_eq!(code, 0, "{out}");
        let pick = |k: &str| {
            out.lines()
                .filter_map(|l| l.strip_prefix(k))
                .map(|t| t.trim().parse::<f64>().unwrap())
                .collect::<Vec<_>>()
        };
        (median(pick("big ")), median(pick("small ")))
    };
    // Alternated, medians of three rounds: the machine is shared.
    let (mut db, mut ds, mut pb, mut ps) = (vec![], vec![], vec![], vec![]);
    for _ in 0..3 {
        let (b, s) = measure(&direct, "127.0.0.1");
        db.push(b);
        ds.push(s);
        let (b, s) = measure(&proxied, "bench.test");
        pb.push(b);
        ps.push(s);
    }
    let (d_big, d_small, p_big, p_small) = (median(db), median(ds), median(pb), median(ps));
    let mib = 100.0;
    println!(
        "100 MiB: direct {:.3} s ({:.0} MiB/s), proxy {:.3} s ({:.0} MiB/s): {:.2}x the time",
        d_big,
        mib / d_big,
        p_big,
        mib / p_big,
        p_big / d_big
    );
    println!(
        "one small request on a new connection: direct {:.3} ms, proxy {:.3} ms: +{:.3} ms",
        d_small * 1e3,
        p_small * 1e3,
        (p_small - d_small) * 1e3
    );
}

/// Send `req` straight to the proxy's socket; everything it answers.
fn raw(proxy: &NetProxy, req: &[u8]) -> String {
    let mut c = std::os::unix::net::UnixStream::connect(proxy.socket()).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(req).unwrap();
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Requests crafted to slip past the name check (no sandbox needed: they
/// go to the proxy's socket directly, as a command could).
#[test]
fn crafted_requests_are_judged_by_the_host_they_reach() {
    let ok = server("ok");
    let ev = Arc::new(Events::default());
    let proxy = NetProxy::start(
        rules(&["ok.test"], &[], &["ok.test", "evil.test"]),
        vec![],
        Some(ev.clone()),
    )
    .unwrap();
    let p = ok.port;
    // userinfo that looks like the allowed host: the host is after '@'.
    let out = raw(
        &proxy,
        format!("GET http://ok.test:{p}@evil.test:{p}/ HTTP/1.1\r\nHost: ok.test\r\n\r\n")
            .as_bytes(),
    );
    assert!(
        out.starts_with("HTTP/1.1 403") && out.contains("evil.test"),
        "{out}"
    );
    // A Host header naming the allowed host does not change where it goes.
    let out = raw(
        &proxy,
        format!("GET http://evil.test:{p}/ HTTP/1.1\r\nHost: ok.test:{p}\r\n\r\n").as_bytes(),
    );
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
    // The URL's host is what the upstream is told, whatever Host said.
    let out = raw(
        &proxy,
        format!("GET http://ok.test:{p}/x HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: Basic eA==\r\n\r\n").as_bytes(),
    );
    assert!(
        out.contains("hello from ok") && out.contains(&format!("Host: ok.test:{p}")),
        "{out}"
    );
    assert!(
        !out.contains("evil.test") && !out.contains("Proxy-Authorization"),
        "{out}"
    );
    // Origin-form (a client that forgot it talks to a proxy), https:// without CONNECT.
    assert!(raw(&proxy, b"GET / HTTP/1.1\r\nHost: ok.test\r\n\r\n").starts_with("HTTP/1.1 400"));
    assert!(raw(&proxy, b"GET https://ok.test/ HTTP/1.1\r\n\r\n").contains("CONNECT"));
    // Names that are not names, a trailing dot, upper case.
    assert!(raw(&proxy, b"CONNECT ok.test%00.evil:80 HTTP/1.1\r\n\r\n").contains("invalid-host"));
    let out = raw(
        &proxy,
        format!("GET http://OK.TEST.:{p}/ HTTP/1.1\r\n\r\n").as_bytes(),
    );
    assert!(out.contains("hello from ok"), "{out}");
    // SOCKS5: UDP ASSOCIATE and BIND refused (reply 7), a denied name (reply 2).
    let udp = raw(&proxy, &[5, 1, 0, 5, 3, 0, 1, 0, 0, 0, 0, 0, 53]);
    assert_eq!(
        udp.as_bytes().get(..4),
        Some(&[5u8, 0, 5, 7][..]),
        "{udp:?}"
    );
    let mut req = vec![5, 1, 0, 5, 1, 0, 3, 9];
    req.extend_from_slice(b"evil.test");
    req.extend_from_slice(&p.to_be_bytes());
    let denied = raw(&proxy, &req);
    assert_eq!(
        denied.as_bytes().get(..4),
        Some(&[5u8, 0, 5, 2][..]),
        "{denied:?}"
    );
    // A descriptor that is not a listening TCP socket (a file, a UDP
    // socket) is closed unused, and the proxy goes on.
    let file = std::fs::File::open("/etc/hostname").unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    for fd in [
        std::os::fd::AsFd::as_fd(&file),
        std::os::fd::AsFd::as_fd(&udp),
    ] {
        use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
        let c = std::os::unix::net::UnixStream::connect(proxy.socket()).unwrap();
        let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut anc = SendAncillaryBuffer::new(&mut space);
        let fds = [fd];
        assert!(anc.push(SendAncillaryMessage::ScmRights(&fds)));
        rustix::net::sendmsg(
            &c,
            &[std::io::IoSlice::new(b"L")],
            &mut anc,
            SendFlags::empty(),
        )
        .unwrap();
        let mut b = [0u8; 1];
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        assert_eq!((&c).read(&mut b).unwrap(), 0, "the proxy hung up");
    }
    let out = raw(
        &proxy,
        format!("GET http://ok.test:{p}/ HTTP/1.1\r\n\r\n").as_bytes(),
    );
    assert!(out.contains("hello from ok"), "{out}");
    assert_eq!(ok.hits.load(Ordering::SeqCst), 3);
    let rules: Vec<String> =
        ev.0.lock()
            .unwrap()
            .iter()
            .map(|r| r.rule.clone())
            .collect();
    assert_eq!(
        rules,
        [
            "not-allowed",
            "not-allowed",
            "invalid-host",
            "socks-command",
            "not-allowed"
        ]
    );
}

/// A CA and a certificate for `host` signed by it (PEM: CA, leaf, key).
#[cfg(feature = "tls-intercept")]
fn test_pki(host: &str) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    use openssl::asn1::Asn1Time;
    use openssl::hash::MessageDigest;
    use openssl::nid::Nid;
    use openssl::pkey::PKey;
    use openssl::x509::extension::{BasicConstraints, SubjectAlternativeName};
    use openssl::x509::{X509, X509NameBuilder};
    let key = || {
        let g = openssl::ec::EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
        PKey::from_ec_key(openssl::ec::EcKey::generate(&g).unwrap()).unwrap()
    };
    let name = |cn: &str| {
        let mut n = X509NameBuilder::new().unwrap();
        n.append_entry_by_nid(Nid::COMMONNAME, cn).unwrap();
        n.build()
    };
    let (ca_key, leaf_key) = (key(), key());
    let mut b = X509::builder().unwrap();
    b.set_version(2).unwrap();
    b.set_subject_name(&name("test upstream CA")).unwrap();
    b.set_issuer_name(&name("test upstream CA")).unwrap();
    b.set_pubkey(&ca_key).unwrap();
    b.set_not_before(&Asn1Time::days_from_now(0).unwrap())
        .unwrap();
    b.set_not_after(&Asn1Time::days_from_now(2).unwrap())
        .unwrap();
    b.append_extension(BasicConstraints::new().critical().ca().build().unwrap())
        .unwrap();
    b.sign(&ca_key, MessageDigest::sha256()).unwrap();
    let ca = b.build();
    let mut b = X509::builder().unwrap();
    b.set_version(2).unwrap();
    b.set_subject_name(&name(host)).unwrap();
    b.set_issuer_name(ca.subject_name()).unwrap();
    b.set_pubkey(&leaf_key).unwrap();
    b.set_not_before(&Asn1Time::days_from_now(0).unwrap())
        .unwrap();
    b.set_not_after(&Asn1Time::days_from_now(2).unwrap())
        .unwrap();
    let san = SubjectAlternativeName::new()
        .dns(host)
        .build(&b.x509v3_context(Some(&ca), None))
        .unwrap();
    b.append_extension(san).unwrap();
    b.sign(&ca_key, MessageDigest::sha256()).unwrap();
    let leaf = b.build();
    (
        ca.to_pem().unwrap(),
        leaf.to_pem().unwrap(),
        leaf_key.private_key_to_pem_pkcs8().unwrap(),
    )
}

/// An HTTPS server on 127.0.0.1 answering `hello from NAME (tls)` and the
/// request head it received.
#[cfg(feature = "tls-intercept")]
fn tls_server(name: &'static str, leaf: &[u8], key: &[u8]) -> Server {
    let id = native_tls::Identity::from_pkcs8(leaf, key).unwrap();
    let acceptor = Arc::new(native_tls::TlsAcceptor::new(id).unwrap());
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(c) = c else { continue };
            let (acceptor, h) = (acceptor.clone(), h.clone());
            std::thread::spawn(move || {
                let Ok(mut t) = acceptor.accept(c) else {
                    return;
                };
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && t.read(&mut b).unwrap_or(0) == 1 {
                    head.push(b[0]);
                }
                h.fetch_add(1, Ordering::SeqCst);
                let body = format!(
                    "hello from {name} (tls)\n{}",
                    String::from_utf8_lossy(&head)
                );
                let _ = write!(
                    t,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = t.shutdown();
            });
        }
    });
    Server { port, hits }
}

#[cfg(feature = "tls-intercept")]
#[test]
fn a_secret_is_put_in_place_over_https_for_its_host_only() {
    need_bwrap!();
    let ws = Workspace::new("secret-tls");
    let (ca, leaf, key) = test_pki("api.test");
    let api = tls_server("api", &leaf, &key);
    let (_, other_leaf, other_key) = test_pki("other.test");
    let other = tls_server("other", &other_leaf, &other_key);
    let real = "sk-real-tls-value-1a2b3c";
    let secret = Secret::new("API_TOKEN", real.into(), &["api.test".to_string()], vec![]).unwrap();
    let placeholder = secret.placeholder.clone();
    // A secret for another host, sent to api.test inside its intercepted
    // tunnel: refused there too.
    let elsewhere = Secret::new(
        "ELSEWHERE_TOKEN",
        "sk-elsewhere-0000".into(),
        &["nowhere.test".to_string()],
        vec![],
    )
    .unwrap();
    let mut r = rules(
        &["api.test", "other.test"],
        &[],
        &["api.test", "other.test"],
    );
    r.upstream_ca = vec![ca];
    let ev = Arc::new(Events::default());
    let proxy = NetProxy::start(r, vec![secret, elsewhere], Some(ev.clone())).unwrap();
    let sb = sandbox(&ws, proxy);
    let (a, o) = (api.port, other.port);
    let (_, out) = run(
        &sb,
        &format!(
            r#"curl -sS -H "Authorization: Bearer $API_TOKEN" https://api.test:{a}/v1; echo
curl -sS -k -H "X-Key: $API_TOKEN" https://other.test:{o}/tunnel; echo
curl -sS -H "X-Other: $ELSEWHERE_TOKEN" https://api.test:{a}/wrong; echo
echo "ca=$CURL_CA_BUNDLE"; grep -c 'BEGIN CERTIFICATE' /run/ht-ca.pem"#
        ),
    );
    // The secret's host: intercepted (curl trusts the proxy's CA through
    // the bundle), the value put in place, TLS made again to the upstream.
    assert!(out.contains("hello from api (tls)"), "{out}");
    assert!(
        out.contains(&format!("Authorization: Bearer {real}")),
        "{out}"
    );
    // Another host: an end-to-end tunnel, the placeholder as it is.
    assert!(out.contains("hello from other (tls)"), "{out}");
    assert!(out.contains(&format!("X-Key: {placeholder}")), "{out}");
    assert!(out.contains("ca=/run/ht-ca.pem"), "{out}");
    assert!(
        out.contains("refused (secret-host:ELSEWHERE_TOKEN)"),
        "{out}"
    );
    assert!(!out.contains("sk-elsewhere"), "{out}");
    assert_eq!(out.matches(real).count(), 1, "{out}");
    assert_eq!(
        (
            api.hits.load(Ordering::SeqCst),
            other.hits.load(Ordering::SeqCst)
        ),
        (1, 1)
    );
    let ev = ev.0.lock().unwrap();
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0].rule, "secret-host:ELSEWHERE_TOKEN");
}
