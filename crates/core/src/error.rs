//! The error type of the core (and of the Rust API built on it): a kind
//! plus a one-line message that names the field or value at fault.

use std::fmt;

/// What kind of failure an [`Error`] is. The C ABI maps each kind to its
/// status code; nothing here knows the codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A required argument was missing or out of range.
    InvalidArgument,
    /// A string argument was not valid UTF-8.
    InvalidUtf8,
    /// A JSON argument did not parse or has the wrong shape.
    InvalidJson,
    /// The named tool, toolset, call or object does not exist (or was already answered).
    NotFound,
    /// The name is owned by another toolset (use `"override": true`).
    Conflict,
    /// The runtime is closing or closed.
    Closed,
    /// The operation was cancelled.
    Cancelled,
    /// The operation timed out.
    Timeout,
    /// A panic was caught: a bug in the library.
    Panic,
    /// Any other internal failure.
    Internal,
    /// The request is valid but not supported by this build or configuration.
    Unsupported,
}

/// An API-level error: a status plus a one-line message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: one_line(message.into()),
        }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }
    pub fn json(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidJson, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }
    pub fn closed() -> Self {
        Self::new(ErrorKind::Closed, "runtime is closed")
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Parse JSON text, reporting the position of the problem.
pub fn parse_json<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Error::json(format!("{what}: {e}")))
}

/// The longest wait any timeout may ask for (one year): longer values are
/// refused, so deadlines (`Instant + Duration`) can never overflow.
pub const MAX_WAIT_SECS: f64 = 365.0 * 24.0 * 3600.0;

/// Seconds from a host as a `Duration`: finite, `> 0` (or `>= 0` when
/// `allow_zero`), at most [`MAX_WAIT_SECS`].
pub fn seconds(what: &str, v: f64, allow_zero: bool) -> Result<std::time::Duration> {
    let ok = v.is_finite() && (v > 0.0 || (allow_zero && v == 0.0)) && v <= MAX_WAIT_SECS;
    if ok {
        Ok(std::time::Duration::from_secs_f64(v))
    } else {
        Err(Error::invalid(format!(
            "{what}: must be a number of seconds {} {MAX_WAIT_SECS} (one year), got {v}",
            if allow_zero {
                "between 0 and"
            } else {
                "above 0 and at most"
            }
        )))
    }
}

/// Error messages are one line (the C header promises it): control
/// characters, newlines included, become spaces.
pub fn one_line(s: String) -> String {
    if s.chars().any(char::is_control) {
        s.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect()
    } else {
        s
    }
}
