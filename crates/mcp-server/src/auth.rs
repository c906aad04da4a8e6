//! Bearer-token authentication of the HTTP endpoint (the resource-server
//! side of the MCP authorization specification).
//!
//! Why: a loopback port is reachable by every local account, every container
//! that shares the host network and anything that can make a loopback
//! request; without a credential any of them runs commands as the server's
//! user. So every request to `/mcp` must carry `Authorization: Bearer
//! <token>`. The token is the host's (a file it gives, or the C options),
//! or 32 random bytes from the OS generated at start and written to a file
//! only the owner can read (0600, created exclusively, in a 0700 directory
//! owned by the user), removed when the server stops. A refused request gets
//! `401` with `WWW-Authenticate: Bearer resource_metadata="..."` pointing at
//! the protected-resource metadata (RFC 9728) served at
//! `/.well-known/oauth-protected-resource`, so standard clients know what
//! failed. Tokens are compared in constant time.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Where the HTTP endpoint's token comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Auth {
    /// Generate one at start and write it to a private file (the default).
    #[default]
    Generate,
    /// The host's token (from `--token-file`, the config or the C options).
    Token(String),
    /// No authentication: loopback only, and said loudly.
    None,
}

/// The shortest token a host may give (a guessable token is no token).
pub const MIN_TOKEN_LEN: usize = 16;

/// The authentication an HTTP server runs with, prepared before it starts
/// (so its caller can tell where the token is). Dropping it removes a
/// generated token's file.
#[derive(Debug)]
pub struct HttpAuth {
    token: Option<String>,
    file: Option<PathBuf>,
    generated: bool,
}

impl HttpAuth {
    /// No authentication.
    pub fn none() -> HttpAuth {
        HttpAuth {
            token: None,
            file: None,
            generated: false,
        }
    }

    /// The host's own token.
    pub fn with_token(token: &str) -> Result<HttpAuth, String> {
        let token = token.trim();
        if token.len() < MIN_TOKEN_LEN || !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(format!(
                "the bearer token must be at least {MIN_TOKEN_LEN} printable ASCII characters without spaces"
            ));
        }
        Ok(HttpAuth {
            token: Some(token.to_string()),
            file: None,
            generated: false,
        })
    }

    /// A new random token written to a fresh file in `dir` (none: the
    /// default directory, [`default_dir`]); `tag` names the file.
    pub fn generate(dir: Option<&Path>, tag: &str) -> Result<HttpAuth, String> {
        let mut raw = [0u8; 32];
        getrandom::fill(&mut raw).map_err(|e| format!("cannot get random bytes: {e}"))?;
        let token: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        let dir = match dir {
            Some(d) => d.to_path_buf(),
            None => default_dir(),
        };
        private_dir(&dir)?;
        let file = dir.join(format!("mcp-{tag}-{}.token", std::process::id()));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&file)
            .map_err(|e| format!("cannot create the token file {}: {e}", file.display()))?;
        f.write_all(token.as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(|e| format!("cannot write the token file {}: {e}", file.display()))?;
        Ok(HttpAuth {
            token: Some(token),
            file: Some(file),
            generated: true,
        })
    }

    /// Whether requests need a token.
    pub fn required(&self) -> bool {
        self.token.is_some()
    }

    /// The generated token's file (None when the host gave the token or
    /// there is none).
    pub fn token_file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The token (for the host that asked for it to be generated and wants
    /// it without reading the file).
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Whether an `Authorization` header value carries the token.
    pub fn accepts(&self, header: Option<&[u8]>) -> bool {
        let Some(want) = &self.token else {
            return true;
        };
        let Some(h) = header else {
            return false;
        };
        // The scheme is case-insensitive (RFC 6750 / RFC 9110).
        if h.len() < 7 || !h[..7].eq_ignore_ascii_case(b"bearer ") {
            return false;
        }
        let mut given = &h[7..];
        while let [b' ', rest @ ..] = given {
            given = rest;
        }
        constant_time_eq(given, want.as_bytes())
    }
}

impl Drop for HttpAuth {
    fn drop(&mut self) {
        if self.generated
            && let Some(f) = &self.file
        {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// Compare without an early exit, so the time taken does not tell how much
/// of a guess was right (only its length, which is fixed for generated
/// tokens).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= std::hint::black_box(x ^ y);
    }
    std::hint::black_box(diff) == 0
}

/// `$XDG_RUNTIME_DIR/hermes-tools` when set, else `<tmp>/hermes-tools-mcp-<uid>`.
pub fn default_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join("hermes-tools"),
        None => {
            // SAFETY: getuid has no preconditions and cannot fail.
            let uid = unsafe { libc::getuid() };
            std::env::temp_dir().join(format!("hermes-tools-mcp-{uid}"))
        }
    }
}

/// Make `dir` (mode 0700) or check an existing one: a directory (not a
/// symlink), owned by us, not readable or writable by anyone else.
fn private_dir(dir: &Path) -> Result<(), String> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
    }
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot inspect {}: {e}", dir.display()))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if !meta.is_dir() || meta.uid() != me {
        return Err(format!(
            "{} is not a directory owned by this user: refusing to put the token there",
            dir.display()
        ));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot make {} private: {e}", dir.display()))?;
    }
    Ok(())
}

/// The path of the protected-resource metadata of the endpoint at `path`
/// (RFC 9728: the well-known prefix, then the resource's path).
pub fn metadata_path(path: &str) -> String {
    format!("/.well-known/oauth-protected-resource{path}")
}

/// The protected-resource metadata document (RFC 9728) of `resource`. The
/// token is given out of band (a file, the host), so no authorization
/// server is named.
pub fn metadata(resource: &str) -> serde_json::Value {
    serde_json::json!({
        "resource": resource,
        "authorization_servers": [],
        "bearer_methods_supported": ["header"],
        "resource_name": "hermes-tools MCP server",
        "resource_documentation": "https://github.com/hermes-tools/hermes-tools#mcp-server",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_whole_tokens_only() {
        let a = HttpAuth::with_token("0123456789abcdef0123").unwrap();
        assert!(a.accepts(Some(b"Bearer 0123456789abcdef0123")));
        assert!(a.accepts(Some(b"bearer 0123456789abcdef0123")));
        assert!(!a.accepts(Some(b"Bearer 0123456789abcdef012")));
        assert!(!a.accepts(Some(b"Bearer 0123456789abcdef01234")));
        assert!(!a.accepts(Some(b"Basic 0123456789abcdef0123")));
        assert!(!a.accepts(Some(b"0123456789abcdef0123")));
        assert!(!a.accepts(None));
        assert!(HttpAuth::none().accepts(None));
    }

    #[test]
    fn short_or_spaced_host_tokens_are_refused() {
        assert!(HttpAuth::with_token("short").is_err());
        assert!(HttpAuth::with_token("with a space in it, long enough").is_err());
    }

    #[test]
    fn generated_token_file_is_private_and_removed() {
        let dir = std::env::temp_dir().join(format!("ht-auth-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let a = HttpAuth::generate(Some(&dir), "t").unwrap();
        let f = a.token_file().unwrap().to_path_buf();
        let meta = std::fs::metadata(&f).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        let text = std::fs::read_to_string(&f).unwrap();
        assert_eq!(text.len(), 64);
        assert_eq!(Some(text.as_str()), a.token());
        let b = HttpAuth::generate(Some(&dir), "t2").unwrap();
        assert_ne!(a.token(), b.token());
        drop(a);
        assert!(!f.exists());
        drop(b);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_loose_token_dir_is_made_private() {
        let dir = std::env::temp_dir().join(format!("ht-auth-loose-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let a = HttpAuth::generate(Some(&dir), "t").unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        drop(a);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
