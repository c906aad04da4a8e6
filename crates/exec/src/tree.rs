//! Process trees: find every process a command started (its group, its
//! session, and descendants that left both) and signal them all, so a
//! timeout or a kill ends the whole command, not only its shell.

use crate::sys;

/// Send `signal` to the process group and session of `root`, and to every
/// descendant of `root` (which catches children that started their own
/// session or group while their parent still runs).
pub fn kill_tree(root: i32, signal: i32) {
    if root <= 1 {
        return;
    }
    sys::kill(-root, signal);
    for pid in tree_members(root) {
        sys::kill(pid, signal);
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
    alive(root) || tree_members(root).into_iter().any(alive)
}
