//! The MCP client's place in a build without the `mcp-client` feature: a
//! runtime with no MCP servers, whose config and run-time additions name the
//! missing feature instead of failing obscurely. Same surface as
//! `hermes_mcp_client::Mcp`, so the runtime's code has one shape.

use std::collections::BTreeMap;
use std::sync::Arc;

use hermes_core::Core;
use hermes_core::error::{Error, Result};
use serde_json::Value;

/// What a build without MCP says when asked for a server.
pub const WHY: &str = "this build of hermes-tools has no MCP client (Cargo feature `mcp-client`)";

/// The MCP servers of a build without an MCP client: always none.
pub struct Mcp;

impl Mcp {
    pub fn install(
        configs: &BTreeMap<String, Value>,
        _core: &Arc<Core>,
        _events: Option<Arc<dyn hermes_core::ToolServices>>,
    ) -> Result<Arc<Mcp>> {
        match configs.keys().next() {
            Some(name) => Err(Error::invalid(format!("mcp_servers.{name}: {WHY}"))),
            None => Ok(Arc::new(Mcp)),
        }
    }

    pub fn add(&self, name: &str, _cfg: Value) -> Result<()> {
        Err(Error::invalid(format!("MCP server '{name}': {WHY}")))
    }

    pub fn remove(&self, name: &str) -> Result<()> {
        Err(Error::not_found(format!("no MCP server named '{name}'")))
    }

    pub fn accept_tools(&self, name: &str) -> Result<Vec<String>> {
        Err(Error::not_found(format!("no MCP server named '{name}'")))
    }

    pub fn status(&self) -> Value {
        Value::Object(Default::default())
    }
}

impl hermes_core::Lifecycle for Mcp {
    fn shutdown(&self) {}
}
