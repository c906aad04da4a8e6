//! Built-in tools of hermes-tools, each a provider of `Tool`s over the
//! core's interfaces: `terminal` (terminal, process), `file` (read_file,
//! write_file, patch, search_files), `todo`, `memory` and `skills`
//! (skills_list, skill_view, skill_manage). Tools reach the outside world
//! only through the services they are given (approval, events) and their
//! execution environment's file system.

// `unsafe` lives only at the boundary (crates/ffi, crates/exec/src/sys.rs).
#![deny(unsafe_code)]

pub mod activity;
pub mod code;
pub mod file;
pub mod fuzzy;
pub mod memory;
pub mod skills;
pub mod terminal;
pub mod threats;
pub mod todo;
