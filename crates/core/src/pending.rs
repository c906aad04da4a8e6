//! Host requests in flight: every time the library waits for the host (a tool
//! call, a hook decision, an approval) it files an entry here and hands the
//! host an opaque handle that is the entry's id, never a raw pointer.
//!
//! Why ids and not boxes: a host that answers twice, answers after a timeout,
//! or answers after the runtime was freed must get a clear status, not a
//! use-after-free. A respond looks the id up; a missing id is `NotFound`.
//! The table is sharded so concurrent dispatches do not share a lock.

use parking_lot::{Condvar, Mutex};
use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What kind of object a handle names; accessors check it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Call,
    Hook,
    Approval,
}

/// How a wait ended.
#[derive(Debug)]
pub enum Answer {
    Responded { is_error: bool, text: String },
    TimedOut,
    Cancelled,
}

/// Who is waiting for the answer.
pub enum Waiter {
    /// A thread blocked in a synchronous call.
    Sync(Arc<SyncSlot>),
    /// A continuation, run on the responding thread (it must only queue work).
    Async(Box<dyn FnOnce(Answer) + Send>),
}

/// A one-shot slot a synchronous caller waits on.
#[derive(Default)]
pub struct SyncSlot {
    answer: Mutex<Option<Answer>>,
    ready: Condvar,
}

thread_local! {
    /// Slots of finished synchronous waits, reused by the next call on this thread.
    static SLOT_POOL: std::cell::RefCell<Vec<Arc<SyncSlot>>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl SyncSlot {
    /// A fresh (or recycled) empty slot.
    pub fn new() -> Arc<SyncSlot> {
        SLOT_POOL
            .with(|p| p.borrow_mut().pop())
            .unwrap_or_else(|| Arc::new(SyncSlot::default()))
    }

    /// Give a slot back once nobody else can still answer into it.
    pub fn recycle(slot: Arc<SyncSlot>) {
        if Arc::strong_count(&slot) == 1 && slot.answer.lock().is_none() {
            SLOT_POOL.with(|p| {
                let mut p = p.borrow_mut();
                if p.len() < 8 {
                    p.push(slot);
                }
            });
        }
    }
    fn put(&self, answer: Answer) {
        let mut slot = self.answer.lock();
        if slot.is_none() {
            *slot = Some(answer);
        }
        drop(slot);
        self.ready.notify_all();
    }
    /// Take the answer if it is there already (fast path: inline responders).
    pub fn try_take(&self) -> Option<Answer> {
        self.answer.lock().take()
    }
    /// Wait until answered or `deadline`; `None` on timeout.
    pub fn wait(&self, deadline: Option<Instant>) -> Option<Answer> {
        let mut slot = self.answer.lock();
        loop {
            if let Some(a) = slot.take() {
                return Some(a);
            }
            match deadline {
                Some(d) => {
                    if self.ready.wait_until(&mut slot, d).timed_out() {
                        return slot.take();
                    }
                }
                None => self.ready.wait(&mut slot),
            }
        }
    }
}

impl Waiter {
    pub fn deliver(self, answer: Answer) {
        match self {
            Waiter::Sync(slot) => slot.put(answer),
            Waiter::Async(k) => k(answer),
        }
    }
}

struct Entry {
    kind: Kind,
    runtime_id: u64,
    /// The JSON the host reads (arguments, hook event, approval request).
    payload: Arc<str>,
    /// Secondary text (call context); `None` reads as `{}`.
    extra: Option<Arc<str>>,
    /// The object's name (a tool name or an event name). Its own heap block,
    /// so borrowed pointers survive the shard's table growing.
    name: Arc<str>,
    waiter: Option<Waiter>,
    /// When an unanswered request nobody waits on is abandoned (observe hooks).
    expires: Option<Instant>,
    /// Run once when the wait ends without an answer (timeout, cancellation,
    /// runtime free); dropped unrun when the host answers.
    on_abandon: Vec<OnAbandon>,
}

/// A host's cancellation callback: called at most once, when the wait ends
/// unanswered; dropped without being called when the request is answered.
pub type OnAbandon = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct IdHasher(u64);
impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("ids hash as u64")
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

const SHARDS: usize = 64;
type Shard = Mutex<HashMap<u64, Entry, BuildHasherDefault<IdHasher>>>;

/// A shard on cache lines of its own: a `Mutex<HashMap>` is about 40 bytes,
/// so unpadded, the shards of two threads' consecutive id blocks shared a
/// line and every dispatch of one thread invalidated the other's (two
/// threads gave 1.40x one thread through the C ABI; issue 36). 128 bytes:
/// the adjacent-line prefetcher pairs 64-byte lines on x86.
#[repr(align(128))]
struct Padded(Shard);

impl std::ops::Deref for Padded {
    type Target = Shard;
    fn deref(&self) -> &Shard {
        &self.0
    }
}

static TABLE: once_cell::sync::Lazy<Vec<Padded>> = once_cell::sync::Lazy::new(|| {
    (0..SHARDS)
        .map(|_| Padded(Mutex::new(HashMap::default())))
        .collect()
});

/// A thread's ids share one block, hence one shard: no lock line is shared
/// between threads dispatching at the same time.
fn shard(id: u64) -> &'static Shard {
    &TABLE[((id / BLOCK) as usize) % SHARDS].0
}

/// Ids come in per-thread blocks so threads do not contend on one counter.
static NEXT_BLOCK: AtomicU64 = AtomicU64::new(1);
const BLOCK: u64 = 4096;
thread_local! {
    static NEXT_ID: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// A process-unique id, never 0, never below 4096 (so it never looks like NULL).
pub fn next_id() -> u64 {
    NEXT_ID.with(|c| {
        let (mut next, mut end) = c.get();
        if next == end {
            let block = NEXT_BLOCK.fetch_add(1, Ordering::Relaxed);
            next = block * BLOCK;
            end = next + BLOCK;
        }
        c.set((next + 1, end));
        next
    })
}

/// File a request; the returned id is the host's handle.
pub fn insert(
    kind: Kind,
    runtime_id: u64,
    name: &str,
    payload: Arc<str>,
    extra: Option<Arc<str>>,
    waiter: Waiter,
) -> u64 {
    insert_entry(kind, runtime_id, name, payload, extra, waiter, None)
}

/// File a request nobody waits on (an observe-only hook): if the host has not
/// answered by `expires`, it is abandoned like a timed-out wait (swept
/// lazily, as the table grows), so a host that never answers costs bounded
/// memory.
pub fn insert_expiring(
    kind: Kind,
    runtime_id: u64,
    name: &str,
    payload: Arc<str>,
    waiter: Waiter,
    expires: Instant,
) -> u64 {
    insert_entry(kind, runtime_id, name, payload, None, waiter, Some(expires))
}

fn insert_entry(
    kind: Kind,
    runtime_id: u64,
    name: &str,
    payload: Arc<str>,
    extra: Option<Arc<str>>,
    waiter: Waiter,
    expires: Option<Instant>,
) -> u64 {
    let id = next_id();
    let entry = Entry {
        kind,
        runtime_id,
        payload,
        extra,
        name: name.into(),
        waiter: Some(waiter),
        expires,
        on_abandon: Vec::new(),
    };
    let sweep = {
        let mut guard = shard(id).lock();
        guard.insert(id, entry);
        guard.len().is_multiple_of(SWEEP_EVERY)
    };
    if sweep {
        sweep_expired(shard(id));
    }
    id
}

/// A shard is swept for expired entries each time it reaches a multiple of this size.
const SWEEP_EVERY: usize = 256;

fn sweep_expired(s: &Shard) {
    let now = Instant::now();
    let expired: Vec<u64> = s
        .lock()
        .iter()
        .filter(|(_, e)| e.expires.is_some_and(|x| x <= now))
        .map(|(id, _)| *id)
        .collect();
    for id in expired {
        abandon(id, Answer::TimedOut);
    }
}

/// Which text of an entry an accessor wants.
#[derive(Clone, Copy)]
pub enum Field {
    Payload,
    Extra,
    Name,
}

/// Borrow a text of a live entry. The pointer stays valid until the entry is
/// answered (the entry's texts never move while it is in the table, and an
/// abandoned entry's texts move to the late store by `Arc`, not by copy).
pub fn borrow(id: u64, kind: Kind, field: Field) -> Option<(*const u8, usize)> {
    fn pick(
        k: Kind,
        kind: Kind,
        payload: &Arc<str>,
        extra: &Option<Arc<str>>,
        name: &Arc<str>,
        field: Field,
    ) -> Option<(*const u8, usize)> {
        if k != kind {
            return None;
        }
        let s: &str = match field {
            Field::Payload => payload,
            Field::Extra => extra.as_deref().unwrap_or("{}"),
            Field::Name => name,
        };
        Some((s.as_ptr(), s.len()))
    }
    {
        let guard = shard(id).lock();
        if let Some(e) = guard.get(&id) {
            return pick(e.kind, kind, &e.payload, &e.extra, &e.name, field);
        }
    }
    let late = LATE.lock();
    let e = late.map.get(&id)?;
    pick(e.kind, kind, &e.payload, &e.extra, &e.name, field)
}

/// Outcome of a host's respond.
#[derive(Debug, PartialEq, Eq)]
pub enum RespondOutcome {
    /// Delivered to a waiter.
    Delivered,
    /// The wait had already ended by a timeout: the answer is dropped, harmlessly.
    Late,
    /// The wait had already ended by a cancellation (`cancel`, runtime free):
    /// the answer is dropped, harmlessly.
    LateCancelled,
    /// No such live handle: answered before, freed with its runtime, or never issued.
    Unknown,
    /// The handle is of another kind (e.g. an ht_hook passed to ht_call_respond).
    WrongKind,
}

/// Answer a request: removes the entry, then wakes the waiter outside the lock.
pub fn respond(id: u64, kind: Kind, answer: Answer) -> RespondOutcome {
    let entry = {
        let mut guard = shard(id).lock();
        match guard.get(&id) {
            None => None,
            Some(e) if e.kind != kind => return RespondOutcome::WrongKind,
            Some(_) => {
                let e = guard.remove(&id).expect("present");
                shrink(&mut guard);
                Some(e)
            }
        }
    };
    let Some(entry) = entry else {
        // Not waiting any more: an abandoned request answered late, or unknown.
        let mut late = LATE.lock();
        return match late.map.get(&id) {
            Some(e) if e.kind != kind => RespondOutcome::WrongKind,
            Some(_) => {
                let e = late.map.remove(&id).expect("present");
                late.shrink();
                if e.cancelled {
                    RespondOutcome::LateCancelled
                } else {
                    RespondOutcome::Late
                }
            }
            None => RespondOutcome::Unknown,
        };
    };
    match entry.waiter {
        Some(w) => {
            w.deliver(answer);
            RespondOutcome::Delivered
        }
        None => RespondOutcome::Late,
    }
}

/// A hash map that emptied out gives its memory back (a burst of calls must
/// not pin the table at its peak size).
fn shrink<V>(map: &mut HashMap<u64, V, BuildHasherDefault<IdHasher>>) {
    if map.capacity() > 64 && map.len() * 4 < map.capacity() {
        map.shrink_to(map.len() * 2);
    }
}

/// How long the texts of a request stay readable after its wait ended
/// unanswered (timeout, cancellation, runtime free): the host's handler may
/// still be reading them. Then the request is forgotten (a respond gives
/// `Unknown`).
pub const LATE_GRACE: Duration = Duration::from_secs(60);
/// At most this many abandoned requests are remembered process-wide; beyond
/// it the oldest are forgotten first.
pub const MAX_LATE: usize = 65_536;

/// An abandoned request: only what the host can still read or answer.
struct LateEntry {
    kind: Kind,
    /// The wait ended by a cancellation (not a timeout).
    cancelled: bool,
    payload: Arc<str>,
    extra: Option<Arc<str>>,
    name: Arc<str>,
}

/// Abandoned requests, off the hot table: a host that never answers a
/// timed-out call costs a bounded amount of memory for a bounded time.
#[derive(Default)]
struct LateStore {
    map: HashMap<u64, LateEntry, BuildHasherDefault<IdHasher>>,
    /// Ids in the order they were abandoned, with when they expire.
    order: VecDeque<(Instant, u64)>,
}

impl LateStore {
    fn add(&mut self, id: u64, e: Entry, cancelled: bool, now: Instant) {
        self.expire(now);
        while self.map.len() >= MAX_LATE {
            match self.order.pop_front() {
                Some((_, old)) => {
                    self.map.remove(&old);
                }
                None => break,
            }
        }
        self.map.insert(
            id,
            LateEntry {
                kind: e.kind,
                cancelled,
                payload: e.payload,
                extra: e.extra,
                name: e.name,
            },
        );
        self.order.push_back((now + LATE_GRACE, id));
    }
    fn expire(&mut self, now: Instant) {
        // The front is the oldest; ids answered since are stale and skipped.
        while let Some(&(at, id)) = self.order.front() {
            let live = self.map.contains_key(&id);
            if live && at > now {
                break;
            }
            self.order.pop_front();
            if live {
                self.map.remove(&id);
            }
        }
        // Stale ids behind a live front: compact now and then.
        if self.order.len() > 4 * MAX_LATE {
            let map = &self.map;
            self.order.retain(|(_, id)| map.contains_key(id));
        }
        self.shrink();
    }
    fn shrink(&mut self) {
        shrink(&mut self.map);
        if self.order.capacity() > 64 && self.order.len() * 4 < self.order.capacity() {
            self.order.shrink_to(self.order.len() * 2);
        }
    }
}

static LATE: once_cell::sync::Lazy<Mutex<LateStore>> =
    once_cell::sync::Lazy::new(|| Mutex::new(LateStore::default()));

/// End a wait without an answer (timeout, cancellation). The entry leaves the
/// table for the late store, so the host's later respond is recognised and
/// its borrowed texts stay valid (for [`LATE_GRACE`]).
/// Returns false when the answer already arrived.
pub fn abandon(id: u64, answer: Answer) -> bool {
    let cancelled = matches!(answer, Answer::Cancelled);
    let (waiter, callbacks) = {
        let mut guard = shard(id).lock();
        let Some(mut entry) = guard.remove(&id) else {
            return false;
        };
        shrink(&mut guard);
        let waiter = entry.waiter.take();
        let callbacks = std::mem::take(&mut entry.on_abandon);
        // Moved while the shard is still locked: a respond or an accessor
        // finds the request in one place or the other, never in neither.
        // (Lock order: shard, then the late store.)
        LATE.lock().add(id, entry, cancelled, Instant::now());
        (waiter, callbacks)
    };
    // Host code, outside every lock.
    for f in callbacks {
        f();
    }
    match waiter {
        Some(w) => {
            w.deliver(answer);
            true
        }
        None => false,
    }
}

/// Runtime shutdown: every wait of this runtime ends with `Cancelled`. Its
/// entries move to the late store: a handler still holding a request may
/// read its texts and answer (harmlessly, `Late`) after the runtime is gone.
pub fn cancel_runtime(runtime_id: u64) -> usize {
    let mut waiters = Vec::new();
    let mut callbacks = Vec::new();
    let now = Instant::now();
    for s in TABLE.iter() {
        let mut guard = s.lock();
        let ids: Vec<u64> = guard
            .iter()
            .filter(|(_, e)| e.runtime_id == runtime_id)
            .map(|(id, _)| *id)
            .collect();
        if ids.is_empty() {
            continue;
        }
        let mut late = LATE.lock();
        for id in ids {
            if let Some(mut e) = guard.remove(&id) {
                if let Some(w) = e.waiter.take() {
                    waiters.push(w);
                }
                callbacks.append(&mut e.on_abandon);
                late.add(id, e, true, now);
            }
        }
        drop(late);
        shrink(&mut guard);
    }
    let n = waiters.len();
    // Host code, outside every lock.
    for f in callbacks {
        f();
    }
    for w in waiters {
        w.deliver(Answer::Cancelled);
    }
    n
}

/// Where a request stands, for a handler asking whether to keep working.
#[derive(Debug, PartialEq, Eq)]
pub enum State {
    /// Waiting for its answer.
    Waiting,
    /// The wait ended without an answer (timeout, cancellation, runtime free).
    Abandoned,
    /// Answered, forgotten after [`LATE_GRACE`], or never issued.
    Unknown,
    /// The handle is of another kind.
    WrongKind,
}

/// Where request `id` stands.
pub fn state(id: u64, kind: Kind) -> State {
    {
        let guard = shard(id).lock();
        if let Some(e) = guard.get(&id) {
            return if e.kind == kind {
                State::Waiting
            } else {
                State::WrongKind
            };
        }
    }
    match LATE.lock().map.get(&id) {
        Some(e) if e.kind == kind => State::Abandoned,
        Some(_) => State::WrongKind,
        None => State::Unknown,
    }
}

/// Run `f` once when the wait of request `id` ends without an answer. A
/// request still waiting keeps `f` (dropped unrun if it is answered); for one
/// already abandoned `f` is given back to run now; otherwise `f` is given
/// back with the request's state and must not run.
pub fn on_abandon(id: u64, kind: Kind, f: OnAbandon) -> Result<(), (State, OnAbandon)> {
    {
        let mut guard = shard(id).lock();
        if let Some(e) = guard.get_mut(&id) {
            if e.kind != kind {
                return Err((State::WrongKind, f));
            }
            e.on_abandon.push(f);
            return Ok(());
        }
    }
    // Not in the table: `state` looks at the late store (an abandon moves the
    // entry there under the shard lock, so it is in one place or the other).
    Err((state(id, kind), f))
}

/// A waiting request's runtime, name and secondary text (for a call: its
/// context), or `None` when `id` is not a waiting request of `kind`.
pub fn live_info(id: u64, kind: Kind) -> Option<(u64, Arc<str>, Option<Arc<str>>)> {
    let guard = shard(id).lock();
    let e = guard.get(&id).filter(|e| e.kind == kind)?;
    Some((e.runtime_id, e.name.clone(), e.extra.clone()))
}

/// Abandoned requests still remembered, process-wide (tests, diagnostics).
pub fn late_count() -> usize {
    LATE.lock().map.len()
}

/// Number of live entries of a runtime (for tests and diagnostics).
pub fn live_count(runtime_id: u64) -> usize {
    TABLE
        .iter()
        .map(|s| {
            s.lock()
                .values()
                .filter(|e| e.runtime_id == runtime_id)
                .count()
        })
        .sum()
}
