//! The terminal's background processes as MCP resources, so a client can
//! follow a command it started with `background: true` without polling the
//! `process` tool: `resources/list` has one `process://<id>` per process of
//! the session's task, `resources/read` answers what `process log` answers
//! (status, exit code, the last lines of output), and a client that
//! subscribed gets `notifications/resources/updated` when the output grows
//! or the process exits; `notifications/resources/list_changed` when
//! processes start or leave.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use parking_lot::Mutex;
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};

use hermes_runtime::Runtime;

pub(crate) const SCHEME: &str = "process://";
/// Lines of output a read returns (the process tool's log default is 200).
const READ_LINES: usize = 2000;

/// The process id in a `process://<id>` URI.
pub(crate) fn id_of(uri: &str) -> Option<&str> {
    uri.strip_prefix(SCHEME).filter(|id| !id.is_empty())
}

/// The resources of `task`'s processes (JSON, MCP `Resource` shape).
pub(crate) fn list(rt: &Runtime, task: &str) -> Vec<Value> {
    let Some(term) = rt.terminal() else {
        return Vec::new();
    };
    let listed = term.procs.list(task, "");
    listed["processes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let id = p["session_id"].as_str()?;
            Some(json!({
                "uri": format!("{SCHEME}{id}"),
                "name": format!("process {id}"),
                "title": p["command"],
                "description": format!("Background process {id} ({}): {}", p["status"].as_str().unwrap_or("?"), p["command"].as_str().unwrap_or("")),
                "mimeType": "application/json",
            }))
        })
        .collect()
}

/// How many of `task`'s background processes are still running (the
/// session's process quota).
pub(crate) fn running(rt: &Runtime, task: &str) -> usize {
    let Some(term) = rt.terminal() else {
        return 0;
    };
    term.procs.list(task, "")["processes"]
        .as_array()
        .map_or(0, |a| {
            a.iter()
                .filter(|p| p["status"].as_str() == Some("running"))
                .count()
        })
}

/// What a read of `uri` answers for `task`, or None when no such process
/// is visible to it.
pub(crate) fn read(rt: &Runtime, task: &str, uri: &str) -> Option<Value> {
    let id = id_of(uri)?;
    let p = rt.terminal()?.procs.lookup(id, task, "")?;
    Some(p.log(0, READ_LINES))
}

fn fingerprint(v: &Value) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v["status"].as_str().hash(&mut h);
    v["total_lines"].as_u64().hash(&mut h);
    v["exit_code"].as_i64().hash(&mut h);
    v["output"].as_str().map(str::len).hash(&mut h);
    h.finish()
}

type Client = Peer<RoleServer>;
/// (uri, task) -> subscribed clients and the state they were last told of.
type Subscriptions = HashMap<(String, String), (Vec<Client>, u64)>;
/// (task, session, client, the list it last saw).
type ListWatch = (String, u64, Client, u64);

/// Who follows what: subscriptions and each session's process list.
#[derive(Default)]
pub(crate) struct Followers {
    /// (uri, task) -> subscribed clients and the last state they were told of.
    subs: Mutex<Subscriptions>,
    /// Sessions that listed resources: (task, session, client, last list seen).
    lists: Mutex<Vec<ListWatch>>,
}

impl Followers {
    pub fn subscribe(&self, rt: &Runtime, task: &str, uri: &str, peer: Peer<RoleServer>) {
        let now = read(rt, task, uri).map(|v| fingerprint(&v)).unwrap_or(0);
        let mut subs = self.subs.lock();
        let e = subs
            .entry((uri.to_string(), task.to_string()))
            .or_insert_with(|| (Vec::new(), now));
        e.0.push(peer);
    }

    pub fn unsubscribe(&self, task: &str, uri: &str) {
        self.subs
            .lock()
            .remove(&(uri.to_string(), task.to_string()));
    }

    /// A session closed: nothing of its task is followed any more.
    pub fn forget(&self, task: &str) {
        self.subs.lock().retain(|(_, t), _| t != task);
        self.lists.lock().retain(|(t, ..)| t != task);
    }

    pub fn watch_list(&self, rt: &Runtime, task: &str, session: u64, peer: Peer<RoleServer>) {
        let now = list_fingerprint(&list(rt, task));
        let mut lists = self.lists.lock();
        if !lists.iter().any(|(t, s, ..)| t == task && *s == session) {
            lists.push((task.to_string(), session, peer, now));
        }
    }

    /// One round of the watcher: what changed since the last round.
    pub fn changes(&self, rt: &Runtime) -> Vec<Notice> {
        let mut out = Vec::new();
        for ((uri, task), (peers, last)) in self.subs.lock().iter_mut() {
            let now = read(rt, task, uri).map(|v| fingerprint(&v)).unwrap_or(0);
            if now != *last {
                *last = now;
                peers.retain(|p| !p.is_transport_closed());
                for p in peers.iter() {
                    out.push(Notice::Updated(p.clone(), uri.clone()));
                }
            }
        }
        let mut lists = self.lists.lock();
        lists.retain(|(_, _, p, _)| !p.is_transport_closed());
        for (task, _, peer, last) in lists.iter_mut() {
            let now = list_fingerprint(&list(rt, task));
            if now != *last {
                *last = now;
                out.push(Notice::ListChanged(peer.clone()));
            }
        }
        out
    }
}

pub(crate) enum Notice {
    Updated(Peer<RoleServer>, String),
    ListChanged(Peer<RoleServer>),
}

fn list_fingerprint(items: &[Value]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for i in items {
        i["uri"].as_str().hash(&mut h);
        i["description"].as_str().hash(&mut h);
    }
    h.finish()
}
