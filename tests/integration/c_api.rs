//! Builds the C and C++ contract programs against the committed header and
//! the freshly built library, and runs them plainly, with ASan/UBSan, and
//! under valgrind (when installed).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// target/<profile>, where cargo put libhermes_tools.so.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("target dir")
        .to_path_buf()
}

fn build(source: &str, out_name: &str, extra: &[&str]) -> PathBuf {
    let src = root().join(source);
    let out = lib_dir().join(out_name);
    let is_cpp = source.ends_with(".cpp");
    let compiler = if is_cpp { "c++" } else { "cc" };
    let std = if is_cpp { "-std=c++17" } else { "-std=c11" };
    let lib = lib_dir();
    let status = Command::new(compiler)
        .arg(std)
        .args([
            "-Wall",
            "-Wextra",
            "-Werror",
            "-g",
            "-D_GNU_SOURCE",
            "-pthread",
        ])
        .args(extra)
        .arg(format!("-I{}", root().join("include").display()))
        .arg(format!("-I{}", root().join("bindings/cpp").display()))
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lhermes_tools")
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "compiling {source} failed");
    out
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().expect("run test program");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run_all(source: &str, name: &str) {
    let plain = build(source, name, &[]);
    run(&mut Command::new(&plain), &format!("{name} (plain)"));
    let asan = build(
        source,
        &format!("{name}-asan"),
        &["-fsanitize=address,undefined", "-fno-omit-frame-pointer"],
    );
    // Leak checking would report Rust's intentionally leaked statics; errors still fail.
    run(
        Command::new(&asan)
            .env("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1")
            .env("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1"),
        &format!("{name} (asan+ubsan)"),
    );
    if have("valgrind") {
        run(
            Command::new("valgrind")
                .args(["--error-exitcode=99", "--quiet", "--leak-check=no"])
                .arg(&plain),
            &format!("{name} (valgrind)"),
        );
    } else {
        eprintln!("valgrind not installed: skipping the valgrind run of {name}");
    }
}

#[test]
fn c_contract() {
    run_all("tests/c/contract.c", "contract-c");
}

#[test]
fn c_host_environment_contract() {
    run_all("tests/c/host_env.c", "host-env-c");
}

#[test]
fn c_cancel_contract() {
    run_all("tests/c/cancel.c", "cancel-c");
}

#[test]
fn cpp_contract() {
    run_all("tests/cpp/contract.cpp", "contract-cpp");
}

#[test]
fn c_approval_example() {
    let exe = build("examples/c/approval.c", "approval-c", &[]);
    run(
        Command::new(&exe).current_dir(root()),
        "examples/c/approval.c",
    );
}

#[test]
fn c_quickstart_example() {
    let exe = build("examples/c/quickstart.c", "quickstart-c", &[]);
    run(
        Command::new(&exe).current_dir(root()),
        "examples/c/quickstart.c",
    );
}

/// A C host that exits (or is killed) without `ht_runtime_free` leaves no
/// command behind, nor a child the command double-forked out of its session
/// with an empty environment (issue 38).
#[test]
fn c_host_exit_without_free_leaves_nothing() {
    use std::io::{BufRead, Write};
    let exe = build("tests/c/exit_without_free.c", "exit-without-free-c", &[]);
    let live = |arg: &str| -> usize {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|p| {
                let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
                !stat
                    .rfind(')')
                    .is_some_and(|i| stat[i + 1..].trim_start().starts_with('Z'))
                    && std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                        String::from_utf8_lossy(&c).replace('\0', " ").trim_end()
                            == format!("/bin/sleep {arg}")
                    })
            })
            .count()
    };
    let wait = |f: &dyn Fn() -> bool, secs: u64| {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
        while !f() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        f()
    };
    for (n, how) in ["exit", "kill"].into_iter().enumerate() {
        let tag = format!("{}.{n}", 400 + std::process::id() % 97);
        let script = std::env::temp_dir().join(format!("ht-c-life-{tag}.py"));
        std::fs::write(
            &script,
            format!(
                "import os\nif os.fork() == 0:\n    getattr(os, 'set' + 'sid')()\n    \
                 if os.fork() == 0:\n        os.execve('/bin/sleep', ['/bin/sleep', '6{tag}'], {{}})\n    \
                 os._exit(0)\nos.execv('/bin/sleep', ['/bin/sleep', '7{tag}'])\n"
            ),
        )
        .unwrap();
        let mut child = Command::new(&exe)
            .args([how, &tag, script.to_str().unwrap()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "started");
        let (six, seven) = (format!("6{tag}"), format!("7{tag}"));
        assert!(
            wait(&|| live(&six) == 1 && live(&seven) == 1, 20),
            "{how}: the command did not start"
        );
        writeln!(child.stdin.take().unwrap(), "go").unwrap();
        let _ = child.wait();
        let gone = wait(&|| live(&six) == 0 && live(&seven) == 0, 1);
        let _ = std::fs::remove_file(&script);
        assert!(gone, "{how}: the command outlived the C host");
    }
}
