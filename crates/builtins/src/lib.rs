//! Built-in tools of hermes-tools, each a provider of `Tool`s over the
//! core's interfaces: `terminal` (terminal, process), `file` (read_file,
//! write_file, patch, search_files), `todo`, `memory`, `skills`
//! (skills_list, skill_view, skill_manage) and `code_execution`
//! (execute_code: a script calling the other tools back through dispatch).
//! Tools reach the outside world only through the services they are given
//! (approval, events), their execution environment and its file system.

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
