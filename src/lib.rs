//! hermes-tools: the tools runtime of an LLM agent as an embeddable library.
//!
//! See `README.md` and `include/hermes_tools.h`. Layers: `ffi` (the only
//! unsafe boundary) → `runtime` → registry / schema / dispatch / approval / tools.

pub mod approval;
