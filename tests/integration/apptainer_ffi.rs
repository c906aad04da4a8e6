//! The apptainer backend through dispatch (issue 33), driven by the
//! stand-in client of crates/exec/tests/fixtures (apptainer is not packaged
//! for this machine): approval names where the command would run, the
//! task's directory and variables persist in its instance, and the
//! runtime's close stops every instance.

use hermes_tools::Status;
use hermes_tools::ffi::api::*;
use hermes_tools::ffi::ht_error;
use serde_json::{Value, json};
use std::ffi::c_char;
use std::path::Path;
use std::ptr::null_mut;

fn dispatch(rt: *mut ht_runtime, name: &str, args: &Value) -> Value {
    let args = args.to_string();
    let ctx = r#"{"task_id":"a1"}"#;
    let (mut out, mut len, mut err): (*mut c_char, usize, *mut ht_error) =
        (null_mut(), 0, null_mut());
    let st = unsafe {
        ht_runtime_dispatch(
            rt,
            name.as_ptr() as *const c_char,
            name.len(),
            args.as_ptr() as *const c_char,
            args.len(),
            ctx.as_ptr() as *const c_char,
            ctx.len(),
            &mut out,
            &mut len,
            &mut err,
        )
    };
    assert_eq!(st, Status::Ok);
    let v = serde_json::from_slice(unsafe { std::slice::from_raw_parts(out as *const u8, len) })
        .unwrap();
    unsafe { ht_string_free(out) };
    v
}

#[test]
fn apptainer_backend_through_dispatch_with_the_standin_client() {
    let root = std::env::temp_dir().join(format!("ht-app-ffi-{}", std::process::id()));
    let state = root.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let work = root.join("work");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    // The stand-in reads its folder from an APPTAINER_ variable (passed to the client).
    unsafe { std::env::set_var("APPTAINER_STANDIN_STATE", &state) };
    let standin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/exec/tests/fixtures/apptainer-standin.sh");
    let cfg = json!({
        "builtin_toolsets": ["terminal", "file"],
        "terminal": {"backend": "singularity", "cwd": work,
                     "apptainer": {"image": "docker://debian:12-slim", "binary": standin,
                                   "cache_dir": root.join("cache")}},
        "approvals": {"mode": "manual", "non_interactive": "deny"},
    })
    .to_string();
    let mut rt = null_mut();
    let st = unsafe {
        ht_runtime_new(
            cfg.as_ptr() as *const c_char,
            cfg.len(),
            &mut rt,
            null_mut(),
        )
    };
    assert_eq!(st, Status::Ok);
    let out = dispatch(rt, "terminal", &json!({"command": "cd sub && export AV=7"}));
    assert_eq!(out["exit_code"], 0, "{out}");
    let out = dispatch(rt, "terminal", &json!({"command": "pwd; echo $AV"}));
    assert_eq!(out["output"], format!("{}/sub\n7", work.display()), "{out}");
    let out = dispatch(
        rt,
        "write_file",
        &json!({"path": work.join("n.txt"), "content": "x"}),
    );
    assert_eq!(out["bytes_written"], 1, "{out}");
    // denied (non-interactive): never reaches the instance
    let marker = work.join("victim");
    std::fs::create_dir_all(&marker).unwrap();
    let out = dispatch(
        rt,
        "terminal",
        &json!({"command": format!("rm -rf {}", marker.display())}),
    );
    assert_eq!(out["status"], "blocked", "{out}");
    assert!(marker.exists());
    let live = || {
        std::fs::read_dir(&state)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_dir())
            .count()
    };
    // the task's, and the default one where the image's environment was learnt
    assert_eq!(live(), 2, "one instance per task");
    unsafe { ht_runtime_free(rt) };
    assert_eq!(live(), 0, "the runtime's close stops its instances");
    let _ = std::fs::remove_dir_all(&root);
}
