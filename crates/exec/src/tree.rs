//! Process trees: find every process a command started (its group, its
//! session, descendants that left both, and orphans that a double fork or
//! `setsid` reparented away) and signal them all, so a timeout, a kill or
//! the runtime's close ends the whole command, not only its shell.
//!
//! Orphans are found by a mark: every command starts with
//! `HERMES_TOOLS_TREE=<token>` in its environment, which its descendants
//! inherit wherever they are reparented. A process that clears its own
//! environment can still leave; the sandbox backend's PID namespace holds
//! those too.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};

use crate::sys;

/// The environment variable that marks a command's processes.
pub const MARK_VAR: &str = "HERMES_TOOLS_TREE";

/// How many command marks are remembered (by root pid, oldest dropped).
const MARKS_KEPT: usize = 4096;

type Marks = (HashMap<i32, String>, VecDeque<i32>);
static MARKS: LazyLock<Mutex<Marks>> = LazyLock::new(Default::default);
static NEXT_MARK: AtomicU64 = AtomicU64::new(1);

/// A fresh mark for one command (unique in this host process and across hosts).
pub fn new_mark() -> String {
    format!(
        "{}.{}",
        std::process::id(),
        NEXT_MARK.fetch_add(1, Ordering::Relaxed)
    )
}

/// Remember that the command rooted at `pid` carries `mark`.
pub fn remember_mark(pid: i32, mark: String) {
    let mut g = MARKS.lock().unwrap_or_else(|e| e.into_inner());
    let (map, order) = &mut *g;
    if map.insert(pid, mark).is_none() {
        order.push_back(pid);
    }
    while order.len() > MARKS_KEPT {
        if let Some(old) = order.pop_front() {
            map.remove(&old);
        }
    }
}

fn mark_of(root: i32) -> Option<String> {
    let g = MARKS.lock().unwrap_or_else(|e| e.into_inner());
    g.0.get(&root).cloned()
}

/// Live processes whose environment carries `mark` (not this process).
fn marked(mark: &str) -> Vec<i32> {
    let needle = format!("{MARK_VAR}={mark}\0");
    let me = std::process::id() as i32;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()))
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
        .collect()
}

/// Send `signal` to the process group and session of `root`, to every
/// descendant of `root`, and to every process carrying its mark. The tree is
/// stopped first (SIGSTOP), so nothing forks or is reparented while it is
/// collected, then signalled, then continued (so a TERM can be handled).
pub fn kill_tree(root: i32, signal: i32) {
    if root <= 1 {
        return;
    }
    let mark = mark_of(root);
    sys::kill(-root, libc::SIGSTOP);
    if crate::supervisor::is_shim(root) {
        // The shim is not frozen with its tree: were this process to die
        // before the signal below is sent, a stopped shim could not act on
        // it (and the tree would stay stopped forever). It forks nothing.
        sys::kill(root, libc::SIGCONT);
    } else {
        sys::kill(root, libc::SIGSTOP);
    }
    let mut seen: Vec<i32> = Vec::new();
    for _ in 0..4 {
        let mut found = tree_members(root);
        if let Some(m) = &mark {
            found.extend(marked(m));
        }
        found.retain(|p| *p != root && !seen.contains(p));
        found.dedup();
        if found.is_empty() {
            break;
        }
        for &p in &found {
            sys::kill(p, libc::SIGSTOP);
        }
        seen.extend(found);
    }
    sys::kill(-root, signal);
    sys::kill(root, signal);
    for &p in &seen {
        sys::kill(p, signal);
    }
    if signal != libc::SIGKILL && signal != libc::SIGSTOP {
        sys::kill(-root, libc::SIGCONT);
        sys::kill(root, libc::SIGCONT);
        for &p in &seen {
            sys::kill(p, libc::SIGCONT);
        }
    }
}

/// Processes in `root`'s session or group, plus descendants of `root`.
pub fn tree_members(root: i32) -> Vec<i32> {
    let mut procs: Vec<(i32, i32, i32, i32)> = Vec::new(); // pid, ppid, pgrp, session
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // comm may contain spaces and parentheses: parse after the last ')'.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        let ppid = f[1].parse().unwrap_or(0);
        let pgrp = f[2].parse().unwrap_or(0);
        let sess = f[3].parse().unwrap_or(0);
        procs.push((pid, ppid, pgrp, sess));
    }
    let mut out: Vec<i32> = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(pid, ppid, _, _) in &procs {
            if ppid == p && pid != root && !out.contains(&pid) {
                out.push(pid);
                frontier.push(pid);
            }
        }
    }
    for &(pid, _, pgrp, sess) in &procs {
        if (pgrp == root || sess == root) && pid != root && !out.contains(&pid) {
            out.push(pid);
        }
    }
    out
}

/// True while any process of `root`'s tree (other than zombies) is alive.
pub fn tree_alive(root: i32) -> bool {
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rfind(')')
                    .map(|i| s[i + 1..].trim_start().starts_with('Z'))
            })
            .is_some_and(|zombie| !zombie)
    };
    alive(root)
        || tree_members(root).into_iter().any(alive)
        || mark_of(root).is_some_and(|m| marked(&m).into_iter().any(alive))
}
