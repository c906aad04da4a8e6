//! The background process registry behind `terminal(background=true)` and
//! the `process` tool: stable ids, a rolling output buffer per process, a
//! reader thread per process that also reaps it, bounded waits, tree kills,
//! stdin for PTY processes, completion and watch-pattern events (rate
//! limited), finished processes kept for a while, and a cap on how many are
//! tracked.

use parking_lot::{Condvar, Mutex};
use serde_json::{Value, json};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use super::config::TerminalConfig;
use super::ids::{task_key, unique_suffix};
use super::output::{Streamer, strip_ansi};

/// What background processes need from the terminal that owns them: where
/// they run, their settings, and the host's event channel. The terminal
/// implements it; this module never names the terminal itself.
pub trait Owner: Send + Sync + 'static {
    fn backend(&self) -> &dyn hermes_exec::Environment;
    /// Where reader tasks run (`None`: the engine is gone; use a thread).
    fn engine(&self) -> Option<&hermes_core::engine::Engine>;
    fn cfg(&self) -> &TerminalConfig;
    fn procs(&self) -> &Registry;
    fn grace(&self) -> Duration;
    fn has_event_handler(&self) -> bool;
    fn emit(&self, event: Value);
}
use hermes_approval::redact_secrets;
use hermes_exec::{Ended, PumpOpts, pump};
use hermes_exec::{Input, Spawned};

/// How a process ended.
#[derive(Clone, Debug)]
pub struct ExitInfo {
    pub code: i32,
    /// "exited", "killed" or "timeout".
    pub reason: &'static str,
    /// Who ended it ("process.kill", "task_cleanup", "shutdown", "timeout"), if not itself.
    pub source: Option<&'static str>,
}

struct Watch {
    patterns: Vec<String>,
    last_emit: Option<Instant>,
    suppressed: u32,
    window_dropped: bool,
    strikes: u32,
    disabled: bool,
}

struct State {
    buf: String,
    dropped_lines: u64,
    dropped_bytes: u64,
    partial: String,
    exit: Option<ExitInfo>,
    finished_at: Option<Instant>,
    kill_source: Option<&'static str>,
    notify: bool,
    watch: Option<Watch>,
    input_closed: bool,
}

/// One background process.
pub struct Proc {
    pub id: String,
    pub command: String,
    pub task_id: String,
    pub session_id: String,
    pub cwd: String,
    pub pid: i32,
    pub pty: bool,
    started: Instant,
    started_unix: f64,
    state: Mutex<State>,
    cv: Condvar,
    input: Option<Arc<Input>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

struct Breaker {
    window_start: Instant,
    count: u32,
    tripped_until: Option<Instant>,
}

/// All background processes of a runtime.
pub struct Registry {
    procs: Mutex<Vec<Arc<Proc>>>,
    max: usize,
    ttl: Duration,
    buf_cap: usize,
    watch_interval: Duration,
    breaker: Mutex<Breaker>,
}

const GLOBAL_MAX_MATCHES: u32 = 15;
const GLOBAL_WINDOW: Duration = Duration::from_secs(10);
const GLOBAL_COOLDOWN: Duration = Duration::from_secs(30);
const MAX_STRIKES: u32 = 3;

fn tail_chars(s: &str, n: usize) -> &str {
    let count = s.chars().count();
    if count <= n {
        return s;
    }
    let skip = count - n;
    let idx = s.char_indices().nth(skip).map_or(s.len(), |(i, _)| i);
    &s[idx..]
}

/// Split off an incomplete UTF-8 sequence at the end of `b`.
pub(crate) fn utf8_split(b: &[u8]) -> usize {
    let n = b.len();
    for back in 1..=3.min(n) {
        let c = b[n - back];
        if c & 0xC0 == 0x80 {
            continue;
        }
        let need = if c >= 0xF0 {
            4
        } else if c >= 0xE0 {
            3
        } else if c >= 0xC0 {
            2
        } else {
            1
        };
        return if need > back { n - back } else { n };
    }
    n
}

impl Registry {
    pub fn new(cfg: &TerminalConfig) -> Registry {
        Registry {
            procs: Mutex::new(Vec::new()),
            max: cfg.max_processes.max(1),
            ttl: Duration::from_secs(cfg.finished_ttl),
            buf_cap: cfg.process_buffer_chars.max(1000),
            watch_interval: Duration::from_secs_f64(cfg.watch_interval.max(0.0)),
            breaker: Mutex::new(Breaker {
                window_start: Instant::now(),
                count: 0,
                tripped_until: None,
            }),
        }
    }

    pub fn get(&self, id: &str) -> Option<Arc<Proc>> {
        self.procs.lock().iter().find(|p| p.id == id).cloned()
    }

    /// Make room for one more (drop expired, then the oldest finished).
    fn make_room(&self) -> Result<(), String> {
        let mut procs = self.procs.lock();
        let ttl = self.ttl;
        procs.retain(|p| p.state.lock().finished_at.is_none_or(|f| f.elapsed() < ttl));
        while procs.len() >= self.max {
            let oldest_finished = procs.iter().position(|p| p.state.lock().exit.is_some());
            match oldest_finished {
                Some(i) => {
                    procs.remove(i);
                }
                None => {
                    return Err(format!(
                        "Too many background processes ({} running, the limit is {}). Kill some with the process tool first.",
                        procs.len(),
                        self.max
                    ));
                }
            }
        }
        Ok(())
    }

    pub fn check_capacity(&self) -> Result<(), String> {
        self.make_room()
    }

    /// Track a started process and start its reader thread.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        &self,
        term: Arc<dyn Owner>,
        sp: Spawned,
        command: &str,
        task_id: &str,
        session_id: &str,
        cwd: &str,
        notify: bool,
        watch: Vec<String>,
    ) -> Result<Arc<Proc>, String> {
        if let Err(e) = self.make_room() {
            hermes_exec::terminate_tree(term.backend(), sp.pid, Duration::from_millis(200));
            hermes_exec::ExitWatch::new(sp.pid).reap();
            return Err(e);
        }
        let id = format!("proc_{}", unique_suffix());
        let proc_ = Arc::new(Proc {
            id,
            command: command.to_string(),
            task_id: task_key(task_id).to_string(),
            session_id: session_id.to_string(),
            cwd: cwd.to_string(),
            pid: sp.pid,
            pty: sp.pty.is_some(),
            started: Instant::now(),
            started_unix: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0),
            state: Mutex::new(State {
                buf: String::new(),
                dropped_lines: 0,
                dropped_bytes: 0,
                partial: String::new(),
                exit: None,
                finished_at: None,
                kill_source: None,
                notify,
                watch: (!watch.is_empty()).then_some(Watch {
                    patterns: watch,
                    last_emit: None,
                    suppressed: 0,
                    window_dropped: false,
                    strikes: 0,
                    disabled: false,
                }),
                input_closed: false,
            }),
            cv: Condvar::new(),
            input: sp.input.map(Arc::new),
            thread: Mutex::new(None),
        });
        self.procs.lock().push(proc_.clone());
        let handle = start_reader(term, proc_.clone(), sp.output, sp.pty)?;
        *proc_.thread.lock() = handle;
        Ok(proc_)
    }

    fn visible(&self, task_id: &str, session_id: &str) -> Vec<Arc<Proc>> {
        let ttl = self.ttl;
        self.procs
            .lock()
            .retain(|p| p.state.lock().finished_at.is_none_or(|f| f.elapsed() < ttl));
        let key = task_key(task_id);
        self.procs
            .lock()
            .iter()
            .filter(|p| p.task_id == key || (!session_id.is_empty() && p.session_id == session_id))
            .cloned()
            .collect()
    }

    /// A process the calling task may see.
    pub fn lookup(&self, id: &str, task_id: &str, session_id: &str) -> Option<Arc<Proc>> {
        let key = task_key(task_id);
        self.get(id)
            .filter(|p| p.task_id == key || (!session_id.is_empty() && p.session_id == session_id))
    }

    pub fn list(&self, task_id: &str, session_id: &str) -> Value {
        let items: Vec<Value> = self
            .visible(task_id, session_id)
            .iter()
            .map(|p| p.summary())
            .collect();
        json!({ "processes": items })
    }

    /// Write to a process's stdin (PTY processes only).
    pub fn write(&self, id: &str, data: &[u8]) -> Result<usize, String> {
        let p = self
            .get(id)
            .ok_or_else(|| format!("No process with ID {id}"))?;
        p.write(data)
    }

    fn kill_many(&self, term: &dyn Owner, victims: Vec<Arc<Proc>>, source: &'static str) {
        let running: Vec<Arc<Proc>> = victims
            .into_iter()
            .filter(|p| {
                let mut s = p.state.lock();
                if s.exit.is_none() {
                    s.kill_source = Some(source);
                    true
                } else {
                    false
                }
            })
            .collect();
        for p in &running {
            term.backend().kill(p.pid, libc::SIGTERM);
        }
        let until = Instant::now() + term.grace();
        for p in &running {
            let mut s = p.state.lock();
            while s.exit.is_none() && Instant::now() < until {
                p.cv.wait_until(&mut s, until);
            }
        }
        for p in &running {
            if p.state.lock().exit.is_none() {
                term.backend().kill(p.pid, libc::SIGKILL);
            }
        }
    }

    /// Kill and forget every process of a task.
    pub fn kill_task(&self, term: &dyn Owner, task_key: &str) {
        let victims: Vec<Arc<Proc>> = self
            .procs
            .lock()
            .iter()
            .filter(|p| p.task_id == task_key)
            .cloned()
            .collect();
        self.kill_many(term, victims.clone(), "task_cleanup");
        for p in &victims {
            p.join(Duration::from_secs(3));
        }
        self.procs.lock().retain(|p| p.task_id != task_key);
    }

    /// Kill every process (runtime close).
    pub fn kill_all(&self, term: &dyn Owner) {
        let victims: Vec<Arc<Proc>> = self.procs.lock().clone();
        self.kill_many(term, victims, "shutdown");
    }

    /// Wait for every reader thread (they reap their process).
    pub fn join_all(&self, timeout: Duration) {
        let procs: Vec<Arc<Proc>> = std::mem::take(&mut *self.procs.lock());
        let until = Instant::now() + timeout;
        for p in procs {
            p.join(until.saturating_duration_since(Instant::now()));
        }
    }

    pub fn count_running(&self) -> usize {
        self.procs
            .lock()
            .iter()
            .filter(|p| p.state.lock().exit.is_none())
            .count()
    }

    /// The global watch circuit breaker: may one more match be sent now?
    fn global_allow(&self) -> bool {
        let mut b = self.breaker.lock();
        let now = Instant::now();
        if let Some(u) = b.tripped_until {
            if now < u {
                return false;
            }
            b.tripped_until = None;
            b.count = 0;
            b.window_start = now;
        }
        if now.duration_since(b.window_start) > GLOBAL_WINDOW {
            b.window_start = now;
            b.count = 0;
        }
        b.count += 1;
        if b.count > GLOBAL_MAX_MATCHES {
            b.tripped_until = Some(now + GLOBAL_COOLDOWN);
            return false;
        }
        true
    }
}

impl Proc {
    fn join(&self, timeout: Duration) {
        let until = Instant::now() + timeout;
        {
            let mut s = self.state.lock();
            while s.exit.is_none() && Instant::now() < until {
                self.cv.wait_until(&mut s, until);
            }
        }
        if let Some(h) = self.thread.lock().take()
            && self.state.lock().exit.is_some()
        {
            let _ = h.join();
        }
    }

    pub fn status(&self) -> &'static str {
        if self.state.lock().exit.is_some() {
            "exited"
        } else {
            "running"
        }
    }

    pub fn uptime(&self) -> u64 {
        let s = self.state.lock();
        match s.finished_at {
            Some(f) => f.duration_since(self.started).as_secs(),
            None => self.started.elapsed().as_secs(),
        }
    }

    fn exit_fields(&self, v: &mut Value) {
        if let Some(e) = &self.state.lock().exit {
            v["exit_code"] = json!(e.code);
            v["completion_reason"] = json!(e.reason);
            v["termination_source"] = json!(e.source);
        }
    }

    fn tail(&self, n: usize) -> String {
        let s = self.state.lock();
        redact_secrets(tail_chars(s.buf.trim_end(), n))
    }

    pub fn summary(&self) -> Value {
        let mut v = json!({
            "session_id": self.id,
            "command": self.command.chars().take(200).collect::<String>(),
            "cwd": self.cwd,
            "pid": self.pid,
            "pty": self.pty,
            "started_at": self.started_unix,
            "uptime_seconds": self.uptime(),
            "status": self.status(),
            "output_preview": self.tail(200),
        });
        {
            let s = self.state.lock();
            if let Some(w) = &s.watch {
                v["watch_patterns"] = json!(w.patterns);
                v["watch_disabled"] = json!(w.disabled);
            }
            if s.notify {
                v["notify_on_complete"] = json!(true);
            }
        }
        self.exit_fields(&mut v);
        v
    }

    pub fn poll(&self) -> Value {
        let mut v = json!({
            "session_id": self.id,
            "command": self.command,
            "status": self.status(),
            "pid": self.pid,
            "uptime_seconds": self.uptime(),
            "output_preview": self.tail(1000),
        });
        self.exit_fields(&mut v);
        v
    }

    /// Lines of the buffer: `offset` 0 means the last `limit` lines;
    /// otherwise lines `offset..offset+limit` (absolute line numbers,
    /// counting lines that fell out of the rolling buffer).
    pub fn log(&self, offset: u64, limit: usize) -> Value {
        let s = self.state.lock();
        let lines: Vec<&str> = s.buf.lines().collect();
        let total = s.dropped_lines + lines.len() as u64;
        let (start, slice): (u64, &[&str]) = if offset == 0 {
            let from = lines.len().saturating_sub(limit);
            (s.dropped_lines + from as u64, &lines[from..])
        } else if offset < s.dropped_lines {
            let end =
                ((offset + limit as u64).saturating_sub(s.dropped_lines) as usize).min(lines.len());
            (s.dropped_lines, &lines[..end])
        } else {
            let from = ((offset - s.dropped_lines) as usize).min(lines.len());
            let end = (from + limit).min(lines.len());
            (offset, &lines[from..end])
        };
        let text = redact_secrets(&slice.join("\n"));
        let mut v = json!({
            "session_id": self.id,
            "command": self.command,
            "status": if s.exit.is_some() { "exited" } else { "running" },
            "output": text,
            "total_lines": total,
            "showing": format!("{} lines (from line {})", slice.len(), start),
        });
        if s.dropped_lines > 0 {
            v["note"] = json!(format!(
                "{} earlier lines ({} bytes) fell out of the rolling buffer",
                s.dropped_lines, s.dropped_bytes
            ));
        }
        drop(s);
        self.exit_fields(&mut v);
        v
    }

    /// Wait until exit, the timeout, or cancellation.
    pub fn wait(&self, timeout: Duration, cancel: &hermes_core::CancelToken) -> Value {
        let until = Instant::now() + timeout;
        let mut cancelled = false;
        {
            let mut s = self.state.lock();
            while s.exit.is_none() {
                let now = Instant::now();
                if now >= until {
                    break;
                }
                if cancel.is_cancelled() {
                    cancelled = true;
                    break;
                }
                let slice = (now + Duration::from_millis(100)).min(until);
                self.cv.wait_until(&mut s, slice);
            }
        }
        let exit = self.state.lock().exit.clone();
        if let Some(e) = exit {
            return json!({
                "status": "exited",
                "session_id": self.id,
                "command": self.command,
                "exit_code": e.code,
                "completion_reason": e.reason,
                "termination_source": e.source,
                "output": self.tail(2000),
            });
        }
        if cancelled {
            return json!({
                "status": "interrupted",
                "session_id": self.id,
                "command": self.command,
                "output": self.tail(1000),
                "note": "wait interrupted (call cancelled)",
            });
        }
        json!({
            "status": "timeout",
            "session_id": self.id,
            "command": self.command,
            "output": self.tail(1000),
            "timeout_note": format!("Waited {}s, process still running", timeout.as_secs()),
        })
    }

    /// Kill the whole tree (TERM, KILL after the grace) and wait for the end.
    pub fn kill(&self, term: &dyn Owner) -> Value {
        {
            let mut s = self.state.lock();
            if s.exit.is_some() {
                drop(s);
                let mut v = json!({
                    "status": "already_exited",
                    "session_id": self.id,
                    "output": self.tail(2000),
                });
                self.exit_fields(&mut v);
                return v;
            }
            s.kill_source = Some("process.kill");
        }
        hermes_exec::terminate_tree(term.backend(), self.pid, term.grace());
        {
            let until = Instant::now() + Duration::from_secs(3);
            let mut s = self.state.lock();
            while s.exit.is_none() && Instant::now() < until {
                self.cv.wait_until(&mut s, until);
            }
        }
        let mut v = json!({
            "status": "killed",
            "session_id": self.id,
            "completion_reason": "killed",
            "termination_source": "process.kill",
            "output": self.tail(2000),
        });
        if let Some(e) = &self.state.lock().exit {
            v["exit_code"] = json!(e.code);
        }
        v
    }

    pub fn write(&self, data: &[u8]) -> Result<usize, String> {
        let s = self.state.lock();
        if s.exit.is_some() {
            return Err("Process has already finished".into());
        }
        if s.input_closed {
            return Err("stdin was closed".into());
        }
        drop(s);
        match &self.input {
            Some(i) => i.write_all(data).map_err(|e| format!("write failed: {e}")),
            None => Err(
                "Process stdin not available: it was started without pty=true (stdin is /dev/null so it can never hang). Start it with pty=true to type into it."
                    .into(),
            ),
        }
    }

    pub fn close_input(&self) -> Result<&'static str, String> {
        let mut s = self.state.lock();
        if s.exit.is_some() {
            return Err("Process has already finished".into());
        }
        if s.input_closed {
            return Ok("stdin already closed");
        }
        match &self.input {
            Some(i) => {
                s.input_closed = true;
                drop(s);
                i.send_eof().map_err(|e| format!("close failed: {e}"))?;
                Ok("EOF sent")
            }
            None => Ok("stdin closed (it was /dev/null)"),
        }
    }

    /// Append cleaned text; returns complete new lines for watch scanning.
    fn append(&self, text: &str, cap: usize) -> Vec<String> {
        let mut s = self.state.lock();
        s.buf.push_str(text);
        if s.buf.len() > cap + cap / 4 {
            let mut cut = s.buf.len() - cap;
            while !s.buf.is_char_boundary(cut) {
                cut += 1;
            }
            if let Some(nl) = s.buf[cut..].find('\n').filter(|&n| n < 4096) {
                cut += nl + 1;
            }
            let dropped = s.buf[..cut].matches('\n').count() as u64;
            s.dropped_lines += dropped;
            s.dropped_bytes += cut as u64;
            s.buf.drain(..cut);
        }
        if s.watch.as_ref().is_none_or(|w| w.disabled) {
            return Vec::new();
        }
        let mut lines = Vec::new();
        let mut partial = std::mem::take(&mut s.partial);
        partial.push_str(text);
        let mut rest = partial.as_str();
        while let Some(i) = rest.find('\n') {
            lines.push(rest[..i].to_string());
            rest = &rest[i + 1..];
        }
        s.partial = tail_chars(rest, 4096).to_string();
        lines
    }
}

/// What a reader does with output, shared by its two drivers: buffer it
/// (UTF-8 safe, ANSI stripped), stream it, scan watch patterns.
struct Feed {
    term: Arc<dyn Owner>,
    p: Arc<Proc>,
    streamer: Streamer,
    carry: Vec<u8>,
    cap: usize,
}

impl Feed {
    fn new(term: Arc<dyn Owner>, p: Arc<Proc>) -> Feed {
        let stream = term.cfg().stream_output && term.has_event_handler();
        Feed {
            streamer: Streamer::new(stream, "process.output", &p.id, &p.task_id),
            carry: Vec::new(),
            cap: term.procs().buf_cap,
            term,
            p,
        }
    }

    fn opts(&self) -> PumpOpts<'static> {
        let cfg = self.term.cfg();
        PumpOpts {
            timeout: (cfg.background_timeout > 0)
                .then(|| Duration::from_secs(cfg.background_timeout)),
            grace: self.term.grace(),
            follow_group: true,
            ..PumpOpts::default()
        }
    }

    fn data(&mut self, chunk: &[u8]) {
        self.carry.extend_from_slice(chunk);
        let end = utf8_split(&self.carry);
        let text = strip_ansi(&String::from_utf8_lossy(&self.carry[..end]));
        self.carry.drain(..end);
        let term = &self.term;
        self.streamer.push(&text, &|e| term.emit(e));
        let lines = self.p.append(&text, self.cap);
        if !lines.is_empty() {
            scan_watch(&**term, &self.p, &lines);
        }
    }
}

/// The reader of a background process as a task on the runtime's engine
/// (no thread of its own): pump output, then record the exit and notify.
/// Without an engine (it could not start) it falls back to a thread.
fn start_reader(
    term: Arc<dyn Owner>,
    p: Arc<Proc>,
    output: std::os::fd::OwnedFd,
    pty: Option<hermes_exec::PtyKeepAlive>,
) -> Result<Option<JoinHandle<()>>, String> {
    if let Some(engine) = term.engine() {
        let (t, q) = (term.clone(), p.clone());
        let (output, pty) = (Arc::new(output), Arc::new(parking_lot::Mutex::new(pty)));
        let (o2, pty2) = (output.clone(), pty.clone());
        let spawned = engine.spawn(async move {
            let mut feed = Feed::new(t.clone(), q.clone());
            let opts = feed.opts();
            let (code, ended) =
                hermes_exec::pump_async(q.pid, &o2, t.backend(), &opts, &mut |c| feed.data(c))
                    .await;
            let pty = pty2.lock().take();
            finish(feed, code, ended, o2, pty);
        });
        if spawned.is_some() {
            return Ok(None);
        }
        // The engine shut down between the check and the spawn: use a thread.
        let output = Arc::try_unwrap(output).map_err(|_| "reader: output still shared")?;
        let pty = pty.lock().take();
        return start_thread(term, p, output, pty).map(Some);
    }
    start_thread(term, p, output, pty).map(Some)
}

fn start_thread(
    term: Arc<dyn Owner>,
    p: Arc<Proc>,
    output: std::os::fd::OwnedFd,
    pty: Option<hermes_exec::PtyKeepAlive>,
) -> Result<JoinHandle<()>, String> {
    std::thread::Builder::new()
        .name(format!("ht-{}", p.id))
        .spawn(move || {
            let mut feed = Feed::new(term.clone(), p.clone());
            let opts = feed.opts();
            let (code, ended) = pump(p.pid, &output, term.backend(), &opts, &mut |c| feed.data(c));
            finish(feed, code, ended, Arc::new(output), pty);
        })
        .map_err(|e| format!("cannot start the reader thread: {e}"))
}

/// Record how the process ended, wake waiters, send `process.completed`.
fn finish(
    mut feed: Feed,
    code: i32,
    ended: Ended,
    output: Arc<std::os::fd::OwnedFd>,
    pty: Option<hermes_exec::PtyKeepAlive>,
) {
    let term = feed.term.clone();
    feed.streamer.finish(&|e| term.emit(e));
    let p = feed.p.clone();
    drop(pty);
    drop(output);
    let info = {
        let mut s = p.state.lock();
        let source = s.kill_source;
        let info = ExitInfo {
            code,
            reason: match (ended, source) {
                (Ended::TimedOut, _) => "timeout",
                (_, Some(_)) => "killed",
                _ => "exited",
            },
            source: if ended == Ended::TimedOut {
                Some("timeout")
            } else {
                source
            },
        };
        s.exit = Some(info.clone());
        s.finished_at = Some(Instant::now());
        info
    };
    p.cv.notify_all();
    let notify = p.state.lock().notify;
    if notify && info.source != Some("shutdown") {
        term.emit(json!({
            "type": "process.completed",
            "session_id": p.id,
            "task_id": p.task_id,
            "command": p.command,
            "exit_code": info.code,
            "completion_reason": info.reason,
            "termination_source": info.source,
            "output": p.tail(2000),
        }));
    }
}

fn scan_watch(term: &dyn Owner, p: &Proc, lines: &[String]) {
    let mut s = p.state.lock();
    let interval = term.procs().watch_interval;
    let Some(w) = s.watch.as_mut() else { return };
    if w.disabled {
        return;
    }
    let mut hit: Option<(String, Vec<&String>)> = None;
    for l in lines {
        if let Some(pat) = w.patterns.iter().find(|pat| l.contains(pat.as_str())) {
            match &mut hit {
                None => hit = Some((pat.clone(), vec![l])),
                Some((_, ls)) if ls.len() < 20 => ls.push(l),
                _ => {}
            }
        }
    }
    let Some((pattern, matched)) = hit else {
        return;
    };
    let now = Instant::now();
    let window_open = w
        .last_emit
        .is_none_or(|t| now.duration_since(t) >= interval);
    if !window_open || !term.procs().global_allow() {
        w.suppressed += 1;
        if !w.window_dropped {
            w.window_dropped = true;
            w.strikes += 1;
        }
        if w.strikes >= MAX_STRIKES {
            w.disabled = true;
            s.notify = true;
            drop(s);
            term.emit(json!({
                "type": "process.watch_disabled",
                "session_id": p.id,
                "task_id": p.task_id,
                "reason": "too many matches; watching stopped, you will be notified on completion instead",
            }));
        }
        return;
    }
    if !w.window_dropped {
        w.strikes = 0;
    }
    w.window_dropped = false;
    w.last_emit = Some(now);
    let suppressed = std::mem::take(&mut w.suppressed);
    let text = matched
        .iter()
        .map(|l| l.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let text = redact_secrets(tail_chars(&text, 2000));
    drop(s);
    term.emit(json!({
        "type": "process.watch_match",
        "session_id": p.id,
        "task_id": p.task_id,
        "command": p.command,
        "pattern": pattern,
        "output": text,
        "suppressed": suppressed,
    }));
}

#[cfg(test)]
mod tests {
    use super::{tail_chars, utf8_split};

    #[test]
    fn utf8_split_keeps_partial_characters() {
        assert_eq!(utf8_split(b"abc"), 3);
        assert_eq!(utf8_split(&[b'a', 0xC3]), 1);
        assert_eq!(utf8_split(&[b'a', 0xC3, 0xA9]), 3);
        assert_eq!(utf8_split(&[0xE2, 0x82]), 0);
        assert_eq!(utf8_split(&[0xF0, 0x9F, 0x98, 0x80]), 4);
        assert_eq!(tail_chars("héllo", 3), "llo");
    }
}
