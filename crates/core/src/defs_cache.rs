//! The definitions cache: rendered definitions by query text, and the toolset
//! selections of queries by registry membership. A leaf the core owns (it
//! clears it at close) and the definitions module fills.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

/// Definitions text, shared without copying (the C ABI hands it out as is).
pub type Text = Arc<str>;

/// A resolved toolset selection: the names a query's toolsets select.
pub type Selection = Arc<HashSet<Arc<str>>>;

pub struct Cached {
    pub(crate) generation: u64,
    pub(crate) epoch: u64,
    pub(crate) valid_until: Instant,
    pub(crate) text: Text,
}

/// Definitions cache keyed by the exact query text, plus the toolset
/// selections of queries keyed by registry membership (a tool replaced in
/// place does not change which names a toolset selects).
#[derive(Default)]
pub struct DefsCache {
    pub(crate) map: HashMap<String, Cached>,
    pub(crate) selections: HashMap<String, (u64, Option<Selection>)>,
}

impl DefsCache {
    pub fn clear(&mut self) {
        self.map.clear();
        self.selections.clear();
    }
}
