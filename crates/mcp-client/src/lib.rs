//! The MCP client of hermes-tools: each server named in the runtime config's
//! `mcp_servers` is run (a stdio child process, through the official `rmcp`
//! SDK on the runtime's tokio engine) and its tools become the toolset
//! `mcp-<server>` (alias `<server>`), tools named `mcp__<server>__<tool>`,
//! dispatched like every other tool.

#![deny(unsafe_code)]

pub mod config;
pub mod manager;
pub mod names;
#[cfg(feature = "https")]
pub mod oauth;
pub mod result;
pub mod schema;
pub mod server;

pub use config::ServerConfig;
pub use manager::Mcp;
