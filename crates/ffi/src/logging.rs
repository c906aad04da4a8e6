//! Logging: `tracing` inside; a host log handler receives what the library
//! logs. Messages go through a queue to a dedicated `ht-log` thread, so host
//! code never runs while the library holds a lock, and a slow handler never
//! slows a dispatch (when the queue is full, messages are dropped and counted).

use parking_lot::{Mutex, RwLock};
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

use crate::host::SendPtr;

pub type LogFn =
    unsafe extern "C" fn(user_data: *mut c_void, level: i32, message: *const u8, len: usize);
pub type LogFreeFn = unsafe extern "C" fn(user_data: *mut c_void);

struct Sink {
    func: LogFn,
    user_data: SendPtr,
    free: Option<LogFreeFn>,
}

impl Drop for Sink {
    fn drop(&mut self) {
        if let Some(f) = self.free {
            // SAFETY: `f` is the free function the host gave with this
            // user_data. A Sink is shared only through Arc, so this runs once,
            // after the last line delivered through it (the log thread holds
            // a clone while it calls the handler).
            unsafe { f(self.user_data.0) }
        }
    }
}

enum Msg {
    /// A line, with the handler installed when it was logged: removing or
    /// replacing the handler never loses lines already queued for it.
    Line(i32, String, Arc<Sink>),
    Flush(std::sync::mpsc::Sender<()>),
}

struct Logger {
    tx: SyncSender<Msg>,
    sink: Arc<RwLock<Option<Arc<Sink>>>>,
}

static LOGGER: once_cell::sync::OnceCell<Logger> = once_cell::sync::OnceCell::new();
static INSTALL: Mutex<()> = Mutex::new(());
/// 1 error .. 5 trace; messages above it are not formatted at all.
static MAX_LEVEL: AtomicU8 = AtomicU8::new(3);
pub static DROPPED: AtomicU64 = AtomicU64::new(0);

pub fn parse_level(s: &str) -> Option<u8> {
    Some(match s {
        "error" => 1,
        "warn" => 2,
        "info" => 3,
        "debug" => 4,
        "trace" => 5,
        _ => return None,
    })
}

pub fn set_level(s: &str) {
    if let Some(l) = parse_level(s) {
        MAX_LEVEL.store(l, Ordering::Relaxed);
    }
}

fn level_num(l: &Level) -> u8 {
    match *l {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

struct HostLayer;

struct Fmt(String);
impl Visit for Fmt {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write;
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            self.0.push_str(&format!(" {}={value}", field.name()));
        }
    }
}

impl<S: Subscriber> Layer<S> for HostLayer {
    fn enabled(&self, meta: &tracing::Metadata<'_>, _: Context<'_, S>) -> bool {
        level_num(meta.level()) <= MAX_LEVEL.load(Ordering::Relaxed)
            && (meta.target().starts_with("hermes_"))
    }
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let Some(logger) = LOGGER.get() else { return };
        // No handler: nothing to format or queue.
        let Some(sink) = logger.sink.read().clone() else {
            return;
        };
        let mut f = Fmt(String::new());
        event.record(&mut f);
        let line = f.0;
        match logger.tx.try_send(Msg::Line(
            level_num(event.metadata().level()) as i32,
            line,
            sink,
        )) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                DROPPED.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

fn logger() -> &'static Logger {
    LOGGER.get_or_init(|| {
        let (tx, rx) = sync_channel::<Msg>(4096);
        let sink: Arc<RwLock<Option<Arc<Sink>>>> = Arc::new(RwLock::new(None));
        let spawned = std::thread::Builder::new()
            .name("ht-log".into())
            .spawn(move || {
                while let Ok(msg) = rx.recv() {
                    match msg {
                        Msg::Line(level, line, s) => {
                            // No lock is held while the host runs: a swap never waits for host code.
                            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(
                                // SAFETY: `func` is the host's log handler set with this
                                // user_data; the message's Arc keeps the Sink (and so the
                                // user_data, not yet freed) alive across the call, and
                                // `line` outlives it ("borrowed for this invocation").
                                || unsafe {
                                    (s.func)(s.user_data.0, level, line.as_ptr(), line.len())
                                },
                            ));
                        }
                        Msg::Flush(done) => {
                            let _ = done.send(());
                        }
                    }
                }
            });
        if spawned.is_err() {
            // No thread: lines are dropped and counted (never a panic).
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
        let _ =
            tracing::subscriber::set_global_default(tracing_subscriber::registry().with(HostLayer));
        Logger { tx, sink }
    })
}

/// Install (or with `None`, remove) the host log handler. Never waits for
/// host code (a JS host may call this from the thread its handler needs).
/// The previous handler's free function runs once its last line was
/// delivered (on the log thread, or here if it is idle).
pub fn set_handler(
    func: Option<LogFn>,
    user_data: *mut c_void,
    free: Option<LogFreeFn>,
    level: Option<u8>,
) {
    let _g = INSTALL.lock();
    let l = logger();
    if let Some(level) = level {
        MAX_LEVEL.store(level, Ordering::Relaxed);
    }
    let new = func.map(|func| {
        Arc::new(Sink {
            func,
            user_data: SendPtr(user_data),
            free,
        })
    });
    let old = std::mem::replace(&mut *l.sink.write(), new);
    drop(old);
}

/// Wait until every message logged so far was delivered.
pub fn flush() {
    if let Some(l) = LOGGER.get() {
        let (tx, rx) = std::sync::mpsc::channel();
        if l.tx.send(Msg::Flush(tx)).is_ok() {
            let _ = rx.recv_timeout(std::time::Duration::from_secs(5));
        }
    }
}
