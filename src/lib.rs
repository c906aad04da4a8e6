//! hermes-tools: the tools runtime of an LLM agent as an embeddable library.
//!
//! This package is the C artifact (`libhermes_tools.so` / `.a`, the header
//! `include/hermes_tools.h`) over the workspace's crates, in the style of
//! ripgrep's root package over its `crates/`:
//!
//! - `hermes-approval`, `hermes-exec`: leaf engines (command analysis; processes and files)
//! - `hermes-core`: the `Tool` interface, registry, toolsets, definitions, dispatch
//! - `hermes-builtins`: built-in tools (terminal, process)
//! - `hermes-runtime`: config, assembly, approval broker, the Rust API
//! - `hermes-ffi`: the C ABI
//!
//! Rust hosts use `hermes_runtime::Runtime` directly; everything here is re-exported.

// `unsafe` lives only at the boundary (crates/ffi, crates/exec/src/sys.rs).
#![deny(unsafe_code)]

pub use hermes_approval as approval;
pub use hermes_builtins as builtins;
pub use hermes_core as core;
pub use hermes_core::{dispatch, pending, registry};
pub use hermes_exec as exec;
pub use hermes_ffi as ffi;
pub use hermes_ffi::{Status, features_json, host, logging};
pub use hermes_runtime as runtime;
pub use hermes_runtime::Runtime;

// The C functions live in hermes-ffi; this keeps them linked into the artifact.
pub use hermes_ffi::api::*;
