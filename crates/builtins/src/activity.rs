//! Which calls a task made last, so the read loop guards of `read_file`
//! reset when the model does something else in between (the original's
//! `notify_other_tool_call`). Each built-in tool other than `read_file`
//! bumps its task's epoch; a leaf module so every toolset can share it.

use parking_lot::Mutex;
use std::collections::HashMap;

#[derive(Default)]
pub struct Activity {
    epochs: Mutex<HashMap<String, u64>>,
}

impl Activity {
    /// A call other than a read happened in `task`.
    pub fn bump(&self, task: &str) {
        let mut m = self.epochs.lock();
        if m.len() > 10_000 {
            m.clear();
        }
        *m.entry(task.to_string()).or_insert(0) += 1;
    }
    /// The task's current epoch.
    pub fn epoch(&self, task: &str) -> u64 {
        self.epochs.lock().get(task).copied().unwrap_or(0)
    }
    pub fn forget(&self, task: &str) {
        self.epochs.lock().remove(task);
    }
}
