//! Built-in tools of hermes-tools, each a provider of `Tool`s over the
//! core's interfaces: `terminal` (terminal, process) today; file, todo,
//! memory and skills plug in the same way. Tools reach the outside world only
//! through the services they are given (approval, events) and their
//! execution environment.

// `unsafe` lives only at the boundary (crates/ffi, crates/exec/src/sys.rs).
#![deny(unsafe_code)]

pub mod terminal;
