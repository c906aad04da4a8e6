//! The definitions cache: rendered definitions by query text, and the toolset
//! selections of queries by registry membership. A leaf the core owns (it
//! clears it at close) and the definitions module fills.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::sync::Arc;
use std::time::Instant;

use crate::registry::{Format, NameHasher, ToolEntry};

/// Definitions text, shared without copying. It is built once, by the
/// caller's [`BuildText`], and never copied again (at 10 000 tools it is
/// megabytes): the C ABI builds its own refcounted blocks and hands the
/// cached one to the host as is.
pub type Text = Arc<dyn TextBlock>;

/// A block of definitions text: reads as `str`; `as_any` lets the front end
/// that built it recognise it.
pub trait TextBlock: std::ops::Deref<Target = str> + Send + Sync + 'static {
    fn as_any(&self) -> &dyn std::any::Any;
}

impl std::fmt::Display for dyn TextBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
    }
}

impl std::fmt::Debug for dyn TextBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl TextBlock for String {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Makes a [`Text`] holding the concatenation of `pieces`.
pub type BuildText<'a> = &'a dyn Fn(&[&str]) -> Text;

/// The default [`BuildText`]: a `String` of exactly the right size.
pub fn string_text(pieces: &[&str]) -> Text {
    Arc::new(pieces.concat())
}

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
