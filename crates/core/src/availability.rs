//! Availability checks: host check callbacks cached with a TTL, with the
//! original's grace (a check that fails soon after succeeding still counts as
//! available, without caching the failure). Checks run off the asking thread
//! with a deadline, so a hung or crashing-slow check makes its tools
//! unavailable instead of hanging definitions. Each distinct check (function
//! + user_data) runs at most once per evaluation.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::config::AvailabilityConfig;
use crate::engine::Engine;

type Key = (usize, usize);

/// An availability check (a host callback, an environment probe).
pub trait Check: Send + Sync {
    /// Whether the tools using this check are available now. May block.
    fn check(&self) -> bool;
    /// Identity for the shared cache: two checks with the same key are one.
    fn key(&self) -> (usize, usize);
}

/// Keys are two pointers: a multiply-xor hash is plenty and much cheaper than SipHash.
#[derive(Default, Clone, Copy)]
pub struct KeyHasher(u64);
impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 =
                (self.0.rotate_left(5) ^ u64::from(*b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0.rotate_left(5) ^ n as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}
type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<KeyHasher>>;

#[derive(Default)]
struct Slot {
    cached: Option<(bool, Instant)>,
    last_good: Option<Instant>,
    in_flight: bool,
}

pub struct Availability {
    engine: Engine,
    slots: Mutex<FastMap<Key, Slot>>,
    epoch: AtomicU64,
    /// Check threads still running host code (they hold the check's user_data).
    running: std::sync::atomic::AtomicUsize,
    ttl: Duration,
    grace: Duration,
    timeout: Duration,
}

/// Results of one evaluation.
pub struct Verdicts {
    /// One answer per check passed to `evaluate`, in the same order.
    pub values: Vec<bool>,
    /// When the first of these results stops being trusted.
    pub valid_until: Instant,
    /// Availability epoch the results belong to.
    pub epoch: u64,
}

impl Availability {
    pub fn new(cfg: &AvailabilityConfig, engine: Engine) -> Arc<Availability> {
        Arc::new(Availability {
            engine,
            slots: Mutex::new(FastMap::default()),
            epoch: AtomicU64::new(1),
            running: std::sync::atomic::AtomicUsize::new(0),
            ttl: Duration::from_secs_f64(cfg.ttl.max(0.0)),
            grace: Duration::from_secs_f64(cfg.failure_grace.max(0.0)),
            timeout: Duration::from_millis(cfg.check_timeout_ms),
        })
    }

    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Checks still running on library threads (close waits for them).
    pub fn running(&self) -> usize {
        self.running.load(Ordering::Acquire)
    }

    /// Forget every cached result (the next definitions call probes again).
    /// A check still running keeps its slot (and its in-flight mark), so a
    /// hung check is never started a second time.
    pub fn invalidate(&self) {
        self.slots.lock().retain(|_, slot| {
            slot.cached = None;
            slot.in_flight
        });
        self.epoch.fetch_add(1, Ordering::AcqRel);
    }

    /// Record a fresh result under the TTL and grace rules; returns the answer to use.
    fn record(
        &self,
        slots: &mut FastMap<Key, Slot>,
        key: Key,
        ok: bool,
        now: Instant,
    ) -> (bool, bool) {
        let slot = slots.entry(key).or_default();
        slot.in_flight = false;
        let before = slot.cached.map(|c| c.0);
        let (answer, cache) = if ok {
            slot.last_good = Some(now);
            (true, true)
        } else if slot
            .last_good
            .is_some_and(|g| now.duration_since(g) < self.grace)
        {
            tracing::warn!(
                "availability check failed within the grace period; still treating as available"
            );
            (true, false)
        } else {
            (false, true)
        };
        if cache {
            slot.cached = Some((answer, now));
        } else {
            slot.cached = None;
        }
        if before != Some(answer) {
            self.epoch.fetch_add(1, Ordering::AcqRel);
        }
        (answer, cache)
    }

    /// Evaluate `checks` (duplicates allowed; each distinct one runs at most once).
    pub fn evaluate(self: &Arc<Self>, checks: &[&Arc<dyn Check>]) -> Verdicts {
        // The epoch these results belong to is the one they started from: an
        // invalidation while checks run makes them stale, never current.
        let epoch = self.epoch();
        let now = Instant::now();
        let mut values: FastMap<Key, bool> = FastMap::default();
        values.reserve(checks.len());
        let mut valid_until = now + self.ttl;
        let mut to_run: Vec<(Key, Arc<dyn Check>)> = Vec::new();
        {
            let mut slots = self.slots.lock();
            for c in checks {
                let key = c.key();
                if values.contains_key(&key) || to_run.iter().any(|(k, _)| *k == key) {
                    continue;
                }
                let slot = slots.entry(key).or_default();
                match slot.cached {
                    Some((v, at)) if now.duration_since(at) < self.ttl => {
                        values.insert(key, v);
                        valid_until = valid_until.min(at + self.ttl);
                    }
                    _ if slot.in_flight => {
                        // Still running from an earlier call (slow or hung): not available now.
                        let v = slot
                            .last_good
                            .is_some_and(|g| now.duration_since(g) < self.grace);
                        values.insert(key, v);
                        valid_until = now;
                    }
                    _ => {
                        slot.in_flight = true;
                        to_run.push((key, (*c).clone()));
                    }
                }
            }
        }
        if !to_run.is_empty() {
            for (key, outcome) in self.run_checks(to_run) {
                match outcome {
                    Some((answer, cached)) => {
                        values.insert(key, answer);
                        if !cached {
                            valid_until = Instant::now();
                        }
                    }
                    None => {
                        tracing::warn!(
                            "availability check did not answer within {:?}; tool treated as unavailable",
                            self.timeout
                        );
                        values.insert(key, false);
                        valid_until = Instant::now();
                    }
                }
            }
        }
        Verdicts {
            values: checks
                .iter()
                .map(|c| values.get(&c.key()).copied().unwrap_or(false))
                .collect(),
            valid_until,
            epoch,
        }
    }

    /// Run checks; each records its own result in the cache (so a check that
    /// finishes after the deadline still counts next time). `None` for a check
    /// that did not finish in time.
    fn run_checks(
        self: &Arc<Self>,
        to_run: Vec<(Key, Arc<dyn Check>)>,
    ) -> Vec<(Key, Option<(bool, bool)>)> {
        if self.timeout.is_zero() {
            return to_run
                .into_iter()
                .map(|(k, c)| {
                    let ok = c.check();
                    let mut slots = self.slots.lock();
                    (k, Some(self.record(&mut slots, k, ok, Instant::now())))
                })
                .collect();
        }
        let deadline = Instant::now() + self.timeout;
        let (tx, rx) = mpsc::channel::<(Key, (bool, bool))>();
        let keys: Vec<Key> = to_run.iter().map(|(k, _)| *k).collect();
        for (key, check) in to_run {
            let tx = tx.clone();
            let me = self.clone();
            self.running.fetch_add(1, Ordering::AcqRel);
            self.engine.spawn_blocking(move || {
                let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check.check()))
                    .unwrap_or(false);
                // The user_data reference goes back before the thread counts
                // itself done, so close() sees every check finish first.
                drop(check);
                me.running.fetch_sub(1, Ordering::AcqRel);
                let outcome = {
                    let mut slots = me.slots.lock();
                    me.record(&mut slots, key, ok, Instant::now())
                };
                let _ = tx.send((key, outcome));
            });
        }
        drop(tx);
        let mut got: HashMap<Key, (bool, bool)> = HashMap::new();
        while got.len() < keys.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok((k, v)) => {
                    got.insert(k, v);
                }
                Err(_) => break,
            }
        }
        keys.into_iter()
            .map(|k| (k, got.get(&k).copied()))
            .collect()
    }
}
