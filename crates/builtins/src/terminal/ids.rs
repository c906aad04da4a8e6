//! Identifiers: unique suffixes for ids and file names, and the key of a task.

use std::sync::atomic::{AtomicU64, Ordering};

static UNIQUE: AtomicU64 = AtomicU64::new(1);

/// A short unique hex string (process-wide counter mixed with time and pid).
pub fn unique_suffix() -> String {
    let n = UNIQUE.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut x = n.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ t.rotate_left(17)
        ^ (u64::from(std::process::id()) << 40);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    format!("{:012x}", x & 0xffff_ffff_ffff)
}

/// The key a task's state is kept under (the empty task id is `default`).
pub fn task_key(task_id: &str) -> &str {
    if task_id.is_empty() {
        "default"
    } else {
        task_id
    }
}
