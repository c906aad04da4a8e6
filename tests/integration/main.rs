//! The root package's integration tests, one module per former test file, in
//! one binary (issue 29): each tests/*.rs was its own binary linking the whole
//! library with rmcp, reqwest and OpenSSL, and CI spent minutes linking them.
//! Tests that need their process to themselves stay separate binaries in
//! tests/: core_threads and faults count the process's threads (faults also
//! limits its address space and runs itself again by test name),
//! logging_handoff and faults install the process-wide log handler,
//! terminal_output measures the process's peak memory, and stress is run on
//! its own by `make stress`. Run one module with
//! `cargo test --test integration <module>::`.

#[path = "../common/mod.rs"]
mod common;

mod approval_host;
mod apptainer_ffi;
mod batch_formats;
mod builtins_ffi;
mod c_api;
mod core_dispatch;
mod core_registry;
mod core_search;
mod docs_tools;
mod header;
mod host_env_ffi;
mod mcp_ffi;
mod plugins;
mod progress_ffi;
mod review_core;
mod serve_mcp_ffi;
mod terminal_basic;
mod terminal_ffi;
mod terminal_process;
mod terminal_sandbox;
