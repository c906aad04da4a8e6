//! The hermes-tools runtime and its Rust API: parses the config, assembles a
//! [`Core`] with the built-in providers it names, owns the approval broker
//! and the event sink (the services tools may use), and closes everything in
//! a fixed order. The C ABI, the CLI and the MCP server are front ends over
//! this API.

// `unsafe` lives only at the boundary (crates/ffi, crates/exec/src/sys.rs).
#![deny(unsafe_code)]

pub mod approvals;
pub mod config;

use parking_lot::{Mutex, RwLock};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

use hermes_builtins::terminal::Terminal;
use hermes_core::availability::Check;
use hermes_core::dispatch::{self, CallContext, OnDone};
use hermes_core::error::{Error, Result};
use hermes_core::hooks::{Hook, HookEvent};
use hermes_core::registry::{self, ToolsetDef};
use hermes_core::threads::CallbackThread;
use hermes_core::{CancelToken, CommandDecision, Core, Lifecycle, Tool, ToolServices};

pub use approvals::ApprovalSink;
pub use config::Config;

/// Where library events go (process notifications, watch matches, output).
pub trait EventSink: Send + Sync {
    /// One event as JSON text. Runs on the callbacks thread.
    fn event(&self, json: &str);
}

/// The services tools may use: command approval and events. Owned apart
/// from the core, so tools holding them never keep the registry alive.
pub struct Services {
    pub approval_engine: Arc<hermes_approval::Engine>,
    pub policy: Arc<hermes_approval::Policy>,
    pub approvals: approvals::Approvals,
    pub events: RwLock<Option<Arc<dyn EventSink>>>,
    pub(crate) callbacks: Arc<CallbackThread>,
}

impl ToolServices for Services {
    fn approve_command(
        &self,
        command: &str,
        ctx: &CallContext,
        cancel: &CancelToken,
    ) -> CommandDecision {
        approvals::decide(&self.approvals, command, ctx, cancel)
    }

    fn emit_event(&self, event: Value) {
        let sink = self.events.read().clone();
        if let Some(sink) = sink {
            let text = event.to_string();
            self.callbacks.post(Box::new(move || sink.event(&text)));
        }
    }

    fn has_event_handler(&self) -> bool {
        self.events.read().is_some()
    }
}

/// A runtime: the Rust API (the C ABI wraps the same thing).
pub struct Runtime {
    core: Arc<Core>,
    services: Arc<Services>,
    config: Config,
    terminal: Option<Arc<Terminal>>,
    lifecycles: Mutex<Vec<Arc<dyn Lifecycle>>>,
    mcp: Option<Arc<hermes_mcp_client::Mcp>>,
}

impl Runtime {
    /// Build a runtime from its JSON config (`{}` = defaults, nothing built-in).
    pub fn new(config_json: &str) -> Result<Runtime> {
        let config = Config::parse(config_json)?;
        let approval_engine =
            hermes_approval::Engine::from_config(&config.approvals.engine_config())
                .map_err(|e| Error::invalid(format!("runtime config: approvals: {e}")))?;
        let policy = hermes_approval::Policy::new(config.approvals.clone())
            .map_err(|e| Error::invalid(format!("runtime config: approvals: {e}")))?;
        let core = Core::new(config.dispatch.clone(), &config.availability)?;
        let (approval_engine, policy) = (Arc::new(approval_engine), Arc::new(policy));
        let approvals = approvals::Approvals::new(
            approval_engine.clone(),
            policy.clone(),
            core.callbacks.clone(),
            core.engine.clone(),
            core.id,
        );
        let services = Arc::new(Services {
            approval_engine,
            policy,
            approvals,
            events: RwLock::new(None),
            callbacks: core.callbacks.clone(),
        });
        let mut rt = Runtime {
            core,
            services,
            config,
            terminal: None,
            lifecycles: Mutex::new(Vec::new()),
            mcp: None,
        };
        if let Err(e) = rt.install_builtins().and_then(|()| rt.install_mcp()) {
            rt.close();
            return Err(e);
        }
        tracing::debug!(runtime = rt.core.id, "runtime created");
        Ok(rt)
    }

    /// Install the built-in toolsets named in the config.
    fn install_builtins(&mut self) -> Result<()> {
        for name in self.config.builtin_toolsets.clone() {
            match name.as_str() {
                "terminal" => {
                    let services: Arc<dyn ToolServices> = self.services.clone();
                    let term = hermes_builtins::terminal::install(
                        self.config.terminal.clone(),
                        services,
                        &self.core,
                    )?;
                    self.lifecycles.lock().push(term.clone());
                    self.terminal = Some(term);
                }
                "tool_search" => hermes_core::search::install(&self.core)?,
                _ => {
                    return Err(Error::new(
                        hermes_core::ErrorKind::Unsupported,
                        format!(
                            "runtime config: builtin_toolsets: '{name}' is not available in this build yet"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Start the MCP servers of the config (after the built-ins: their
    /// tools never shadow a built-in tool).
    fn install_mcp(&mut self) -> Result<()> {
        let services: Arc<dyn ToolServices> = self.services.clone();
        let mcp =
            hermes_mcp_client::Mcp::install(&self.config.mcp_servers, &self.core, Some(services))?;
        self.lifecycles.lock().push(mcp.clone());
        self.mcp = Some(mcp);
        Ok(())
    }

    /// Add an MCP server at run time (`config_json` as one entry of the
    /// config's `mcp_servers`); blocks for its first connection attempt.
    pub fn add_mcp_server(&self, name: &str, config_json: &str) -> Result<()> {
        let _g = self.core.enter()?;
        let cfg: config::McpServerConfig = serde_json::from_str(config_json)
            .map_err(|e| Error::json(format!("mcp server config: {e}")))?;
        let cfg = cfg.validate(name)?;
        match &self.mcp {
            Some(m) => m.add(name, cfg),
            None => Err(Error::invalid("the runtime is closing")),
        }
    }

    /// Remove an MCP server: its process is stopped, its tools deregistered.
    pub fn remove_mcp_server(&self, name: &str) -> Result<()> {
        let _g = self.core.enter()?;
        match &self.mcp {
            Some(m) => m.remove(name),
            None => Err(Error::not_found(format!("no MCP server named '{name}'"))),
        }
    }

    /// Each MCP server's state as JSON text (`{}` without servers).
    pub fn mcp_status(&self) -> String {
        match &self.mcp {
            Some(m) => m.status().to_string(),
            None => "{}".to_string(),
        }
    }

    pub fn core(&self) -> &Arc<Core> {
        &self.core
    }
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }
    pub fn config(&self) -> &Config {
        &self.config
    }
    /// The terminal toolset, when it is switched on.
    pub fn terminal(&self) -> Option<&Arc<Terminal>> {
        self.terminal.as_ref()
    }
    pub fn is_closed(&self) -> bool {
        self.core.is_closed()
    }

    /// Register one tool from its JSON spec.
    pub fn register_tool(
        &self,
        spec_json: &str,
        tool: Arc<dyn Tool>,
        check: Option<Arc<dyn Check>>,
    ) -> Result<()> {
        let _g = self.core.enter()?;
        let spec = registry::parse_spec(spec_json)?;
        let override_ = spec.override_;
        let entry = registry::build_entry(spec, tool, check)?;
        self.core.register(entry, override_)
    }

    /// Register many tools (a JSON array of specs) that share one
    /// implementation; the tool learns each call's name from `ToolCall::name`.
    /// All or nothing; returns how many were registered.
    pub fn register_tools(
        &self,
        specs_json: &str,
        tool: Arc<dyn Tool>,
        check: Option<Arc<dyn Check>>,
    ) -> Result<usize> {
        let _g = self.core.enter()?;
        let specs = registry::parse_specs(specs_json)?;
        let override_ = specs.iter().any(|s| s.override_);
        let entries = specs
            .into_iter()
            .enumerate()
            .map(|(i, spec)| {
                registry::build_entry(spec, tool.clone(), check.clone())
                    .map_err(|e| Error::new(e.kind, format!("tool specs[{i}]: {}", e.message)))
            })
            .collect::<Result<Vec<_>>>()?;
        self.core.register_many(entries, override_)
    }

    pub fn deregister_tool(&self, name: &str) -> Result<()> {
        let _g = self.core.enter()?;
        self.core.deregister(name)
    }

    pub fn define_toolset(&self, json: &str) -> Result<()> {
        let _g = self.core.enter()?;
        let def: ToolsetDef = hermes_core::error::parse_json("toolset", json)?;
        self.core.define_toolset(def)
    }

    pub fn alias_toolset(&self, alias: &str, target: &str) -> Result<()> {
        let _g = self.core.enter()?;
        self.core.alias_toolset(alias, target)
    }

    pub fn generation(&self) -> u64 {
        self.core.generation()
    }

    pub fn add_hook(&self, event: &str, hook: Arc<dyn Hook>) -> Result<u64> {
        let _g = self.core.enter()?;
        let ev = HookEvent::parse(event)?;
        Ok(self.core.add_hook(ev, hook))
    }

    pub fn remove_hook(&self, id: u64) -> Result<()> {
        let _g = self.core.enter()?;
        self.core.remove_hook(id)
    }

    /// Set (or with `None`, remove) the handler for agent-loop tools.
    pub fn set_interceptor(&self, tool: Option<Arc<dyn Tool>>) -> Result<()> {
        let _g = self.core.enter()?;
        self.core.set_interceptor(tool);
        Ok(())
    }

    pub fn set_event_sink(&self, sink: Option<Arc<dyn EventSink>>) -> Result<()> {
        let _g = self.core.enter()?;
        let old = std::mem::replace(&mut *self.services.events.write(), sink);
        drop(old);
        Ok(())
    }

    /// Set the approval handler (`reviewer == false`) or the smart-mode reviewer.
    pub fn set_approval_sink(
        &self,
        reviewer: bool,
        sink: Option<Arc<dyn ApprovalSink>>,
    ) -> Result<()> {
        let _g = self.core.enter()?;
        let slot = if reviewer {
            &self.services.approvals.reviewer
        } else {
            &self.services.approvals.handler
        };
        let old = std::mem::replace(&mut *slot.write(), sink);
        drop(old);
        Ok(())
    }

    /// Dispatch one call synchronously: tools run on this thread.
    pub fn dispatch(&self, name: &str, args: &str, ctx: CallContext) -> Result<String> {
        dispatch::dispatch_sync(&self.core, name, args, ctx)
    }

    /// Dispatch one call; `on_done` runs exactly once on the callbacks thread.
    pub fn dispatch_async(
        &self,
        name: &str,
        args: &str,
        ctx: CallContext,
        on_done: OnDone,
    ) -> Result<u64> {
        dispatch::dispatch_async(&self.core, name, args, ctx, on_done)
    }

    /// Dispatch a batch of model tool calls; results in input order.
    pub fn dispatch_batch(&self, calls_json: &str, ctx: &CallContext) -> Result<String> {
        dispatch::batch::dispatch_batch(&self.core, calls_json, ctx)
    }

    /// Definitions for the model (JSON text, shared: cheap to clone).
    pub fn definitions(&self, query_json: &str) -> Result<hermes_core::definitions::Text> {
        hermes_core::definitions::definitions(&self.core, query_json)
    }

    pub fn toolsets_json(&self) -> Result<String> {
        hermes_core::definitions::toolsets_json(&self.core)
    }

    /// Cancel an async dispatch by its call id.
    pub fn cancel(&self, call_id: u64) -> Result<()> {
        self.core.cancel(call_id)
    }

    /// Drop a task's state in every built-in toolset (kills its processes).
    pub fn cleanup_task(&self, task_id: &str) {
        let lifecycles = self.lifecycles.lock().clone();
        for l in lifecycles {
            l.cleanup_task(task_id);
        }
    }

    /// Close: reject new work, cancel pending calls (their completions run
    /// cancelled), stop built-in tools, drop every tool and handler, stop
    /// the engine and the callbacks thread. Everything has happened when this
    /// returns, unless called from the callbacks thread itself (which cannot
    /// wait for itself).
    pub fn close(&self) {
        let core = &self.core;
        if !core.begin_close() {
            return;
        }
        self.services.approvals.close();
        let on_callback_thread = core.callbacks.is_current();
        let lifecycles = std::mem::take(&mut *self.lifecycles.lock());
        for l in &lifecycles {
            l.shutdown();
        }
        drop(lifecycles);
        if !on_callback_thread {
            // Host code still running holds its tool's user_data: never free
            // it under its feet. Wait, and say why we wait.
            while !core.wait_idle(Duration::from_secs(5)) {
                tracing::warn!(
                    "runtime close is waiting for calls or availability checks still running in host code"
                );
            }
        }
        core.finish_close();
        *self.services.events.write() = None;
        *self.services.approvals.handler.write() = None;
        *self.services.approvals.reviewer.write() = None;
        core.callbacks.shutdown();
        tracing::debug!(runtime = core.id, "runtime closed");
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.close();
    }
}
