//! Where commands run: the execution layer of hermes-tools (a leaf engine).
//!
//! An [`Environment`] starts a bash script and hands back a
//! [`Spawned`] process: one readable fd carrying stdout and stderr merged in
//! order (a pipe, or a PTY master), an optional writer for its stdin, and a
//! process id that is also its process group and session id, so the whole
//! tree can be signalled.
//!
//! `local` runs `/bin/bash -c` on this machine; `sandbox` wraps the same in
//! bubblewrap. Backends for ssh, docker, singularity (a local client process
//! that runs the script elsewhere) fit the same trait by building a
//! different argv in `spawn`; SDK backends (modal, daytona) can implement
//! `spawn` with a thread that feeds a pipe.

#![deny(unsafe_code)]
// `sys` is the one module allowed `unsafe`: every block there says why it is
// sound, and every `unsafe fn` what its caller must guarantee.
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

pub mod apptainer;
pub mod container;
pub mod daytona;
pub mod env;
pub mod fs;
pub mod host;
pub mod inherit;
pub mod local;
#[cfg(feature = "modal")]
pub mod modal;
pub mod netproxy;
pub mod pump;
pub mod remote_fs;
pub mod sandbox;
pub mod spawn;
pub mod ssh;
pub mod supervisor;
pub mod swarm;
#[allow(unsafe_code)]
pub mod sys;
pub mod tree;

pub use env::{Environment, Files, Remote, TaskNetwork, task_key, terminate_tree};
pub use pump::{Ended, PumpOpts, pump, pump_async};
pub use spawn::{Input, PtyKeepAlive, SpawnRequest, Spawned};
pub use sys::{ExitWatch, pipe, poll_one, set_nonblocking};
/// Cancellation shared with the core: wakes waiters, clones cheaply.
pub use tokio_util::sync::CancellationToken as CancelToken;
pub use tree::{kill_tree, tree_alive, tree_members};
