//! The runtime's integration tests, one module per former test file, in one
//! binary (issue 29): each was its own binary linking the runtime with rmcp,
//! reqwest and OpenSSL, and CI spent minutes linking them. None changes
//! process-wide state; the docker and podman daemons (container_common), the
//! swarm (swarm_common) and sshd (ssh_common) are started once per process and found by unique
//! command lines. Run one module with `cargo test -p hermes-runtime --test
//! integration <module>::`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../container_common/mod.rs"]
mod container_common;
#[path = "../../../exec/tests/daytona_server/mod.rs"]
mod daytona_server;
#[path = "../mcp_common/mod.rs"]
mod mcp_common;
#[cfg(feature = "modal")]
#[path = "../../../exec/tests/modal_server/mod.rs"]
mod modal_server;
#[path = "../ssh_common/mod.rs"]
#[macro_use]
mod ssh_common;
#[path = "../swarm_common/mod.rs"]
mod swarm_common;

mod backend_container;
#[cfg(feature = "modal")]
mod backend_modal;
mod backend_ssh;
mod backend_swarm;
mod builtin_fidelity;
mod builtin_file;
mod builtin_skills;
mod builtin_todo_memory;
mod code_execution;
mod config_docs;
mod mcp_everything;
mod mcp_oauth;
mod mcp_resilience;
mod mcp_sampling;
mod mcp_servers;
mod mcp_trust;
mod mcp_versions;
mod network_policy;
mod redteam_fixes;
