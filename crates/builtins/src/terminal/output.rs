//! Output handling: bounded capture (head and tail kept, never the whole
//! output in memory), optional spill of the full output to a file, ANSI
//! stripping, secret redaction, and the meaning of well-known exit codes.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use hermes_approval::redact_secrets;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Captures a command's output within a fixed memory budget: everything up
/// to `head_cap + tail_cap` bytes, then the first `head_cap` bytes and a
/// rolling window of the last `tail_cap` bytes. Optionally writes the whole
/// output (cleaned, line by line) to a spill file.
pub struct Capture {
    max_chars: usize,
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
    overflow: bool,
    total: u64,
    spill_dir: Option<PathBuf>,
    spill: Option<Spill>,
}

struct Spill {
    path: PathBuf,
    file: File,
    pending: Vec<u8>,
    failed: bool,
}

impl Capture {
    pub fn new(max_chars: usize, spill_dir: Option<&Path>) -> Capture {
        let max_chars = max_chars.max(200);
        Capture {
            max_chars,
            head_cap: max_chars * 2,
            tail_cap: max_chars * 3,
            head: Vec::new(),
            tail: Vec::new(),
            overflow: false,
            total: 0,
            spill_dir: spill_dir.map(Path::to_path_buf),
            spill: None,
        }
    }

    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    pub fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        if self.spill.is_none() && self.spill_dir.is_some() && self.total > self.max_chars as u64 {
            self.open_spill();
        }
        if let Some(s) = &mut self.spill {
            s.write(chunk);
        }
        if !self.overflow {
            self.head.extend_from_slice(chunk);
            if self.head.len() > self.head_cap + self.tail_cap {
                self.overflow = true;
                let start = self.head.len() - self.tail_cap;
                self.tail = self.head[start..].to_vec();
                self.head.truncate(self.head_cap);
                self.head.shrink_to(self.head_cap);
            }
            return;
        }
        if chunk.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend_from_slice(&chunk[chunk.len() - self.tail_cap..]);
            return;
        }
        self.tail.extend_from_slice(chunk);
        if self.tail.len() > 2 * self.tail_cap {
            let cut = self.tail.len() - self.tail_cap;
            self.tail.drain(..cut);
        }
    }

    fn open_spill(&mut self) {
        let Some(dir) = &self.spill_dir else { return };
        let _ = std::fs::create_dir_all(dir);
        let name = format!(
            "terminal-{}-{}.log",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0),
            super::ids::unique_suffix()
        );
        let path = dir.join(name);
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        if let Ok(file) = opts.open(&path) {
            let mut s = Spill {
                path,
                file,
                pending: Vec::new(),
                failed: false,
            };
            // Everything so far is still in `head` (we open before overflow).
            s.write(&self.head);
            self.spill = Some(s);
        }
    }

    /// The text for the model (cleaned, capped) and the spill file path if
    /// the output was truncated and spilled.
    pub fn finish(mut self) -> (String, Option<PathBuf>) {
        let spill = self.spill.take().and_then(|mut s| {
            s.flush_all();
            (!s.failed).then_some(s.path)
        });
        if !self.overflow {
            let text = clean(&self.head);
            let text = text.trim_end();
            if text.chars().count() <= self.max_chars {
                if let Some(p) = spill {
                    let _ = std::fs::remove_file(p);
                }
                return (text.to_string(), None);
            }
            let note = spill_note(spill.as_deref());
            let budget = self.max_chars.saturating_sub(note.len());
            let mut out: String =
                hermes_core::dispatch::limit::truncate_middle(text, budget).into();
            insert_note(&mut out, &note);
            return (out, spill);
        }
        let head = clean(&self.head);
        let tail = clean(skip_partial_char(&self.tail));
        let kept_bytes = (self.head_cap + self.tail.len().min(self.tail_cap)) as u64;
        let omitted_bytes = self.total.saturating_sub(kept_bytes);
        let marker = format!(
            "\n\n... [OUTPUT TRUNCATED - about {} bytes omitted out of {} total bytes] ...{}\n\n",
            omitted_bytes.max(1),
            self.total,
            spill_note(spill.as_deref())
        );
        let budget = self.max_chars.saturating_sub(marker.chars().count());
        let head_chars = budget * 2 / 5;
        let tail_chars = budget - head_chars;
        let mut out = String::with_capacity(self.max_chars + 64);
        out.extend(head.chars().take(head_chars));
        out.push_str(&marker);
        let tail = tail.trim_end();
        let n = tail.chars().count();
        out.extend(tail.chars().skip(n.saturating_sub(tail_chars)));
        (out, spill)
    }
}

fn spill_note(path: Option<&Path>) -> String {
    match path {
        Some(p) => format!(" [full output saved to {}]", p.display()),
        None => String::new(),
    }
}

fn insert_note(out: &mut String, note: &str) {
    if note.is_empty() {
        return;
    }
    if let Some(i) = out.find("] ...\n\n") {
        out.insert_str(i + 5, note);
    } else {
        out.push_str(note);
    }
}

fn skip_partial_char(b: &[u8]) -> &[u8] {
    let mut i = 0;
    while i < b.len() && i < 4 && (b[i] & 0xC0) == 0x80 {
        i += 1;
    }
    &b[i..]
}

impl Spill {
    fn write(&mut self, chunk: &[u8]) {
        if self.failed {
            return;
        }
        self.pending.extend_from_slice(chunk);
        let cut = match self.pending.iter().rposition(|&b| b == b'\n') {
            Some(i) => i + 1,
            None if self.pending.len() > 64 * 1024 => self.pending.len(),
            None => return,
        };
        let text = clean(&self.pending[..cut]);
        if self.file.write_all(text.as_bytes()).is_err() {
            self.failed = true;
        }
        self.pending.drain(..cut);
    }

    fn flush_all(&mut self) {
        if !self.pending.is_empty() && !self.failed {
            let text = clean(&self.pending);
            if self.file.write_all(text.as_bytes()).is_err() {
                self.failed = true;
            }
            self.pending.clear();
        }
    }
}

/// Decode (lossy), strip ANSI/terminal control sequences and redact secrets.
pub fn clean(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let stripped = strip_ansi(&text);
    redact_secrets(&stripped)
}

/// Remove ANSI escape sequences (CSI, OSC, two-byte escapes) and other C0
/// controls except newline and tab; `\r\n` becomes `\n`, and a line
/// rewritten with `\r` (progress bars) keeps its last version.
pub fn strip_ansi(s: &str) -> String {
    if !s
        .bytes()
        .any(|b| b == 0x1b || b == b'\r' || (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f)
    {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut line_start = 0usize; // index in `out` of the current line start
    let mut pending_cr = false;
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\u{1b}' => match it.next() {
                Some('[') => {
                    // CSI: parameters and intermediates, then a final byte 0x40..=0x7e
                    for d in it.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&d) {
                            break;
                        }
                    }
                }
                Some(']') | Some('P') | Some('X') | Some('^') | Some('_') => {
                    // OSC / DCS / ...: until BEL or ST (ESC \)
                    while let Some(d) = it.next() {
                        if d == '\u{07}' {
                            break;
                        }
                        if d == '\u{1b}' {
                            if it.peek() == Some(&'\\') {
                                it.next();
                            }
                            break;
                        }
                    }
                }
                Some('(') | Some(')') | Some('*') | Some('+') => {
                    it.next();
                }
                _ => {}
            },
            '\r' => pending_cr = true,
            '\n' => {
                pending_cr = false;
                out.push('\n');
                line_start = out.len();
            }
            '\u{08}' => {
                if out.len() > line_start {
                    out.pop();
                }
            }
            c if (c as u32) < 0x20 && c != '\t' => {}
            '\u{7f}' | '\u{9b}' => {}
            c => {
                if pending_cr {
                    out.truncate(line_start);
                    pending_cr = false;
                }
                out.push(c);
            }
        }
    }
    out
}

/// The meaning of a well-known non-zero exit code of the last command of a
/// pipeline (so the model does not treat `grep` finding nothing as a failure).
pub fn exit_code_meaning(command: &str, code: i32) -> Option<&'static str> {
    if code == 0 {
        return None;
    }
    let last = command
        .rsplit(['|', ';', '&', '\n'])
        .map(str::trim)
        .find(|s| !s.is_empty())?;
    let mut words = last.split_whitespace().filter(|w| {
        (!w.contains('=') || w.starts_with('-'))
            && !matches!(*w, "sudo" | "env" | "time" | "command" | "nice" | "!")
    });
    let prog = words.next()?;
    let prog = prog.rsplit('/').next().unwrap_or(prog);
    Some(match (prog, code) {
        ("grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" | "zgrep", 1) => {
            "No matches found (not an error)"
        }
        ("diff" | "colordiff" | "cmp", 1) => "Files differ (expected, not an error)",
        ("find", 1) => "Some directories were inaccessible (partial results may still be valid)",
        ("test" | "[" | "[[", 1) => "Condition evaluated to false (not an error)",
        ("curl", 6) => "Could not resolve host",
        ("curl", 7) => "Failed to connect to host",
        ("curl", 22) => "HTTP error response (status >= 400)",
        ("curl", 28) => "Operation timed out",
        ("git", 1) => "Non-zero exit (often normal, e.g. nothing to commit or a diff found)",
        (_, 124) => "Timed out",
        (_, 126) => "Command found but not executable (or the working directory is missing)",
        (_, 127) => "Command not found",
        (_, 130) => "Interrupted (SIGINT)",
        (_, 137) => "Killed (SIGKILL), possibly out of memory",
        (_, 139) => "Segmentation fault",
        (_, 143) => "Terminated (SIGTERM)",
        _ => return None,
    })
}

/// Coalesces live output into host events (at most one per 100 ms).
pub struct Streamer {
    enabled: bool,
    kind: &'static str,
    id: String,
    task_id: String,
    buf: String,
    last: Instant,
}

impl Streamer {
    pub fn new(enabled: bool, kind: &'static str, id: &str, task_id: &str) -> Streamer {
        Streamer {
            enabled,
            kind,
            id: id.to_string(),
            task_id: task_id.to_string(),
            buf: String::new(),
            last: Instant::now(),
        }
    }

    pub fn push(&mut self, text: &str, emit: &dyn Fn(Value)) {
        if !self.enabled || text.is_empty() {
            return;
        }
        self.buf.push_str(text);
        if self.last.elapsed() >= Duration::from_millis(100) || self.buf.len() > 16 * 1024 {
            self.flush(emit);
        }
    }

    fn flush(&mut self, emit: &dyn Fn(Value)) {
        if self.buf.is_empty() {
            return;
        }
        let data = hermes_approval::redact_secrets(&std::mem::take(&mut self.buf));
        // Process events name their process `session_id` (as process.completed
        // and the process tool do); terminal events name the call `id`.
        let key = if self.kind.starts_with("process.") {
            "session_id"
        } else {
            "id"
        };
        emit(json!({"type": self.kind, key: self.id, "task_id": self.task_id, "data": data}));
        self.last = Instant::now();
    }

    pub fn finish(&mut self, emit: &dyn Fn(Value)) {
        if self.enabled {
            self.flush(emit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_and_progress_are_cleaned() {
        assert_eq!(strip_ansi("\x1b[31mred\x1b[0m\r\nx"), "red\nx");
        assert_eq!(strip_ansi("10%\r50%\r100%\ndone"), "100%\ndone");
        assert_eq!(strip_ansi("\x1b]0;title\x07ok"), "ok");
        assert_eq!(strip_ansi("plain"), "plain");
    }

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Capture::new(1000, None);
        c.push(b"START\n");
        for _ in 0..10_000 {
            c.push(b"middle line of output\n");
        }
        c.push(b"THE END");
        let (text, spill) = c.finish();
        assert!(spill.is_none());
        assert!(text.chars().count() <= 1000, "{}", text.chars().count());
        assert!(text.starts_with("START"));
        assert!(text.ends_with("THE END"));
        assert!(text.contains("OUTPUT TRUNCATED"));
    }

    #[test]
    fn exit_meanings() {
        assert_eq!(
            exit_code_meaning("cat x | grep foo", 1),
            Some("No matches found (not an error)")
        );
        assert_eq!(exit_code_meaning("grep foo x", 0), None);
        assert_eq!(exit_code_meaning("ls", 2), None);
        assert!(exit_code_meaning("FOO=1 /usr/bin/diff a b", 1).is_some());
    }
}
