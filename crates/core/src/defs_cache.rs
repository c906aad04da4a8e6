//! The definitions cache: rendered definitions by query text, and the toolset
//! selections of queries by registry membership. A leaf the core owns (it
//! clears it at close) and the definitions module fills.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::sync::Arc;
use std::time::Instant;

use crate::registry::{Format, NameHasher, ToolEntry};

/// Definitions text, shared without copying. An `Arc<String>` rather than an
/// `Arc<str>`: the text is built once in its `String` and never copied again
/// (at 10 000 tools it is megabytes).
pub type Text = Arc<String>;

/// Names, hashed with the registry's fast hasher.
pub type NameSet = HashSet<Arc<str>, BuildHasherDefault<NameHasher>>;

/// A resolved toolset selection: the names a query's toolsets select.
pub type Selection = Arc<NameSet>;

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
    pub(crate) candidates: HashMap<String, Candidates>,
    /// The last query that deferred tools to `tool_search`, and its format.
    pub(crate) last_deferral: Option<(String, Format)>,
}

/// The entries a query selects, sorted by name, as of one generation. A
/// later generation with the same toolset structure is reached by patching
/// in the tools registered, replaced or removed since (the registry's change
/// log), not by a new selection and sort.
pub struct Candidates {
    pub(crate) generation: u64,
    pub(crate) membership: u64,
    pub(crate) structure: u64,
    pub(crate) list: Arc<Vec<Arc<ToolEntry>>>,
}

impl DefsCache {
    pub fn clear(&mut self) {
        self.map.clear();
        self.selections.clear();
        self.candidates.clear();
        self.last_deferral = None;
    }
}
