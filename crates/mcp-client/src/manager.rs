//! Every configured server of one runtime: started at install, closed with
//! the runtime (no child outlives it), reported to the host as JSON.

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hermes_core::Lifecycle;
use hermes_core::core::Core;
use hermes_core::error::{Error, Result};

use crate::config::ServerConfig;
use crate::server::{Server, kill_tree_bounded};

pub struct Mcp {
    servers: Vec<Arc<Server>>,
    disabled: Vec<String>,
}

impl Mcp {
    /// Start every enabled server on `core`'s engine and wait for each one's
    /// first connection attempt (bounded by its `connect_timeout`): the tools
    /// of the servers that answered are registered when this returns; the
    /// others keep retrying in the background.
    pub fn install(configs: &BTreeMap<String, ServerConfig>, core: &Arc<Core>) -> Result<Arc<Mcp>> {
        let mut servers = Vec::new();
        let mut disabled = Vec::new();
        let mut waits = Vec::new();
        for (name, cfg) in configs {
            if !cfg.enabled {
                disabled.push(name.clone());
                continue;
            }
            let handle = core.engine.handle().ok_or_else(|| {
                Error::invalid("mcp_servers: the runtime's engine is not running")
            })?;
            let limit = cfg.connect_timeout() * 2 + Duration::from_secs(1);
            let server = Server::new(name, cfg.clone(), core);
            let (tx, rx) = std::sync::mpsc::channel();
            handle.spawn(server.clone().run_start(tx));
            waits.push((rx, Instant::now() + limit));
            servers.push(server);
        }
        for (rx, until) in waits {
            let _ = rx.recv_timeout(until.saturating_duration_since(Instant::now()));
        }
        Ok(Arc::new(Mcp { servers, disabled }))
    }

    /// `{"<server>": {"state": ..., ...}, ...}` (docs/json-shapes.md).
    pub fn status(&self) -> Value {
        let mut out = Map::new();
        for s in &self.servers {
            out.insert(s.name.clone(), s.status());
        }
        for d in &self.disabled {
            out.insert(
                d.clone(),
                json!({"state": "disabled", "transport": "stdio", "tools": []}),
            );
        }
        Value::Object(out)
    }
}

impl Lifecycle for Mcp {
    fn shutdown(&self) {
        for s in &self.servers {
            s.close();
        }
        let pids: Vec<i32> = self
            .servers
            .iter()
            .filter_map(|s| s.take_pid())
            .map(|p| p as i32)
            .collect();
        kill_tree_bounded(&pids);
    }
}
