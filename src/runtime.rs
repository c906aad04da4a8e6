//! The runtime: owns the registry, hooks, caches, threads and built-in tools,
//! and tears them down in a fixed order on close.

use arc_swap::ArcSwap;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU64, Ordering};
use std::time::Duration;

use crate::approval;
use crate::availability::Availability;
use crate::config::Config;
use crate::dispatch::FlowCtl;
use crate::error::{Error, Result};
use crate::host::{CheckFn, FreeFn, HandlerFn, HookFn, HostData};
use crate::registry::{self, Check, Handler, Registry, ToolEntry, ToolsetDef};
use crate::schema::DefsCache;
use crate::threads::{CallbackThread, Timer};
use crate::tools::{Lifecycle, NativeTool};

/// Hook events the runtime knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    PreToolCall,
    PostToolCall,
    TransformToolResult,
}

impl HookEvent {
    pub fn parse(s: &str) -> Result<HookEvent> {
        Ok(match s {
            "pre_tool_call" => HookEvent::PreToolCall,
            "post_tool_call" => HookEvent::PostToolCall,
            "transform_tool_result" => HookEvent::TransformToolResult,
            other => {
                return Err(Error::invalid(format!(
                    "unknown hook event '{other}' (pre_tool_call, post_tool_call, transform_tool_result)"
                )));
            }
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolCall => "pre_tool_call",
            HookEvent::PostToolCall => "post_tool_call",
            HookEvent::TransformToolResult => "transform_tool_result",
        }
    }
}

/// A registered host hook.
#[derive(Clone)]
pub struct Hook {
    pub id: u64,
    pub func: HookFn,
    pub data: Arc<HostData>,
}

/// Hooks by event, in registration order.
#[derive(Default, Clone)]
pub struct Hooks {
    pub pre: Vec<Hook>,
    pub post: Vec<Hook>,
    pub transform: Vec<Hook>,
}

impl Hooks {
    pub fn is_empty(&self) -> bool {
        self.pre.is_empty() && self.post.is_empty() && self.transform.is_empty()
    }
}

/// The host's handler for agent-loop tools (specs with `"agent_loop": true`).
#[derive(Clone)]
pub struct Interceptor {
    pub func: HandlerFn,
    pub data: Arc<HostData>,
}

/// An immutable view for the dispatch hot path, swapped on every change.
#[derive(Default)]
pub struct Snapshot {
    pub interceptor: Option<Interceptor>,
    pub tools: HashMap<
        String,
        Arc<ToolEntry>,
        std::hash::BuildHasherDefault<crate::availability::KeyHasher>,
    >,
    /// The same tools sorted by name (definitions order).
    pub sorted: Vec<Arc<ToolEntry>>,
    pub hooks: Option<Arc<Hooks>>,
    pub generation: u64,
}

/// Host handler for library events (process notifications, watch matches, output).
pub struct EventSink {
    pub func: unsafe extern "C" fn(*mut c_void, *const u8, usize),
    pub data: Arc<HostData>,
}

#[repr(align(128))]
#[derive(Default)]
struct Stripe(AtomicIsize);

const STRIPES: usize = 16;
static NEXT_STRIPE: AtomicU64 = AtomicU64::new(0);
thread_local! {
    static MY_STRIPE: usize = (NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) as usize) % STRIPES;
}

static NEXT_RUNTIME_ID: AtomicU64 = AtomicU64::new(1);

/// Everything a runtime owns. Shared by the handle, flows and library threads.
pub struct Shared {
    pub id: u64,
    pub config: Config,
    pub registry: Mutex<Registry>,
    pub snapshot: ArcSwap<Snapshot>,
    hooks: Mutex<Hooks>,
    interceptor: Mutex<Option<Interceptor>>,
    next_hook_id: AtomicU64,
    pub availability: Arc<Availability>,
    pub defs_cache: Mutex<DefsCache>,
    pub callbacks: Arc<CallbackThread>,
    pub timer: Timer,
    pub closed: AtomicBool,
    active: [Stripe; STRIPES],
    pub flows: Mutex<HashMap<u64, Arc<FlowCtl>>>,
    pub events: RwLock<Option<Arc<EventSink>>>,
    pub lifecycles: Mutex<Vec<Arc<dyn Lifecycle>>>,
    pub approval_engine: Arc<approval::Engine>,
    pub policy: Arc<approval::Policy>,
    pub approvals: crate::approval_host::Approvals,
}

/// Marks a dispatch in flight; the runtime waits for all of them on close.
pub struct ActiveGuard<'a> {
    shared: &'a Shared,
    stripe: usize,
}

impl Drop for ActiveGuard<'_> {
    fn drop(&mut self) {
        self.shared.active[self.stripe]
            .0
            .fetch_sub(1, Ordering::AcqRel);
    }
}

/// An owned version of [`ActiveGuard`] for flows that outlive the call.
pub struct OwnedActive {
    shared: Arc<Shared>,
    stripe: usize,
}

impl Drop for OwnedActive {
    fn drop(&mut self) {
        self.shared.active[self.stripe]
            .0
            .fetch_sub(1, Ordering::AcqRel);
    }
}

impl Shared {
    pub fn enter(&self) -> Result<ActiveGuard<'_>> {
        let stripe = MY_STRIPE.with(|s| *s);
        self.active[stripe].0.fetch_add(1, Ordering::AcqRel);
        let guard = ActiveGuard {
            shared: self,
            stripe,
        };
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::closed());
        }
        Ok(guard)
    }

    pub fn enter_owned(self: &Arc<Self>) -> Result<OwnedActive> {
        let stripe = MY_STRIPE.with(|s| *s);
        self.active[stripe].0.fetch_add(1, Ordering::AcqRel);
        let guard = OwnedActive {
            shared: self.clone(),
            stripe,
        };
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::closed());
        }
        Ok(guard)
    }

    fn active_count(&self) -> isize {
        self.active
            .iter()
            .map(|s| s.0.load(Ordering::Acquire))
            .sum()
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Publish a new snapshot after a registry or hook change (caller holds the registry lock).
    fn publish(&self, reg: &Registry) {
        let hooks = self.hooks.lock().clone();
        let snap = Snapshot {
            interceptor: self.interceptor.lock().clone(),
            tools: reg
                .tools
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            sorted: reg.tools.values().cloned().collect(),
            generation: reg.generation,
            hooks: if hooks.is_empty() {
                None
            } else {
                Some(Arc::new(hooks))
            },
        };
        self.snapshot.store(Arc::new(snap));
    }

    /// Register a native tool (built-in toolsets call this from `tools::install`).
    pub fn register_native_tool(&self, spec_json: &str, tool: Arc<dyn NativeTool>) -> Result<()> {
        let spec = registry::parse_spec(spec_json)?;
        let override_ = spec.override_;
        let entry = registry::build_entry(spec, Handler::Native(tool), None)?;
        self.insert_entry(entry, override_)
    }

    fn insert_entry(&self, entry: ToolEntry, override_: bool) -> Result<()> {
        let name = entry.name.clone();
        let old = {
            let mut reg = self.registry.lock();
            let old = reg.insert(entry, override_)?;
            self.publish(&reg);
            old
        };
        tracing::debug!(tool = %name, replaced = old.is_some(), "tool registered");
        drop(old); // outside the lock: may queue a free function
        Ok(())
    }

    /// Send an event (JSON object) to the host's event handler, on the callback thread.
    pub fn emit_event(&self, event: serde_json::Value) {
        let sink = self.events.read().clone();
        if let Some(sink) = sink {
            let text = event.to_string();
            self.callbacks.post(Box::new(move || unsafe {
                (sink.func)(sink.data.user_data, text.as_ptr(), text.len())
            }));
        }
    }
}

/// The runtime handle of the Rust API (the C API wraps the same thing).
pub struct Runtime {
    pub(crate) shared: Arc<Shared>,
}

impl Runtime {
    pub fn new(config_json: &str) -> Result<Runtime> {
        let config = Config::parse(config_json)?;
        if let Some(level) = &config.log_level {
            crate::logging::set_level(level);
        }
        let engine = approval::Engine::from_config(&config.approvals.engine_config())
            .map_err(|e| Error::invalid(format!("runtime config: approvals: {e}")))?;
        let policy = approval::Policy::new(config.approvals.clone())
            .map_err(|e| Error::invalid(format!("runtime config: approvals: {e}")))?;
        let callbacks = Arc::new(CallbackThread::start("ht-callbacks"));
        let shared = Arc::new(Shared {
            id: NEXT_RUNTIME_ID.fetch_add(1, Ordering::Relaxed),
            availability: Availability::new(&config.availability),
            config,
            registry: Mutex::new(Registry::default()),
            snapshot: ArcSwap::from_pointee(Snapshot::default()),
            hooks: Mutex::new(Hooks::default()),
            interceptor: Mutex::new(None),
            next_hook_id: AtomicU64::new(1),
            defs_cache: Mutex::new(DefsCache::default()),
            callbacks,
            timer: Timer::start("ht-timer"),
            closed: AtomicBool::new(false),
            active: Default::default(),
            flows: Mutex::new(HashMap::new()),
            events: RwLock::new(None),
            lifecycles: Mutex::new(Vec::new()),
            approval_engine: Arc::new(engine),
            policy: Arc::new(policy),
            approvals: Default::default(),
        });
        let rt = Runtime { shared };
        if let Err(e) = crate::tools::install(&rt.shared) {
            rt.close();
            return Err(e);
        }
        tracing::debug!(runtime = rt.shared.id, "runtime created");
        Ok(rt)
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Register a host tool. On error nothing changes and `user_data` stays
    /// the caller's (its free function is never called).
    pub fn register_host_tool(
        &self,
        spec_json: &str,
        handler: HandlerFn,
        check: Option<CheckFn>,
        user_data: *mut c_void,
        free: Option<FreeFn>,
    ) -> Result<()> {
        let _g = self.shared.enter()?;
        let spec = registry::parse_spec(spec_json)?;
        let data = HostData::new(user_data, free, self.shared.callbacks.clone());
        let check = check.map(|func| Check {
            func,
            data: data.clone(),
        });
        let override_ = spec.override_;
        let entry = registry::build_entry(
            spec,
            Handler::Host {
                func: handler,
                data: data.clone(),
            },
            check,
        )?;
        self.insert_entry(entry, override_)?;
        data.arm();
        Ok(())
    }

    /// Register a native tool (built-in tools and Rust hosts).
    pub fn register_native_tool(&self, spec_json: &str, tool: Arc<dyn NativeTool>) -> Result<()> {
        self.shared.register_native_tool(spec_json, tool)
    }

    fn insert_entry(&self, entry: ToolEntry, override_: bool) -> Result<()> {
        self.shared.insert_entry(entry, override_)
    }

    pub fn deregister_tool(&self, name: &str) -> Result<()> {
        let _g = self.shared.enter()?;
        let old = {
            let mut reg = self.shared.registry.lock();
            let old = reg
                .remove(name)
                .ok_or_else(|| Error::not_found(format!("no tool named '{name}'")))?;
            self.shared.publish(&reg);
            old
        };
        tracing::debug!(tool = %name, "tool deregistered");
        drop(old);
        Ok(())
    }

    pub fn define_toolset(&self, json: &str) -> Result<()> {
        let _g = self.shared.enter()?;
        let def: ToolsetDef = crate::error::parse_json("toolset", json)?;
        let mut reg = self.shared.registry.lock();
        crate::toolsets::check_definition(&reg, &def)?;
        let name = def.name.clone();
        let previous = reg.toolsets.insert(name.clone(), def);
        if let Err(e) = crate::toolsets::resolve(&reg, &name) {
            match previous {
                Some(p) => reg.toolsets.insert(name, p),
                None => reg.toolsets.remove(&name),
            };
            return Err(e);
        }
        reg.generation += 1;
        self.shared.publish(&reg);
        Ok(())
    }

    pub fn alias_toolset(&self, alias: &str, target: &str) -> Result<()> {
        let _g = self.shared.enter()?;
        registry::check_name("alias", alias)?;
        let mut reg = self.shared.registry.lock();
        if crate::toolsets::alias_reaches(&reg, target, alias) {
            return Err(Error::invalid(format!(
                "toolset alias '{alias}' -> '{target}' would make an alias cycle"
            )));
        }
        if crate::toolsets::view(&reg, target).is_none() {
            return Err(Error::not_found(format!("unknown toolset '{target}'")));
        }
        let previous = reg.aliases.insert(alias.to_string(), target.to_string());
        if let Err(e) = crate::toolsets::resolve(&reg, alias) {
            match previous {
                Some(p) => reg.aliases.insert(alias.to_string(), p),
                None => reg.aliases.remove(alias),
            };
            return Err(e);
        }
        if let Some(p) = previous.filter(|p| p != target) {
            tracing::warn!(alias, from = %p, to = target, "toolset alias re-pointed");
        }
        reg.generation += 1;
        self.shared.publish(&reg);
        Ok(())
    }

    pub fn generation(&self) -> u64 {
        self.shared.registry.lock().generation
    }

    pub fn add_hook(
        &self,
        event: &str,
        func: HookFn,
        user_data: *mut c_void,
        free: Option<FreeFn>,
    ) -> Result<u64> {
        let _g = self.shared.enter()?;
        let ev = HookEvent::parse(event)?;
        let data = HostData::new(user_data, free, self.shared.callbacks.clone());
        let id = self.shared.next_hook_id.fetch_add(1, Ordering::Relaxed);
        let hook = Hook {
            id,
            func,
            data: data.clone(),
        };
        {
            let reg = self.shared.registry.lock();
            {
                let mut hooks = self.shared.hooks.lock();
                match ev {
                    HookEvent::PreToolCall => hooks.pre.push(hook),
                    HookEvent::PostToolCall => hooks.post.push(hook),
                    HookEvent::TransformToolResult => hooks.transform.push(hook),
                }
            }
            self.shared.publish(&reg);
        }
        data.arm();
        Ok(id)
    }

    /// Set (or with `None`, remove) the handler for agent-loop tools. Without
    /// one, their calls return "<name> must be handled by the agent loop".
    pub fn set_interceptor(
        &self,
        func: Option<HandlerFn>,
        user_data: *mut c_void,
        free: Option<FreeFn>,
    ) -> Result<()> {
        let _g = self.shared.enter()?;
        let new = func.map(|func| {
            let data = HostData::new(user_data, free, self.shared.callbacks.clone());
            data.arm();
            Interceptor { func, data }
        });
        let old = {
            let reg = self.shared.registry.lock();
            let old = std::mem::replace(&mut *self.shared.interceptor.lock(), new);
            self.shared.publish(&reg);
            old
        };
        drop(old);
        Ok(())
    }

    pub fn remove_hook(&self, id: u64) -> Result<()> {
        let _g = self.shared.enter()?;
        let removed;
        {
            let reg = self.shared.registry.lock();
            {
                let mut guard = self.shared.hooks.lock();
                let hooks = &mut *guard;
                let before = hooks.pre.len() + hooks.post.len() + hooks.transform.len();
                let mut taken = Vec::new();
                for list in [&mut hooks.pre, &mut hooks.post, &mut hooks.transform] {
                    list.retain(|h| {
                        if h.id == id {
                            taken.push(h.clone());
                            false
                        } else {
                            true
                        }
                    });
                }
                removed = (
                    before != hooks.pre.len() + hooks.post.len() + hooks.transform.len(),
                    taken,
                );
            }
            self.shared.publish(&reg);
        }
        if !removed.0 {
            return Err(Error::not_found(format!("no hook with id {id}")));
        }
        drop(removed);
        Ok(())
    }

    pub fn set_event_handler(
        &self,
        func: Option<unsafe extern "C" fn(*mut c_void, *const u8, usize)>,
        user_data: *mut c_void,
        free: Option<FreeFn>,
    ) -> Result<()> {
        let _g = self.shared.enter()?;
        let sink = func.map(|func| {
            let data = HostData::new(user_data, free, self.shared.callbacks.clone());
            data.arm();
            Arc::new(EventSink { func, data })
        });
        let old = std::mem::replace(&mut *self.shared.events.write(), sink);
        drop(old);
        Ok(())
    }

    /// Cancel an async dispatch by its call id.
    pub fn cancel(&self, call_id: u64) -> Result<()> {
        let ctl = self.shared.flows.lock().get(&call_id).cloned();
        match ctl {
            Some(ctl) => {
                ctl.cancel();
                Ok(())
            }
            None => Err(Error::not_found(format!(
                "no pending call with id {call_id}"
            ))),
        }
    }

    /// Drop a task's state in every built-in toolset (kills its processes).
    pub fn cleanup_task(&self, task_id: &str) {
        let lifecycles = self.shared.lifecycles.lock().clone();
        for l in lifecycles {
            l.cleanup_task(task_id);
        }
    }

    /// Close: reject new work, cancel pending calls (their completions run
    /// with Cancelled), stop built-in tools, run every free function, join the
    /// callback thread. Everything has happened when this returns (unless
    /// called from the callback thread itself, which cannot wait for itself).
    pub fn close(&self) {
        let s = &self.shared;
        if s.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let on_callback_thread = s.callbacks.is_current();
        let flows: Vec<Arc<FlowCtl>> = s.flows.lock().values().cloned().collect();
        for f in flows {
            f.cancel();
        }
        crate::pending::cancel_runtime(s.id);
        let lifecycles = std::mem::take(&mut *s.lifecycles.lock());
        for l in &lifecycles {
            l.shutdown();
        }
        drop(lifecycles);
        if !on_callback_thread {
            let mut waited = 0u32;
            while s.active_count() > 0 || s.availability.running() > 0 {
                crate::pending::cancel_runtime(s.id);
                std::thread::sleep(Duration::from_millis(1));
                waited += 1;
                if waited == 5000 {
                    tracing::warn!(
                        "runtime close is waiting for calls or availability checks still running in host code"
                    );
                }
            }
        }
        {
            let mut reg = s.registry.lock();
            let tools = std::mem::take(&mut reg.tools);
            *s.hooks.lock() = Hooks::default();
            let interceptor = s.interceptor.lock().take();
            drop(interceptor);
            s.publish(&reg);
            drop(reg);
            drop(tools);
        }
        *s.events.write() = None;
        *s.approvals.handler.write() = None;
        *s.approvals.reviewer.write() = None;
        s.defs_cache.lock().clear();
        s.timer.shutdown();
        s.callbacks.shutdown();
        tracing::debug!(runtime = s.id, "runtime closed");
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.close();
    }
}
