//! Status codes and the library error type shared by the Rust API and the C ABI.

use std::fmt;

/// Result status of every fallible C function. Values are ABI: append only,
/// never renumber.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Success.
    Ok = 0,
    /// A required pointer was NULL or an argument is out of range.
    InvalidArgument = 1,
    /// A string argument was not valid UTF-8.
    InvalidUtf8 = 2,
    /// A JSON argument did not parse or has the wrong shape.
    InvalidJson = 3,
    /// The named tool, toolset, call or object does not exist (or was already answered).
    NotFound = 4,
    /// The name is owned by another toolset (use `"override": true`).
    Conflict = 5,
    /// The runtime is closing or closed.
    Closed = 6,
    /// The operation was cancelled (ht_runtime_cancel or runtime free).
    Cancelled = 7,
    /// The operation timed out.
    Timeout = 8,
    /// A tool reported an error (reserved; dispatch returns OK with an error result).
    ToolError = 9,
    /// A panic was caught at the C boundary: a bug in the library.
    Panic = 10,
    /// Any other internal failure.
    Internal = 11,
    /// The request is valid but not supported by this build or configuration.
    Unsupported = 12,
}

/// An API-level error: a status plus a one-line message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

impl Error {
    pub fn new(status: Status, message: impl Into<String>) -> Self {
        Error {
            status,
            message: message.into(),
        }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Status::InvalidArgument, message)
    }
    pub fn json(message: impl Into<String>) -> Self {
        Self::new(Status::InvalidJson, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(Status::NotFound, message)
    }
    pub fn closed() -> Self {
        Self::new(Status::Closed, "runtime is closed")
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.status, self.message)
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
