//! `ht_status`: the C status codes, and how each core error kind maps to one.

use hermes_core::ErrorKind;

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

impl From<ErrorKind> for Status {
    fn from(k: ErrorKind) -> Status {
        match k {
            ErrorKind::InvalidArgument => Status::InvalidArgument,
            ErrorKind::InvalidUtf8 => Status::InvalidUtf8,
            ErrorKind::InvalidJson => Status::InvalidJson,
            ErrorKind::NotFound => Status::NotFound,
            ErrorKind::Conflict => Status::Conflict,
            ErrorKind::Closed => Status::Closed,
            ErrorKind::Cancelled => Status::Cancelled,
            ErrorKind::Timeout => Status::Timeout,
            ErrorKind::Panic => Status::Panic,
            ErrorKind::Internal => Status::Internal,
            ErrorKind::Unsupported => Status::Unsupported,
        }
    }
}
