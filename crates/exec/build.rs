// Build script of hermes-exec: compiles the process-tree shim
// (shim/ht_shim.c, see src/supervisor.rs) into a small executable that the
// library embeds and writes out once per process. It is built with the C
// compiler the `cc` crate picks for the target (the same one -sys crates
// use), optimised and stripped: about 15 KB.
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=shim/ht_shim.c");
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let exe = out.join("ht-shim");
    let compiler = cc::Build::new().opt_level(2).get_compiler();
    let status = Command::new(compiler.path())
        .args(["-O2", "-s", "-Wall", "-Wextra", "-std=c11", "-o"])
        .arg(&exe)
        .arg("shim/ht_shim.c")
        .status()
        .expect("run the C compiler for shim/ht_shim.c");
    assert!(status.success(), "compiling shim/ht_shim.c failed");
}
