//! [`Core`]: the registry, hooks, availability, definitions cache and the
//! in-flight bookkeeping that dispatch needs, with nothing of the C ABI, the
//! terminal or the approval broker in it. The runtime crate assembles a
//! `Core` with providers and services; front ends reach it through the runtime.
//!
//! Dispatch reads an immutable [`Snapshot`] (swapped atomically). Changes do
//! not rebuild it: they bump a version, and the first reader after a change
//! publishes a new snapshot by cloning persistent maps (O(1)), so
//! registering many tools costs O(log n) each and never O(n).

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::availability::Availability;
use crate::config::{AvailabilityConfig, DispatchConfig, LimitsConfig};
use crate::defs_cache::DefsCache;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::flow::FlowCtl;
use crate::hooks::{Hook, HookEntry, HookEvent, Hooks};
use crate::registry::{Registry, ToolEntry, ToolMap, ToolsetDef};
use crate::threads::CallbackThread;
use crate::tool::Tool;

/// An immutable view for the dispatch hot path.
#[derive(Default)]
pub struct Snapshot {
    pub interceptor: Option<Arc<dyn Tool>>,
    pub tools: ToolMap,
    pub hooks: Option<Arc<Hooks>>,
    /// Registry generation (definitions are cached on it).
    pub generation: u64,
    /// Registry membership counter (toolset selections are cached on it).
    pub membership: u64,
    /// Registry structure counter (toolset definitions and aliases).
    pub structure: u64,
    /// Bumped by every change (tools, hooks, interceptor).
    version: u64,
}

#[repr(align(128))]
#[derive(Default)]
struct Stripe(AtomicIsize);

const STRIPES: usize = 16;
static NEXT_STRIPE: AtomicU64 = AtomicU64::new(0);
thread_local! {
    static MY_STRIPE: usize = (NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) as usize) % STRIPES;
}

static NEXT_CORE_ID: AtomicU64 = AtomicU64::new(1);

/// The core of one runtime.
pub struct Core {
    pub id: u64,
    pub dispatch_config: DispatchConfig,
    pub limits: LimitsConfig,
    registry: Mutex<Registry>,
    snapshot: ArcSwap<Snapshot>,
    version: AtomicU64,
    hooks: Mutex<Hooks>,
    interceptor: Mutex<Option<Arc<dyn Tool>>>,
    next_hook_id: AtomicU64,
    pub availability: Arc<Availability>,
    pub(crate) defs_cache: Mutex<DefsCache>,
    pub callbacks: Arc<CallbackThread>,
    pub engine: Engine,
    closed: AtomicBool,
    active: [Stripe; STRIPES],
    /// Woken when the last call in flight leaves after close started.
    idle: (Mutex<()>, Condvar),
    pub(crate) flows: Mutex<HashMap<u64, Arc<FlowCtl>>>,
}

/// Marks a dispatch in flight; close waits for all of them.
pub struct ActiveGuard<'a> {
    core: &'a Core,
    stripe: usize,
}

impl Drop for ActiveGuard<'_> {
    fn drop(&mut self) {
        self.core.leave(self.stripe);
    }
}

/// An owned version of [`ActiveGuard`] for flows that outlive the call.
pub struct OwnedActive {
    core: Arc<Core>,
    stripe: usize,
}

impl Drop for OwnedActive {
    fn drop(&mut self) {
        self.core.leave(self.stripe);
    }
}

impl Core {
    pub fn new(
        dispatch: DispatchConfig,
        availability: &AvailabilityConfig,
        limits: LimitsConfig,
    ) -> Result<Arc<Core>> {
        let callbacks = Arc::new(CallbackThread::start("ht-callbacks")?);
        let engine = Engine::new(2);
        Ok(Arc::new(Core {
            id: NEXT_CORE_ID.fetch_add(1, Ordering::Relaxed),
            availability: Availability::new(availability, engine.clone()),
            dispatch_config: dispatch,
            limits,
            registry: Mutex::new(Registry::default()),
            snapshot: ArcSwap::from_pointee(Snapshot::default()),
            version: AtomicU64::new(0),
            hooks: Mutex::new(Hooks::default()),
            interceptor: Mutex::new(None),
            next_hook_id: AtomicU64::new(1),
            defs_cache: Mutex::new(DefsCache::default()),
            callbacks,
            engine,
            closed: AtomicBool::new(false),
            active: Default::default(),
            idle: (Mutex::new(()), Condvar::new()),
            flows: Mutex::new(HashMap::new()),
        }))
    }

    pub fn enter(&self) -> Result<ActiveGuard<'_>> {
        let stripe = MY_STRIPE.with(|s| *s);
        self.active[stripe].0.fetch_add(1, Ordering::AcqRel);
        let guard = ActiveGuard { core: self, stripe };
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::closed());
        }
        Ok(guard)
    }

    pub fn enter_owned(self: &Arc<Self>) -> Result<OwnedActive> {
        let stripe = MY_STRIPE.with(|s| *s);
        self.active[stripe].0.fetch_add(1, Ordering::AcqRel);
        let guard = OwnedActive {
            core: self.clone(),
            stripe,
        };
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::closed());
        }
        Ok(guard)
    }

    fn leave(&self, stripe: usize) {
        self.active[stripe].0.fetch_sub(1, Ordering::AcqRel);
        if self.closed.load(Ordering::Acquire) {
            let _g = self.idle.0.lock();
            self.idle.1.notify_all();
        }
    }

    pub(crate) fn active_count(&self) -> isize {
        self.active
            .iter()
            .map(|s| s.0.load(Ordering::Acquire))
            .sum()
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The current snapshot, published first if something changed since the last one.
    pub fn snapshot(&self) -> arc_swap::Guard<Arc<Snapshot>> {
        let snap = self.snapshot.load();
        if snap.version == self.version.load(Ordering::Acquire) {
            return snap;
        }
        drop(snap);
        let reg = self.registry.lock();
        self.publish_locked(&reg);
        drop(reg);
        self.snapshot.load()
    }

    /// The current snapshot as an owned `Arc`.
    pub fn snapshot_full(&self) -> Arc<Snapshot> {
        let _ = self.snapshot();
        self.snapshot.load_full()
    }

    fn publish_locked(&self, reg: &Registry) {
        let version = self.version.load(Ordering::Acquire);
        if self.snapshot.load().version == version {
            return;
        }
        let hooks = self.hooks.lock().clone();
        let snap = Snapshot {
            interceptor: self.interceptor.lock().clone(),
            tools: reg.tools.clone(),
            generation: reg.generation,
            membership: reg.membership,
            structure: reg.structure,
            hooks: if hooks.is_empty() {
                None
            } else {
                Some(Arc::new(hooks))
            },
            version,
        };
        self.snapshot.store(Arc::new(snap));
    }

    /// Publish now: a removed or replaced tool must not stay alive in the
    /// last snapshot (its host data would not be freed until the next read).
    fn republish(&self) {
        let reg = self.registry.lock();
        self.publish_locked(&reg);
    }

    /// Record a change (caller holds the registry lock): readers republish lazily.
    fn changed(&self) {
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// Run `f` on the registry under its lock, then mark the change.
    pub fn with_registry<T>(&self, f: impl FnOnce(&mut Registry) -> Result<T>) -> Result<T> {
        let mut reg = self.registry.lock();
        let out = f(&mut reg);
        if out.is_ok() {
            self.changed();
        }
        out
    }

    /// Read the registry under its lock.
    pub fn read_registry<T>(&self, f: impl FnOnce(&Registry) -> T) -> T {
        f(&self.registry.lock())
    }

    /// Register one tool under the collision rules.
    pub fn register(&self, entry: ToolEntry, override_: bool) -> Result<()> {
        let name = entry.name.clone();
        let old = self.with_registry(|reg| reg.insert(entry, override_))?;
        tracing::debug!(tool = %name, replaced = old.is_some(), "tool registered");
        if old.is_some() {
            self.republish();
        }
        drop(old); // outside the lock: may queue a free function
        Ok(())
    }

    /// Register many tools at once: all or nothing.
    pub fn register_many<E: Into<Arc<ToolEntry>>>(
        &self,
        entries: Vec<E>,
        override_: bool,
    ) -> Result<usize> {
        // No copy when they come as Arcs already (bulk registration).
        let entries: Vec<Arc<ToolEntry>> = entries.into_iter().map(Into::into).collect();
        let n = entries.len();
        let old = self.with_registry(|reg| reg.insert_many(entries, override_))?;
        tracing::debug!(tools = n, "tools registered in bulk");
        if !old.is_empty() {
            self.republish();
        }
        drop(old);
        Ok(n)
    }

    pub fn deregister(&self, name: &str) -> Result<()> {
        let old = self.with_registry(|reg| {
            reg.remove(name)
                .ok_or_else(|| Error::not_found(format!("no tool named '{name}'")))
        })?;
        tracing::debug!(tool = %name, "tool deregistered");
        self.republish();
        drop(old);
        Ok(())
    }

    pub fn define_toolset(&self, def: ToolsetDef) -> Result<()> {
        self.with_registry(|reg| crate::toolsets::define(reg, def))
    }

    pub fn alias_toolset(&self, alias: &str, target: &str) -> Result<()> {
        self.with_registry(|reg| crate::toolsets::alias(reg, alias, target))
    }

    pub fn generation(&self) -> u64 {
        self.registry.lock().generation
    }

    pub fn add_hook(&self, event: HookEvent, hook: Arc<dyn Hook>) -> u64 {
        let id = self.next_hook_id.fetch_add(1, Ordering::Relaxed);
        let entry = HookEntry { id, hook };
        let _reg = self.registry.lock();
        self.hooks.lock().list_mut(event).push(entry);
        self.changed();
        id
    }

    pub fn remove_hook(&self, id: u64) -> Result<()> {
        let taken = {
            let _reg = self.registry.lock();
            let taken = self.hooks.lock().remove(id);
            self.changed();
            self.publish_locked(&_reg);
            taken
        };
        match taken {
            Some(t) => {
                drop(t);
                Ok(())
            }
            None => Err(Error::not_found(format!("no hook with id {id}"))),
        }
    }

    /// Set (or with `None`, remove) the handler of agent-loop tools.
    pub fn set_interceptor(&self, tool: Option<Arc<dyn Tool>>) {
        let old = {
            let _reg = self.registry.lock();
            let old = std::mem::replace(&mut *self.interceptor.lock(), tool);
            self.changed();
            self.publish_locked(&_reg);
            old
        };
        drop(old);
    }

    /// Cancel an async dispatch by its call id.
    pub fn cancel(&self, call_id: u64) -> Result<()> {
        let ctl = self.flows.lock().get(&call_id).cloned();
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

    /// First half of close: reject new work and cancel what is in flight.
    /// Returns false when close had already begun.
    pub fn begin_close(&self) -> bool {
        if self.closed.swap(true, Ordering::AcqRel) {
            return false;
        }
        let flows: Vec<Arc<FlowCtl>> = self.flows.lock().values().cloned().collect();
        for f in flows {
            f.cancel();
        }
        crate::pending::cancel_runtime(self.id);
        true
    }

    /// Wait (bounded by `limit`) until no call is in flight and no availability
    /// check runs host code. Woken by the last one to leave, not by polling.
    /// Returns false when the limit passed with work still in flight.
    pub fn wait_idle(&self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        let mut g = self.idle.0.lock();
        loop {
            crate::pending::cancel_runtime(self.id);
            if self.active_count() <= 0 && self.availability.running() == 0 {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            // Short waits: availability checks finishing do not signal `idle`.
            self.idle.1.wait_for(
                &mut g,
                Duration::from_millis(50).min(until - Instant::now()),
            );
        }
    }

    /// Calls in flight and availability checks running host code (close logs them).
    pub fn busy(&self) -> (isize, usize) {
        (self.active_count().max(0), self.availability.running())
    }

    /// Second half of close: drop every tool, hook and handler (their free
    /// functions run), stop the engine and the callbacks thread.
    pub fn finish_close(&self) {
        {
            let mut reg = self.registry.lock();
            let tools = std::mem::take(&mut *reg);
            let hooks = std::mem::take(&mut *self.hooks.lock());
            let interceptor = self.interceptor.lock().take();
            self.changed();
            self.publish_locked(&reg);
            drop(reg);
            drop(interceptor);
            drop(hooks);
            drop(tools);
        }
        self.defs_cache.lock().clear();
        self.engine.shutdown();
    }
}
