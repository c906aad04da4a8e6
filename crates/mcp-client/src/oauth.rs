//! OAuth 2.1 for streamable HTTP servers, per the MCP authorization
//! specification.
//!
//! The protocol work is rmcp's `auth` support (the official SDK's, over the
//! oauth2 crate): protected-resource metadata (RFC 9728) and
//! authorization-server metadata (RFC 8414 / OpenID discovery), dynamic
//! client registration (RFC 7591), PKCE S256, the resource indicator
//! (RFC 8707), `state` bound to the PKCE verifier, refresh, and scope
//! accumulation for step-up. Writing that again would only add bugs.
//!
//! What is ours, and why it lives here:
//! - *When* to authorize: only after the server said so on the wire (a 401,
//!   or a 403 `insufficient_scope`), with the `WWW-Authenticate` challenge
//!   seeding discovery and scopes; at most a few times per connection or
//!   call, so a server that keeps refusing cannot loop us.
//! - *The browser step* belongs to the host: the authorization URL goes to
//!   the host's OAuth handler (`ToolServices::server_request`, kind
//!   `"oauth"`), which answers with the redirect URL (or the code). The
//!   redirect is checked against the configured redirect URI; a `state` we
//!   did not issue is refused by rmcp's state store (fail closed).
//! - *Where tokens live*: a file per server only the user can read (0600 in a
//!   0700 folder), the host (kind `"oauth_tokens"`), or memory.
//! - *Secrets stay secret*: every message that leaves this module goes
//!   through the runtime's redaction (`hermes_approval::redact_secrets`) and
//!   has the known token values masked; tokens are never logged.

use parking_lot::Mutex;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hermes_core::{CancelToken, ToolServices};
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationCallback, AuthorizationManager, ClientCredentialsConfig,
    CredentialStore, InMemoryCredentialStore, OAuthClientConfig, StoredCredentials,
    WWWAuthenticateParams,
};

use crate::config::OAuthConfig;

/// Authorizations tried for one connection attempt or one call before giving
/// up (a server that answers 401/403 whatever token it gets).
pub const MAX_AUTHORIZATIONS: u32 = 3;

/// What the server said when it refused a request.
#[derive(Clone, Debug)]
pub struct Challenge {
    /// The `WWW-Authenticate` header value.
    pub header: String,
    /// A 403 `insufficient_scope` (step-up) rather than a 401.
    pub insufficient_scope: bool,
}

impl Challenge {
    /// A challenge from its `WWW-Authenticate` value: `error="insufficient_scope"`
    /// makes it a step-up.
    pub fn new(header: &str) -> Challenge {
        let insufficient_scope = reqwest::Url::parse("http://localhost/")
            .map(|base| WWWAuthenticateParams::parse(header, &base).is_insufficient_scope())
            .unwrap_or(false);
        Challenge {
            header: header.to_string(),
            insufficient_scope,
        }
    }
}

/// The challenge of a failed handshake (rmcp finds the typed 401/403 in
/// its transport error).
pub fn init_challenge(e: &rmcp::service::ClientInitializeError) -> Option<Challenge> {
    e.auth_challenge().map(Challenge::new)
}

/// The challenge of a failed request after the handshake.
pub fn call_challenge(e: &rmcp::ServiceError) -> Option<Challenge> {
    e.auth_challenge().map(Challenge::new)
}

/// One HTTP server's authorization: rmcp's manager (shared with every
/// connection's transport), the settings, and the host.
pub struct Auth {
    server: String,
    url: String,
    cfg: OAuthConfig,
    services: Option<Arc<dyn ToolServices>>,
    closed: CancelToken,
    /// Built on first use (it may fetch metadata).
    manager: tokio::sync::Mutex<Option<Arc<tokio::sync::Mutex<AuthorizationManager>>>>,
    /// The secrets seen so far (tokens, client secret), masked in every message.
    secrets: Arc<Mutex<Vec<String>>>,
    /// The scopes the last authorization asked for.
    requested: Mutex<Vec<String>>,
    http: reqwest::Client,
}

impl Auth {
    pub fn new(
        server: &str,
        url: &str,
        cfg: OAuthConfig,
        services: Option<Arc<dyn ToolServices>>,
        closed: CancelToken,
        http: reqwest::Client,
    ) -> Auth {
        let secrets: Vec<String> = cfg.client_secret.iter().cloned().collect();
        Auth {
            server: server.to_string(),
            url: url.to_string(),
            cfg,
            services,
            closed,
            manager: tokio::sync::Mutex::new(None),
            secrets: Arc::new(Mutex::new(secrets)),
            requested: Mutex::new(Vec::new()),
            http,
        }
    }

    /// `text` as it may be shown: the runtime's redaction, then every token
    /// and secret this server's authorization has seen masked.
    pub fn redact(&self, text: &str) -> String {
        redact_with(&self.secrets, text)
    }

    /// The manager, built (and its stored tokens loaded) on first use.
    async fn manager(&self) -> Result<Arc<tokio::sync::Mutex<AuthorizationManager>>, String> {
        let mut slot = self.manager.lock().await;
        if let Some(m) = slot.as_ref() {
            return Ok(m.clone());
        }
        // rmcp's default HTTP client refuses metadata URLs on loopback or
        // private addresses unless the server's own URL is one of them.
        let mut m = AuthorizationManager::new(self.url.as_str())
            .await
            .map_err(|e| self.describe(&e))?;
        m.set_credential_store(Store {
            kind: self.store_kind(),
            secrets: self.secrets.clone(),
        });
        let m = Arc::new(tokio::sync::Mutex::new(m));
        *slot = Some(m.clone());
        Ok(m)
    }

    fn store_kind(&self) -> StoreKind {
        match self.cfg.token_store() {
            "host" => StoreKind::Host {
                services: self.services.clone(),
                server: self.server.clone(),
                closed: self.closed.clone(),
            },
            "memory" => StoreKind::Memory(InMemoryCredentialStore::new()),
            _ => StoreKind::File(self.token_file()),
        }
    }

    /// `<token_dir>/<server>-<hash of url>.json`: per server, and a server
    /// whose URL changed does not get another resource's tokens.
    pub fn token_file(&self) -> PathBuf {
        let dir = match &self.cfg.token_dir {
            Some(d) => PathBuf::from(d),
            None => state_dir().join("hermes-tools").join("mcp-oauth"),
        };
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.url.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        dir.join(format!(
            "{}-{:08x}.json",
            crate::names::sanitize(&self.server),
            h as u32
        ))
    }

    /// An HTTP client for the transport that adds the bearer token (and
    /// refreshes it once when the server rejects it).
    pub async fn client(&self) -> Result<AuthClient<reqwest::Client>, String> {
        let shared = self.manager().await?;
        // AuthClient::new wants a manager of its own; it gets ours, shared,
        // so tokens obtained later reach the running transport.
        let placeholder = AuthorizationManager::new(self.url.as_str())
            .await
            .map_err(|e| self.describe(&e))?;
        let mut client = AuthClient::new(self.http.clone(), placeholder);
        client.auth_manager = shared;
        Ok(client)
    }

    /// Obtain a token after `challenge`: client credentials, or the
    /// authorization-code flow with the host's browser step. On success the
    /// token is in the store and the transport sends it from now on.
    pub async fn authorize(&self, challenge: &Challenge) -> Result<(), String> {
        let shared = self.manager().await?;
        let mut m = shared.lock().await;
        let r = if self.cfg.client_credentials() {
            self.client_credentials(&mut m, challenge).await
        } else {
            self.authorization_code(&mut m, challenge).await
        };
        r.map_err(|e| self.redact(&e))
    }

    async fn client_credentials(
        &self,
        m: &mut AuthorizationManager,
        challenge: &Challenge,
    ) -> Result<(), String> {
        let resolution = m
            .resolve_metadata_from_challenge(Some(&challenge.header))
            .await
            .map_err(|e| self.describe(&e))?;
        m.set_metadata(resolution.metadata);
        let mut scopes = self.cfg.scopes.clone();
        if scopes.is_empty() {
            scopes = m.select_initial_scopes(&[]).await;
        }
        let config = ClientCredentialsConfig::ClientSecret {
            client_id: self.cfg.client_id.clone().unwrap_or_default(),
            client_secret: self.cfg.client_secret.clone().unwrap_or_default(),
            scopes,
            // The resource indicator (RFC 8707): the server's URL, as rmcp
            // sends it in the authorization-code flow.
            resource: Some(self.url.clone()),
        };
        m.validate_client_credentials_metadata(&config)
            .map_err(|e| self.describe(&e))?;
        m.configure_client_credentials(&config)
            .map_err(|e| self.describe(&e))?;
        m.exchange_client_credentials(&config)
            .await
            .map_err(|e| self.describe(&e))?;
        tracing::info!(server = %self.server, "MCP server authorized (client credentials)");
        Ok(())
    }

    async fn authorization_code(
        &self,
        m: &mut AuthorizationManager,
        challenge: &Challenge,
    ) -> Result<(), String> {
        let params = reqwest::Url::parse(&self.url)
            .map(|base| WWWAuthenticateParams::parse(&challenge.header, &base))
            .ok();
        let challenged_scope = params.as_ref().and_then(|p| p.scope.clone());
        let resolution = m
            .resolve_metadata_from_challenge(Some(&challenge.header))
            .await
            .map_err(|e| self.describe(&e))?;
        let supports_cimd = resolution
            .metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        m.set_metadata(resolution.metadata);
        // The scopes: the configured ones, else what the challenge names,
        // else the protected resource's `scopes_supported`; a later
        // authorization (step-up, a revoked grant) asks for those plus
        // everything asked before (SEP-2350), so a step-up never loses what
        // was granted.
        let wanted = if self.cfg.scopes.is_empty() {
            m.select_initial_scopes(&[]).await
        } else {
            self.cfg.scopes.clone()
        };
        let mut scopes = self.requested.lock().clone();
        for s in challenged_scope
            .iter()
            .flat_map(|s| s.split_whitespace())
            .map(str::to_string)
            .chain(wanted)
        {
            if !scopes.contains(&s) {
                scopes.push(s);
            }
        }
        let redirect_uri = self.cfg.redirect_uri().to_string();
        let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        // Registration, in the specification's order: a pre-registered
        // client, a client metadata document, dynamic registration.
        if let Some(id) = &self.cfg.client_id {
            let mut c = OAuthClientConfig::new(id.clone(), redirect_uri.clone())
                .with_scopes(scopes.clone());
            if let Some(secret) = &self.cfg.client_secret {
                c = c.with_client_secret(secret.clone());
            }
            m.configure_client(c).map_err(|e| self.describe(&e))?;
        } else if let Some(url) = self
            .cfg
            .client_metadata_url
            .as_ref()
            .filter(|_| supports_cimd)
        {
            m.configure_client(
                OAuthClientConfig::new(url.clone(), redirect_uri.clone())
                    .with_scopes(scopes.clone()),
            )
            .map_err(|e| self.describe(&e))?;
        } else {
            let name = self.cfg.client_name.as_deref().unwrap_or("hermes-tools");
            m.register_client(name, &redirect_uri, &scope_refs)
                .await
                .map_err(|e| format!("client registration failed: {}", self.describe(&e)))?;
        }
        let auth_url = m
            .get_authorization_url(&scope_refs)
            .await
            .map_err(|e| self.describe(&e))?;
        let issued_state = reqwest::Url::parse(&auth_url)
            .ok()
            .and_then(|u| {
                u.query_pairs()
                    .find(|(k, _)| k == "state")
                    .map(|(_, v)| v.into_owned())
            })
            .ok_or("the authorization URL has no state")?;
        let answer = self
            .host(
                "oauth",
                json!({
                    "authorization_url": auth_url,
                    "redirect_uri": redirect_uri,
                    "scopes": scopes,
                    "step_up": challenge.insufficient_scope,
                }),
                self.cfg.browser_timeout(),
            )
            .await?;
        let callback = parse_redirect(&answer, &redirect_uri, &issued_state)?;
        *self.requested.lock() = scopes.clone();
        self.secrets.lock().push(callback.code.clone());
        m.exchange_code_for_token_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
        .map_err(|e| format!("token request failed: {}", self.describe(&e)))?;
        tracing::info!(server = %self.server, step_up = challenge.insufficient_scope, "MCP server authorized");
        Ok(())
    }

    /// Ask the host (a blocking call, on a blocking thread).
    async fn host(
        &self,
        kind: &'static str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        host_call(
            self.services.clone(),
            &self.server,
            &self.closed,
            kind,
            params,
            timeout,
        )
        .await
    }

    /// An rmcp auth error as one line, with its causes, redacted.
    fn describe(&self, e: &AuthError) -> String {
        let mut out = e.to_string();
        let mut cur = std::error::Error::source(e);
        while let Some(c) = cur {
            let m = c.to_string();
            if !out.contains(&m) {
                out.push_str(": ");
                out.push_str(&m);
            }
            cur = c.source();
        }
        self.redact(&out.replace('\n', " "))
    }
}

fn redact_with(secrets: &Mutex<Vec<String>>, text: &str) -> String {
    let mut out = hermes_approval::redact_secrets(text);
    for s in secrets.lock().iter().filter(|s| s.len() >= 4) {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "***");
        }
    }
    out
}

/// Put a request to the host and wait for the answer, on a blocking thread.
async fn host_call(
    services: Option<Arc<dyn ToolServices>>,
    server: &str,
    closed: &CancelToken,
    kind: &'static str,
    params: Value,
    timeout: Duration,
) -> Result<Value, String> {
    let Some(services) = services else {
        return Err(format!(
            "this runtime has no host to answer {kind} requests (ht_runtime_set_oauth_handler)"
        ));
    };
    let cancel = CancelToken::new();
    let server = server.to_string();
    let closed = closed.clone();
    let c2 = cancel.clone();
    let r = tokio::task::spawn_blocking(move || {
        if closed.is_cancelled() {
            return Err("the client is closing".to_string());
        }
        services.server_request(kind, &server, params, timeout, &c2)
    })
    .await
    .unwrap_or_else(|e| Err(format!("the {kind} request failed: {e}")));
    cancel.cancel();
    r
}

/// The host's answer to the browser step: `{"redirect_url": URL}` (what the
/// browser was sent back to), `{"code": CODE, "state"?: STATE}`, or
/// `{"error": reason}`. A redirect elsewhere than `redirect_uri`, an error
/// from the authorization server, or a `state` other than the one issued is
/// refused.
pub fn parse_redirect(
    answer: &Value,
    redirect_uri: &str,
    issued_state: &str,
) -> Result<AuthorizationCallback, String> {
    if let Some(e) = answer.get("error") {
        let e = e
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| e.to_string());
        return Err(format!("the host did not complete the authorization: {e}"));
    }
    let cb = if let Some(url) = answer.get("redirect_url").and_then(Value::as_str) {
        let got =
            reqwest::Url::parse(url).map_err(|e| format!("the redirect URL is not a URL: {e}"))?;
        let want = reqwest::Url::parse(redirect_uri)
            .map_err(|e| format!("the redirect URI is not a URL: {e}"))?;
        if got.scheme() != want.scheme()
            || got.host_str() != want.host_str()
            || got.port_or_known_default() != want.port_or_known_default()
            || got.path() != want.path()
        {
            return Err(format!(
                "the redirect URL does not go to the redirect URI {redirect_uri}"
            ));
        }
        let q = |k: &str| {
            got.query_pairs()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.into_owned())
        };
        if let Some(e) = q("error") {
            let d = q("error_description")
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            return Err(format!("the authorization server refused: {e}{d}"));
        }
        AuthorizationCallback::from_redirect_url(url).map_err(|e| e.to_string())?
    } else if let Some(code) = answer.get("code").and_then(Value::as_str) {
        let state = answer
            .get("state")
            .and_then(Value::as_str)
            .unwrap_or(issued_state);
        let mut u = reqwest::Url::parse(redirect_uri)
            .map_err(|e| format!("the redirect URI is not a URL: {e}"))?;
        u.query_pairs_mut()
            .append_pair("code", code)
            .append_pair("state", state);
        AuthorizationCallback::from_redirect_url(u.as_str()).map_err(|e| e.to_string())?
    } else {
        return Err("the host's OAuth answer has neither redirect_url nor code (nor error)".into());
    };
    if cb.csrf_token != issued_state {
        return Err(
            "the redirect's state is not the one this authorization issued: refused".into(),
        );
    }
    Ok(cb)
}

/// `$XDG_STATE_HOME`, else `~/.local/state`.
fn state_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/".into());
    PathBuf::from(home).join(".local").join("state")
}

enum StoreKind {
    File(PathBuf),
    Host {
        services: Option<Arc<dyn ToolServices>>,
        server: String,
        closed: CancelToken,
    },
    Memory(InMemoryCredentialStore),
}

/// Where one server's tokens are kept; every token loaded or saved is added
/// to the values masked in messages.
struct Store {
    kind: StoreKind,
    secrets: Arc<Mutex<Vec<String>>>,
}

impl Store {
    fn remember(&self, c: &StoredCredentials) {
        let Some(t) = &c.token_response else {
            return;
        };
        let v = serde_json::to_value(t).unwrap_or_default();
        let mut s = self.secrets.lock();
        for k in ["access_token", "refresh_token", "id_token"] {
            if let Some(x) = v.get(k).and_then(Value::as_str)
                && !s.iter().any(|y| y == x)
            {
                s.push(x.to_string());
            }
        }
    }
}

fn store_err(e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

const HOST_STORE_TIMEOUT: Duration = Duration::from_secs(30);

#[async_trait::async_trait]
impl CredentialStore for Store {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let c = match &self.kind {
            StoreKind::Memory(m) => m.load().await?,
            StoreKind::File(path) => match std::fs::read(path) {
                Ok(bytes) => Some(serde_json::from_slice(&bytes).map_err(|e| {
                    store_err(format!("token file {} is unreadable: {e}", path.display()))
                })?),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => {
                    return Err(store_err(format!("token file {}: {e}", path.display())));
                }
            },
            StoreKind::Host {
                services,
                server,
                closed,
            } => {
                let v = host_call(
                    services.clone(),
                    server,
                    closed,
                    "oauth_tokens",
                    json!({"op": "load"}),
                    HOST_STORE_TIMEOUT,
                )
                .await
                .map_err(store_err)?;
                match v.get("tokens") {
                    None | Some(Value::Null) => None,
                    Some(t) => Some(serde_json::from_value(t.clone()).map_err(|e| {
                        store_err(format!("the host's stored tokens are unreadable: {e}"))
                    })?),
                }
            }
        };
        if let Some(c) = &c {
            self.remember(c);
        }
        Ok(c)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.remember(&credentials);
        match &self.kind {
            StoreKind::Memory(m) => m.save(credentials).await,
            StoreKind::File(path) => write_private(path, &credentials)
                .map_err(|e| store_err(format!("cannot write token file {}: {e}", path.display()))),
            StoreKind::Host {
                services,
                server,
                closed,
            } => {
                let tokens = serde_json::to_value(&credentials).map_err(store_err)?;
                host_call(
                    services.clone(),
                    server,
                    closed,
                    "oauth_tokens",
                    json!({"op": "save", "tokens": tokens}),
                    HOST_STORE_TIMEOUT,
                )
                .await
                .map(|_| ())
                .map_err(store_err)
            }
        }
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match &self.kind {
            StoreKind::Memory(m) => m.clear().await,
            StoreKind::File(path) => match std::fs::remove_file(path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(store_err(format!("token file {}: {e}", path.display()))),
            },
            StoreKind::Host {
                services,
                server,
                closed,
            } => host_call(
                services.clone(),
                server,
                closed,
                "oauth_tokens",
                json!({"op": "clear"}),
                HOST_STORE_TIMEOUT,
            )
            .await
            .map(|_| ())
            .map_err(store_err),
        }
    }
}

/// Write `c` to `path` so that only the user can ever read it: the folder
/// is made 0700, the file is created 0600 beside it and renamed over the
/// old one (a reader never sees half a file, and no moment exists when the
/// tokens are readable by others).
fn write_private(path: &std::path::Path, c: &StoredCredentials) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("tokens"),
        std::process::id()
    ));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    // Whatever the umask did, the mode is 0600.
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    f.write_all(&serde_json::to_vec(c).map_err(std::io::Error::other)?)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REDIRECT: &str = "http://127.0.0.1:8976/callback";

    #[test]
    fn a_redirect_with_the_issued_state_is_taken() {
        let cb = parse_redirect(
            &json!({"redirect_url": "http://127.0.0.1:8976/callback?code=abc&state=s1"}),
            REDIRECT,
            "s1",
        )
        .unwrap();
        assert_eq!((cb.code.as_str(), cb.csrf_token.as_str()), ("abc", "s1"));
        let cb = parse_redirect(&json!({"code": "abc"}), REDIRECT, "s1").unwrap();
        assert_eq!(cb.csrf_token, "s1");
    }

    #[test]
    fn a_wrong_state_another_target_or_an_error_is_refused() {
        let wrong_state = parse_redirect(
            &json!({"redirect_url": "http://127.0.0.1:8976/callback?code=abc&state=evil"}),
            REDIRECT,
            "s1",
        );
        assert!(wrong_state.unwrap_err().contains("state"));
        let other_port = parse_redirect(
            &json!({"redirect_url": "http://127.0.0.1:9999/callback?code=abc&state=s1"}),
            REDIRECT,
            "s1",
        );
        assert!(other_port.unwrap_err().contains("redirect URI"));
        let no_state = parse_redirect(
            &json!({"redirect_url": "http://127.0.0.1:8976/callback?code=abc"}),
            REDIRECT,
            "s1",
        );
        assert!(no_state.is_err());
        let denied = parse_redirect(
            &json!({"redirect_url": "http://127.0.0.1:8976/callback?error=access_denied&state=s1"}),
            REDIRECT,
            "s1",
        );
        assert!(denied.unwrap_err().contains("access_denied"));
        assert!(
            parse_redirect(&json!({"error": "user closed the window"}), REDIRECT, "s1").is_err()
        );
        assert!(parse_redirect(&json!({}), REDIRECT, "s1").is_err());
    }

    #[test]
    fn the_token_file_is_private_and_round_trips() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("ht-oauth-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("nested").join("srv.json");
        let c: StoredCredentials = serde_json::from_value(json!({
            "client_id": "c1",
            "token_response": {"access_token": "at-secret-1", "token_type": "Bearer",
                               "refresh_token": "rt-secret-1"},
            "granted_scopes": ["mcp"],
        }))
        .unwrap();
        write_private(&path, &c).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dmode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dmode, 0o700);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let secrets = Arc::new(Mutex::new(Vec::new()));
        let store = Store {
            kind: StoreKind::File(path.clone()),
            secrets: secrets.clone(),
        };
        let back = rt.block_on(store.load()).unwrap().unwrap();
        assert_eq!(back.client_id, "c1");
        // Loaded tokens are masked in messages from then on.
        let shown = redact_with(&secrets, "refresh failed for rt-secret-1 / at-secret-1");
        assert!(!shown.contains("secret-1"), "{shown}");
        rt.block_on(store.clear()).unwrap();
        assert!(!path.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
