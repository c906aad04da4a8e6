//! hermes-tools: the tools runtime of an LLM agent as an embeddable library.
//!
//! A host registers its tools as callbacks grouped in toolsets, asks for the
//! schemas to send to the model, and hands the model's tool calls back to be
//! dispatched (argument repair and validation, hooks, approval of dangerous
//! commands, timeouts, output limits, parallel batches). Layers: `ffi` (the
//! only unsafe boundary) → `runtime` → registry / schema / dispatch /
//! approval / tools. The C API is `include/hermes_tools.h`.

#![allow(non_camel_case_types)]

pub use hermes_approval as approval;
pub mod approval_host;
pub mod availability;
pub mod config;
pub mod dispatch;
pub mod error;
pub mod ffi;
pub mod gate;
pub mod host;
pub mod logging;
pub mod pending;
pub mod registry;
pub mod runtime;
pub mod schema;
pub mod text;
pub mod threads;
pub mod tools;
pub mod toolsets;

pub use error::{Error, Result, Status};
pub use runtime::Runtime;

/// `ht_features()`: static JSON, NUL-terminated.
pub const FEATURES_JSON: &str = concat!(
    r#"{"version":""#,
    env!("CARGO_PKG_VERSION"),
    r#"","abi":1,"formats":["openai","anthropic","mcp"],"hooks":["pre_tool_call","post_tool_call","transform_tool_result"],"builtin_toolsets":["terminal"],"pty":true,"sandbox":"bubblewrap"}"#,
    "\0"
);
