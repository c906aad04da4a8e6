//! The core of hermes-tools: the [`Tool`](tool::Tool) and [`Hook`](hooks::Hook)
//! interfaces every provider implements, the registry and toolsets,
//! availability checks, definitions in each model format, and the dispatch
//! pipeline (repair, validation, hooks, timeouts, limits, batches).
//!
//! It knows neither the C ABI nor any particular tool: the runtime crate
//! assembles it with providers (built-in tools, host callbacks, MCP servers)
//! and services (command approval, events).

// `unsafe` lives only at the boundary (crates/ffi, crates/exec/src/sys.rs).
#![deny(unsafe_code)]

pub mod availability;
pub mod config;
pub mod context;
pub mod core;
pub mod definitions;
pub mod defs_cache;
pub mod dispatch;
pub mod engine;
pub mod error;
pub mod flow;
pub mod function;
pub mod hooks;
pub mod params;
pub mod pending;
pub mod registry;
pub mod schema;
pub mod search;
pub mod suggest;
pub mod threads;
pub mod tool;
pub mod toolsets;

pub use crate::core::Core;
pub use error::{Error, ErrorKind, Result};
pub use tool::{
    Blocking, BlockingTool, CancelToken, CommandDecision, Lifecycle, Mode, Reply, RunCtx, Tool,
    ToolCall, ToolOutput, ToolServices,
};
