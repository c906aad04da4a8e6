//! Every configured server of one runtime: started at install, closed with
//! the runtime (no child outlives it), reported to the host as JSON.

use parking_lot::Mutex;
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
    core: std::sync::Weak<Core>,
    events: Option<Arc<dyn hermes_core::ToolServices>>,
    servers: Mutex<Vec<Arc<Server>>>,
    disabled: Mutex<Vec<(String, &'static str)>>,
}

impl Mcp {
    /// Start every enabled server on `core`'s engine and wait for each one's
    /// first connection attempt (bounded by its `connect_timeout`): the tools
    /// of the servers that answered are registered when this returns; the
    /// others keep retrying in the background.
    pub fn install(
        configs: &BTreeMap<String, ServerConfig>,
        core: &Arc<Core>,
        events: Option<Arc<dyn hermes_core::ToolServices>>,
    ) -> Result<Arc<Mcp>> {
        let mcp = Arc::new(Mcp {
            core: Arc::downgrade(core),
            events,
            servers: Mutex::new(Vec::new()),
            disabled: Mutex::new(Vec::new()),
        });
        mcp.start(
            configs
                .iter()
                .map(|(n, c)| (n.clone(), c.clone()))
                .collect(),
            core,
        )?;
        Ok(mcp)
    }

    fn start(&self, configs: Vec<(String, ServerConfig)>, core: &Arc<Core>) -> Result<()> {
        let mut waits = Vec::new();
        for (name, cfg) in configs {
            if !cfg.enabled {
                self.disabled.lock().push((name, cfg.transport()));
                continue;
            }
            let handle = core.engine.handle().ok_or_else(|| {
                Error::invalid("mcp_servers: the runtime's engine is not running")
            })?;
            let limit = cfg.connect_timeout() * 2 + Duration::from_secs(1);
            let server = Server::new(&name, cfg, core, self.events.clone());
            let (tx, rx) = std::sync::mpsc::channel();
            handle.spawn(server.clone().run_start(tx));
            waits.push((rx, Instant::now() + limit));
            self.servers.lock().push(server);
        }
        for (rx, until) in waits {
            let _ = rx.recv_timeout(until.saturating_duration_since(Instant::now()));
        }
        Ok(())
    }

    /// Add a server at run time (its config already validated): started
    /// like the configured ones. A name in use is a conflict.
    pub fn add(&self, name: &str, cfg: ServerConfig) -> Result<()> {
        let core = self
            .core
            .upgrade()
            .ok_or_else(|| Error::new(hermes_core::ErrorKind::Closed, "the runtime is closed"))?;
        let taken = self.servers.lock().iter().any(|s| s.name == name)
            || self.disabled.lock().iter().any(|(d, _)| d == name);
        if taken {
            return Err(Error::new(
                hermes_core::ErrorKind::Conflict,
                format!("MCP server '{name}' already exists; remove it first"),
            ));
        }
        self.start(vec![(name.to_string(), cfg)], &core)
    }

    /// Stop a server, kill its process and deregister its tools.
    pub fn remove(&self, name: &str) -> Result<()> {
        let server = {
            let mut servers = self.servers.lock();
            servers
                .iter()
                .position(|s| s.name == name)
                .map(|i| servers.remove(i))
        };
        match server {
            Some(s) => {
                s.close();
                if let Some(pid) = s.take_pid() {
                    kill_tree_bounded(&[pid as i32]);
                }
                s.remove_tools();
                Ok(())
            }
            None => {
                let mut disabled = self.disabled.lock();
                match disabled.iter().position(|(d, _)| d == name) {
                    Some(i) => {
                        disabled.remove(i);
                        Ok(())
                    }
                    None => Err(Error::not_found(format!("no MCP server named '{name}'"))),
                }
            }
        }
    }

    /// Accept the changed tool definitions of server `name` (held after a
    /// "rug pull" while its `pin` is on): they become the new pins and the
    /// tools are listed again, so they come back. Waits for that listing (at
    /// most the server's connect timeout). Returns the tools accepted.
    pub fn accept_tools(&self, name: &str) -> Result<Vec<String>> {
        let server = self
            .servers
            .lock()
            .iter()
            .find(|s| s.name == name)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("no running MCP server named '{name}'")))?;
        let accepted = server.accept_changes();
        let core = self
            .core
            .upgrade()
            .ok_or_else(|| Error::new(hermes_core::ErrorKind::Closed, "the runtime is closed"))?;
        let handle = core
            .engine
            .handle()
            .ok_or_else(|| Error::new(hermes_core::ErrorKind::Closed, "the runtime is closed"))?;
        let (tx, rx) = std::sync::mpsc::channel();
        let limit = server.connect_timeout_hint();
        handle.spawn(async move {
            let _ = tx.send(server.refresh_now().await);
        });
        match rx.recv_timeout(limit) {
            Ok(Ok(())) => Ok(accepted),
            Ok(Err(e)) => Err(Error::new(
                hermes_core::ErrorKind::Internal,
                format!("MCP server '{name}': changes accepted, but listing its tools failed: {e}"),
            )),
            Err(_) => Err(Error::new(
                hermes_core::ErrorKind::Timeout,
                format!(
                    "MCP server '{name}': changes accepted; its tools are listed again in the background"
                ),
            )),
        }
    }

    /// `{"<server>": {"state": ..., ...}, ...}` (docs/json-shapes.md).
    pub fn status(&self) -> Value {
        let mut out = Map::new();
        for s in self.servers.lock().iter() {
            out.insert(s.name.clone(), s.status());
        }
        for (d, transport) in self.disabled.lock().iter() {
            out.insert(
                d.clone(),
                json!({"state": "disabled", "transport": transport, "tools": []}),
            );
        }
        Value::Object(out)
    }
}

impl Lifecycle for Mcp {
    fn shutdown(&self) {
        let servers = self.servers.lock().clone();
        for s in &servers {
            s.close();
        }
        let pids: Vec<i32> = servers
            .iter()
            .filter_map(|s| s.take_pid())
            .map(|p| p as i32)
            .collect();
        kill_tree_bounded(&pids);
    }
}
