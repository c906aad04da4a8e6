//! The server's bounds and its HTTP settings, each a key of the config's
//! `mcp_serve` object (CLI) or of `ht_runtime_serve_mcp`'s options (C), with
//! a documented default.
//!
//! Why: an endpoint that any client can hold open, fill with sessions or
//! starve of background processes is a denial of service waiting to happen.
//! Every resource a client can make the server hold has a bound here, and a
//! request over a bound gets an error that names the key to raise.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::auth::Auth;

/// Bounds of one served runtime. Defaults in [`Limits::default`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `header_timeout_s` (10): a connection must send a request's headers
    /// within this time of opening or of its previous request.
    pub header_timeout: Duration,
    /// `idle_timeout_s` (60): a connection with no request in progress for
    /// this long is closed.
    pub idle_timeout: Duration,
    /// `max_connections` (256): connections held open at once. At the bound
    /// the longest-idle connection is closed for the new one; when none is
    /// idle the new one is refused.
    pub max_connections: usize,
    /// `max_sessions` (64): MCP sessions at once; an `initialize` over it is
    /// refused with 503 (idle sessions are closed first).
    pub max_sessions: usize,
    /// `session_idle_timeout_s` (600): a session with no request and no call
    /// running for this long is closed and its task's state (cwd,
    /// environment, background processes) released.
    pub session_idle_timeout: Duration,
    /// `max_body_bytes` (4 MiB): the largest request body (413 above).
    pub max_body_bytes: usize,
    /// `session_max_calls` (16): tool calls one session may have running.
    pub session_max_calls: usize,
    /// `session_max_processes` (8): background processes one session may
    /// have running at once.
    pub session_max_processes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 256,
            max_sessions: 64,
            session_idle_timeout: Duration::from_secs(600),
            max_body_bytes: 4 * 1024 * 1024,
            session_max_calls: 16,
            session_max_processes: 8,
        }
    }
}

/// How the HTTP endpoint admits requests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpOptions {
    /// `auth` (`"token"`, the default, or `"none"`), `token`, `token_file`.
    pub auth: Auth,
    /// `token_dir`: where a generated token's file goes (default
    /// `$XDG_RUNTIME_DIR/hermes-tools`, else `<tmp>/hermes-tools-mcp-<uid>`).
    pub token_dir: Option<PathBuf>,
    /// `allowed_origins`: browser origins accepted besides loopback ones
    /// (`"https://app.example:443"`, `"null"`); exact match.
    pub allowed_origins: Vec<String>,
}

/// The keys [`apply`] knows.
pub const KEYS: &[&str] = &[
    "auth",
    "token",
    "token_file",
    "token_dir",
    "allowed_origins",
    "header_timeout_s",
    "idle_timeout_s",
    "max_connections",
    "max_sessions",
    "session_idle_timeout_s",
    "max_body_bytes",
    "session_max_calls",
    "session_max_processes",
];

fn count(m: &Map<String, Value>, k: &str, min: u64) -> Result<Option<u64>, String> {
    match m.get(k) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .filter(|n| *n >= min)
            .map(Some)
            .ok_or_else(|| format!("{k} must be a whole number of at least {min}")),
    }
}

/// Apply the keys of `m` that are in [`KEYS`] (others are the caller's).
pub fn apply(
    m: &Map<String, Value>,
    limits: &mut Limits,
    http: &mut HttpOptions,
) -> Result<(), String> {
    let secs = |k: &str| count(m, k, 1).map(|o| o.map(Duration::from_secs));
    if let Some(d) = secs("header_timeout_s")? {
        limits.header_timeout = d;
    }
    if let Some(d) = secs("idle_timeout_s")? {
        limits.idle_timeout = d;
    }
    if let Some(d) = secs("session_idle_timeout_s")? {
        limits.session_idle_timeout = d;
    }
    let n = |k: &str| count(m, k, 1).map(|o| o.map(|n| usize::try_from(n).unwrap_or(usize::MAX)));
    if let Some(v) = n("max_connections")? {
        limits.max_connections = v;
    }
    if let Some(v) = n("max_sessions")? {
        limits.max_sessions = v;
    }
    if let Some(v) = n("max_body_bytes")? {
        limits.max_body_bytes = v;
    }
    if let Some(v) = n("session_max_calls")? {
        limits.session_max_calls = v;
    }
    if let Some(v) = count(m, "session_max_processes", 0)? {
        limits.session_max_processes = usize::try_from(v).unwrap_or(usize::MAX);
    }
    if let Some(v) = m.get("allowed_origins") {
        let list = v
            .as_array()
            .and_then(|a| {
                a.iter()
                    .map(|o| o.as_str().map(String::from))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or("allowed_origins must be an array of origin strings")?;
        http.allowed_origins = list;
    }
    if let Some(v) = m.get("token_dir") {
        http.token_dir = Some(PathBuf::from(v.as_str().ok_or("token_dir must be a path")?));
    }
    let token = match (m.get("token"), m.get("token_file")) {
        (Some(_), Some(_)) => return Err("give token or token_file, not both".into()),
        (Some(t), None) => {
            let t = t
                .as_str()
                .ok_or("token must be a string")?
                .trim()
                .to_string();
            crate::auth::HttpAuth::with_token(&t).map_err(|e| format!("token: {e}"))?;
            Some(t)
        }
        (None, Some(f)) => {
            let f = f.as_str().ok_or("token_file must be a path")?;
            Some(read_token_file(std::path::Path::new(f))?)
        }
        (None, None) => None,
    };
    match (m.get("auth").map(Value::as_str), token) {
        (None | Some(Some("token")), Some(t)) => http.auth = Auth::Token(t),
        (None, None) => {}
        (Some(Some("token")), None) => http.auth = Auth::Generate,
        (Some(Some("none")), None) => http.auth = Auth::None,
        (Some(Some("none")), Some(_)) => {
            return Err("auth \"none\" with a token: give one or the other".into());
        }
        _ => return Err("auth must be \"token\" (the default) or \"none\" (loopback only)".into()),
    }
    Ok(())
}

/// A host's token file: its first line, trimmed.
pub fn read_token_file(path: &std::path::Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    crate::auth::HttpAuth::with_token(&token).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<(Limits, HttpOptions), String> {
        let mut l = Limits::default();
        let mut h = HttpOptions::default();
        apply(v.as_object().unwrap(), &mut l, &mut h).map(|()| (l, h))
    }

    #[test]
    fn keys_set_limits_and_bad_values_say_which_key() {
        let (l, h) = parse(json!({"max_sessions": 3, "session_max_processes": 0, "idle_timeout_s": 5, "auth": "none"})).unwrap();
        assert_eq!(l.max_sessions, 3);
        assert_eq!(l.session_max_processes, 0);
        assert_eq!(l.idle_timeout, Duration::from_secs(5));
        assert_eq!(h.auth, Auth::None);
        let e = parse(json!({"max_sessions": 0})).unwrap_err();
        assert!(e.contains("max_sessions"), "{e}");
        let e = parse(json!({"auth": "maybe"})).unwrap_err();
        assert!(e.contains("auth"), "{e}");
        let (_, h) = parse(json!({"token": "0123456789abcdef0123"})).unwrap();
        assert_eq!(h.auth, Auth::Token("0123456789abcdef0123".into()));
    }
}
