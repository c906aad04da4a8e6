//! One MCP server: its connection (a stdio child run through rmcp on the
//! runtime's engine), its tools in the registry, calls, refreshes after
//! `notifications/tools/list_changed`, reconnection with bounded backoff,
//! and its state for the host.

use parking_lot::Mutex;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use hermes_core::core::Core;
use hermes_core::registry::{build_entry, parse_spec};
use hermes_core::{CancelToken, Mode, Tool, ToolCall, ToolOutput};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation,
    InitializeRequestParams, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, Peer, ServiceExt};
use tokio::io::AsyncBufReadExt;

use crate::config::ServerConfig;
use crate::{names, result, schema};

/// The first character of a utility tool's key (never in a server's tool name).
const UTILITY: char = '\u{1}';

/// Longest wait between two connection attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// rmcp's side of the connection: answers the server's notifications.
#[derive(Clone)]
struct Handler {
    server: Weak<Server>,
    info: ClientConfig,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // Refresh in the background: listing from inside the notification
        // handler would wait on the connection that delivers the answer.
        if let Some(server) = self.server.upgrade() {
            tracing::info!(server = %server.name, "MCP server's tool list changed: refreshing");
            tokio::spawn(async move { server.refresh_current().await });
        }
    }

    // Sampling is deprecated by SEP-2577 but servers still send it (the
    // reference server-everything does); answered while rmcp carries it.
    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        let server = self.server.upgrade().ok_or_else(closed_error)?;
        let params = serde_json::to_value(&params).map_err(|e| internal(e.to_string()))?;
        let answer = server.sampling(params).await?;
        serde_json::from_value(answer).map_err(|e| {
            internal(format!(
                "the host's sampling answer is not a CreateMessageResult: {e}"
            ))
        })
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let server = self.server.upgrade().ok_or_else(closed_error)?;
        let params = serde_json::to_value(&request).map_err(|e| internal(e.to_string()))?;
        let answer = server.elicitation(params).await?;
        serde_json::from_value(answer).map_err(|e| internal(e.to_string()))
    }

    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }
}

fn internal(message: String) -> rmcp::ErrorData {
    rmcp::ErrorData::internal_error(message, None)
}

fn closed_error() -> rmcp::ErrorData {
    internal("the client is closing".into())
}

/// Cancels a host request when its MCP request is dropped (the server
/// cancelled it, or the connection went).
struct CancelOnDrop(CancelToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

struct Conn {
    service: RunningService<RoleClient, Handler>,
}

/// What the host sees of a server (`ht_runtime_mcp_status`).
#[derive(Default)]
struct State {
    peer: Option<Peer<RoleClient>>,
    pid: Option<u32>,
    /// The child's start time (`/proc/<pid>/stat`), so a recycled pid is never signalled.
    started: Option<u64>,
    last_error: Option<String>,
    /// Consecutive failed connection attempts.
    failures: u32,
    retry_at: Option<Instant>,
    connects: u64,
    server_info: Option<Value>,
    /// The protocol version the server answered `initialize` with.
    protocol_version: Option<String>,
    skipped: Vec<String>,
    /// Consecutive failed calls (connection lost or refused, timeouts).
    call_failures: u32,
    /// The circuit breaker: calls fail fast until then.
    parked_until: Option<Instant>,
    /// Why the breaker opened (the last failure).
    parked_reason: Option<String>,
}

/// One registered tool: its server-side name and a fingerprint of its definition.
struct Registered {
    remote: String,
    fingerprint: String,
    /// Annotated `destructiveHint: true` and not `readOnlyHint`.
    destructive: bool,
}

/// What a tool's definition is pinned by: description, input schema and
/// annotations, keys sorted (a server may reorder them between listings).
fn definition_text(t: &rmcp::model::Tool) -> String {
    fn sorted(v: Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut kv: Vec<(String, Value)> = m.into_iter().collect();
                kv.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(kv.into_iter().map(|(k, v)| (k, sorted(v))).collect())
            }
            Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
            v => v,
        }
    }
    sorted(json!({
        "description": t.description,
        "inputSchema": &*t.input_schema,
        "annotations": t.annotations,
    }))
    .to_string()
}

/// A short stable label of a definition text for events and logs (FNV-1a 64).
fn short_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

pub struct Server {
    pub name: String,
    cfg: ServerConfig,
    core: Weak<Core>,
    toolset: String,
    alias: Option<String>,
    closed: CancelToken,
    /// The live connection; held while connecting, so calls wait for one attempt.
    conn: tokio::sync::Mutex<Option<Conn>>,
    state: Mutex<State>,
    tools: Mutex<BTreeMap<String, Registered>>,
    /// Each tool's definition when first listed (or last accepted), by its
    /// server-side name: what a later listing is compared with.
    pins: Mutex<BTreeMap<String, String>>,
    /// Tools whose definition changed from the pin: the changed definition,
    /// by server-side name (held out of the registry when `pin` is on).
    changed: Mutex<BTreeMap<String, String>>,
    refresh_lock: tokio::sync::Mutex<()>,
    /// When recent sampling requests came (the `max_rpm` window).
    sampling_times: Mutex<std::collections::VecDeque<Instant>>,
    /// The implementation shared by this server's tools.
    tool: Arc<McpTool>,
    /// Where state changes go as events (`mcp.state`, `mcp.tools_changed`).
    events: Option<Arc<dyn hermes_core::ToolServices>>,
    /// An HTTP server's OAuth (built on the first connection that needs it).
    #[cfg(feature = "https")]
    auth: Mutex<Option<Arc<crate::oauth::Auth>>>,
    me: Weak<Server>,
}

fn err_text(message: impl Into<String>) -> ToolOutput {
    ToolOutput::error(json!({ "error": message.into() }).to_string())
}

impl Server {
    pub fn new(
        name: &str,
        cfg: ServerConfig,
        core: &Arc<Core>,
        events: Option<Arc<dyn hermes_core::ToolServices>>,
    ) -> Arc<Server> {
        Arc::new_cyclic(|me| Server {
            name: name.to_string(),
            cfg,
            core: Arc::downgrade(core),
            toolset: names::toolset_name(name),
            alias: names::alias_name(name),
            closed: CancelToken::new(),
            conn: tokio::sync::Mutex::new(None),
            state: Mutex::new(State::default()),
            tools: Mutex::new(BTreeMap::new()),
            pins: Mutex::new(BTreeMap::new()),
            changed: Mutex::new(BTreeMap::new()),
            refresh_lock: tokio::sync::Mutex::new(()),
            sampling_times: Mutex::new(Default::default()),
            tool: Arc::new(McpTool { server: me.clone() }),
            events,
            #[cfg(feature = "https")]
            auth: Mutex::new(None),
            me: me.clone(),
        })
    }

    /// What this client offers the server: sampling and form elicitation
    /// when the config allows them.
    fn capabilities(&self) -> ClientCapabilities {
        let mut caps = serde_json::Map::new();
        if self.cfg.sampling.enabled {
            caps.insert("sampling".into(), json!({}));
        }
        if self.cfg.elicitation.enabled {
            caps.insert("elicitation".into(), json!({"form": {}}));
        }
        serde_json::from_value(Value::Object(caps)).unwrap_or_default()
    }

    /// A `sampling/createMessage` from the server: refused unless enabled
    /// and under the rate limit; `maxTokens` capped; then put to the host.
    async fn sampling(&self, mut params: Value) -> Result<Value, rmcp::ErrorData> {
        let cfg = &self.cfg.sampling;
        if !cfg.enabled {
            return Err(internal(format!(
                "sampling is not enabled for MCP server '{}'",
                self.name
            )));
        }
        if cfg.max_rpm > 0 {
            let now = Instant::now();
            let mut recent = self.sampling_times.lock();
            while recent
                .front()
                .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60))
            {
                recent.pop_front();
            }
            if recent.len() >= cfg.max_rpm as usize {
                tracing::warn!(server = %self.name, "sampling request refused: rate limit");
                return Err(internal(format!(
                    "sampling rate limit: at most {} requests a minute from MCP server '{}'",
                    cfg.max_rpm, self.name
                )));
            }
            recent.push_back(now);
        }
        if let Some(m) = params.get_mut("maxTokens")
            && m.as_u64().is_none_or(|n| n > cfg.max_tokens_cap)
        {
            *m = json!(cfg.max_tokens_cap);
        }
        self.emit("mcp.sampling", json!({}));
        self.host_request("sampling", params, Duration::from_secs_f64(cfg.timeout))
            .await
            .map_err(|e| {
                tracing::info!(server = %self.name, "sampling request refused: {e}");
                internal(e)
            })
    }

    /// An `elicitation/create` from the server: declined unless enabled;
    /// then put to the host's approval handler.
    async fn elicitation(&self, params: Value) -> Result<Value, rmcp::ErrorData> {
        if !self.cfg.elicitation.enabled {
            return Ok(json!({"action": "decline"}));
        }
        if params.get("mode").and_then(Value::as_str) == Some("url") {
            // URL mode sends the user to a web page: not offered.
            return Ok(json!({"action": "decline"}));
        }
        let schema = params.get("requestedSchema").cloned();
        let answer = self
            .host_request("elicitation", params, Duration::from_secs(600))
            .await
            .map_err(internal)?;
        Ok(complete_elicitation(answer, schema.as_ref()))
    }

    /// Put a request to the host on a blocking thread (the host's answer
    /// may take a while); cancelled when the MCP request is dropped.
    async fn host_request(
        &self,
        kind: &'static str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        let Some(services) = self.events.clone() else {
            return Err(format!("this runtime does not answer {kind} requests"));
        };
        let cancel = CancelToken::new();
        let guard = CancelOnDrop(cancel.clone());
        let name = self.name.clone();
        let closed = self.closed.clone();
        let r = tokio::task::spawn_blocking(move || {
            if closed.is_cancelled() {
                return Err("the client is closing".to_string());
            }
            services.server_request(kind, &name, params, timeout, &cancel)
        })
        .await
        .unwrap_or_else(|e| Err(format!("the {kind} request failed: {e}")));
        drop(guard);
        r
    }

    /// How long a listing may take: the connect timeout plus a second.
    pub fn connect_timeout_hint(&self) -> Duration {
        self.cfg.connect_timeout() + Duration::from_secs(1)
    }

    pub fn toolset(&self) -> &str {
        &self.toolset
    }

    /// Send `{"type": kind, "server": name, ...fields}` to the host's event handler.
    fn emit(&self, kind: &str, fields: Value) {
        let Some(ev) = &self.events else {
            return;
        };
        if !ev.has_event_handler() {
            return;
        }
        let mut event = json!({"type": kind, "server": self.name});
        if let (Some(e), Value::Object(f)) = (event.as_object_mut(), fields) {
            e.extend(f);
        }
        ev.emit_event(event);
    }

    /// Connect and register the tools; on failure keep retrying in the
    /// background with backoff until connected or closed. `first` is told
    /// when the first attempt is over.
    pub async fn run_start(self: Arc<Self>, first: std::sync::mpsc::Sender<()>) {
        let mut first = Some(first);
        loop {
            let done = match self.peer().await {
                Ok((peer, _)) => match self.refresh(&peer).await {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::warn!(server = %self.name, "MCP server: listing tools failed: {e}");
                        self.record_failure(format!("tools/list failed: {e}"));
                        false
                    }
                },
                Err(e) => {
                    tracing::warn!(server = %self.name, "{e}");
                    false
                }
            };
            if let Some(tx) = first.take() {
                let _ = tx.send(());
            }
            if done || self.closed.is_cancelled() {
                return;
            }
            let wait = self
                .state
                .lock()
                .retry_at
                .map(|t| t.saturating_duration_since(Instant::now()))
                .unwrap_or(Duration::from_secs(1));
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = self.closed.cancelled() => return,
            }
        }
    }

    fn record_failure(&self, error: String) {
        let mut st = self.state.lock();
        st.failures = st.failures.saturating_add(1);
        let backoff = Duration::from_secs(1u64 << (st.failures - 1).min(6)).min(MAX_BACKOFF);
        st.retry_at = Some(Instant::now() + backoff);
        st.last_error = Some(error.clone());
        drop(st);
        self.emit(
            "mcp.state",
            json!({"state": "failed", "error": error, "retry_in_ms": backoff.as_millis() as u64}),
        );
    }

    /// The live peer, connecting (or reconnecting) when there is none; the
    /// flag says whether it is a new connection.
    async fn peer(&self) -> Result<(Peer<RoleClient>, bool), String> {
        let mut conn = self.conn.lock().await;
        if let Some(c) = conn.as_ref()
            && !c.service.peer().is_transport_closed()
        {
            return Ok((c.service.peer().clone(), false));
        }
        if let Some(old) = conn.take() {
            tracing::warn!(server = %self.name, "MCP server connection lost: reconnecting");
            self.emit("mcp.state", json!({"state": "disconnected"}));
            self.kill_child();
            drop(old);
        }
        if self.closed.is_cancelled() {
            return Err(format!("MCP server '{}' is closed", self.name));
        }
        {
            let st = self.state.lock();
            if let Some(at) = st.retry_at
                && Instant::now() < at
            {
                return Err(format!(
                    "MCP server '{}' is unavailable ({}); next connection attempt in {} s",
                    self.name,
                    st.last_error.as_deref().unwrap_or("not connected"),
                    at.saturating_duration_since(Instant::now()).as_secs() + 1
                ));
            }
        }
        // The host's browser step (a user signing in) is not the server's
        // slowness: it gets its own time on top.
        let limit = self.cfg.connect_timeout()
            + self
                .cfg
                .oauth()
                .map(|o| o.browser_timeout())
                .unwrap_or_default();
        match tokio::time::timeout(limit, self.connect()).await {
            Ok(Ok(c)) => {
                let peer = c.service.peer().clone();
                let info = c.service.peer_info().and_then(|i| {
                    i.server_info
                        .as_ref()
                        .and_then(|s| serde_json::to_value(s).ok())
                });
                let version = c
                    .service
                    .peer_info()
                    .map(|i| i.protocol_version.to_string());
                *conn = Some(c);
                let mut st = self.state.lock();
                st.protocol_version = version;
                st.peer = Some(peer.clone());
                st.failures = 0;
                st.retry_at = None;
                st.connects += 1;
                st.server_info = info;
                let connects = st.connects;
                drop(st);
                tracing::info!(server = %self.name, "MCP server connected");
                self.emit("mcp.state", json!({"state": "ready", "connects": connects}));
                if let (Some(every), Some(me)) = (self.cfg.keepalive(), self.me.upgrade()) {
                    tokio::spawn(me.keepalive(peer.clone(), every));
                }
                Ok((peer, true))
            }
            Ok(Err(e)) => {
                self.kill_child();
                let e = format!("MCP server '{}' failed to start: {e}", self.name);
                self.record_failure(e.clone());
                Err(e)
            }
            Err(_) => {
                self.kill_child();
                let e = format!(
                    "MCP server '{}' did not answer initialize within {} s",
                    self.name, self.cfg.connect_timeout
                );
                self.record_failure(e.clone());
                Err(e)
            }
        }
    }

    /// Connect (a stdio child or streamable HTTP), run the MCP handshake
    /// and check the version the server answered.
    async fn connect(&self) -> Result<Conn, String> {
        let handler = Handler {
            server: self.me.clone(),
            info: InitializeRequestParams::new(
                self.capabilities(),
                Implementation::new("hermes-tools", env!("CARGO_PKG_VERSION")),
            )
            .with_protocol_version(OFFERED_VERSION),
        };
        let conn = match &self.cfg.url {
            Some(url) => self.connect_http(url, handler).await?,
            None => self.connect_stdio(handler).await?,
        };
        let answered = conn.service.peer_info().map(|i| i.protocol_version.clone());
        check_version(answered.as_ref())?;
        Ok(conn)
    }

    /// Spawn the child and run the MCP handshake over its stdio.
    async fn connect_stdio(&self, handler: Handler) -> Result<Conn, String> {
        let cfg = &self.cfg;
        let program = cfg.command.as_deref().unwrap_or_default();
        let env = cfg.child_env();
        // Under the process shim (hermes_exec::supervisor): the server and
        // everything it starts (npx, node) die with this process, however it
        // ends. The shim would report a missing program only as exit 127, so
        // the program is looked up here first, for a clear error.
        let mut cmd = match hermes_exec::supervisor::shim_path() {
            Some(shim) => {
                if let Err(e) = findable(
                    program,
                    env.get("PATH").map(String::as_str),
                    cfg.cwd.as_deref(),
                ) {
                    return Err(format!("cannot run '{program}': {e}"));
                }
                let mut c = tokio::process::Command::new(shim);
                c.arg(program);
                c
            }
            None => tokio::process::Command::new(program),
        };
        cmd.args(&cfg.args)
            .env_clear()
            .envs(env)
            .kill_on_drop(true)
            // Its own group: a kill reaches what the server started (npx, node).
            .process_group(0);
        if let Some(cwd) = &cfg.cwd {
            cmd.current_dir(cwd);
        }
        let (proc, stderr) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run '{program}': {e}"))?;
        {
            let mut st = self.state.lock();
            // The server's own pid, not the shim's that runs it.
            st.pid = proc
                .id()
                .map(|p| hermes_exec::supervisor::command_pid(p as i32) as u32);
            st.started = st.pid.and_then(start_time);
        }
        if let Some(stderr) = stderr {
            let name = self.name.clone();
            tokio::spawn(async move {
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::info!(target: "hermes_mcp_client::stderr", server = %name, "{line}");
                }
            });
        }
        let service = handler
            .serve(proc)
            .await
            .map_err(|e| format!("initialize failed: {}", error_chain(&e)))?;
        Ok(Conn { service })
    }

    /// A build without the `https` feature has no HTTP transport.
    #[cfg(not(feature = "https"))]
    async fn connect_http(&self, url: &str, _: Handler) -> Result<Conn, String> {
        Err(format!(
            "cannot reach {url}: this build of hermes-tools has no MCP over HTTP (Cargo feature `https`); use a stdio server"
        ))
    }

    /// Connect to a streamable HTTP server. `Authorization: Bearer <token>`
    /// goes through rmcp's auth header, every other header as given. With
    /// OAuth on (the default without a static token), a 401 or a 403
    /// `insufficient_scope` during the handshake runs the authorization and
    /// the handshake again, a bounded number of times.
    #[cfg(feature = "https")]
    async fn connect_http(&self, url: &str, handler: Handler) -> Result<Conn, String> {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
        let mut headers = std::collections::HashMap::new();
        for (k, v) in &self.cfg.headers {
            if k.eq_ignore_ascii_case("authorization")
                && let Some(token) = v.strip_prefix("Bearer ")
            {
                config = config.auth_header(token.to_string());
                continue;
            }
            let name = http::HeaderName::from_bytes(k.as_bytes())
                .map_err(|e| format!("header '{k}': {e}"))?;
            let value = http::HeaderValue::from_str(v).map_err(|e| format!("header '{k}': {e}"))?;
            headers.insert(name, value);
        }
        let config = config.custom_headers(headers);
        let client = http_client(self.cfg.ca_file.as_deref())?;
        let Some(auth) = self.auth(url, &client) else {
            let transport = StreamableHttpClientTransport::with_client(client.clone(), config);
            return match handler.serve(transport).await {
                Ok(service) => Ok(Conn { service }),
                Err(e) => Err(http_failure(&e, &client, url).await),
            };
        };
        let mut authorizations = 0;
        loop {
            let transport =
                StreamableHttpClientTransport::with_client(auth.client().await?, config.clone());
            let e = match handler.clone().serve(transport).await {
                Ok(service) => return Ok(Conn { service }),
                Err(e) => e,
            };
            match crate::oauth::init_challenge(&e) {
                Some(ch) if authorizations < crate::oauth::MAX_AUTHORIZATIONS => {
                    authorizations += 1;
                    self.authorize(&auth, &ch).await?;
                }
                Some(_) => {
                    return Err(format!(
                        "the server still refuses after {authorizations} authorizations ({})",
                        auth.redact(&error_chain(&e))
                    ));
                }
                None => return Err(auth.redact(&http_failure(&e, &client, url).await)),
            }
        }
    }

    /// This HTTP server's OAuth, when it is on.
    #[cfg(feature = "https")]
    fn auth(&self, url: &str, client: &reqwest::Client) -> Option<Arc<crate::oauth::Auth>> {
        let cfg = self.cfg.oauth()?;
        let mut slot = self.auth.lock();
        Some(
            slot.get_or_insert_with(|| {
                Arc::new(crate::oauth::Auth::new(
                    &self.name,
                    url,
                    cfg,
                    self.events.clone(),
                    self.closed.clone(),
                    client.clone(),
                ))
            })
            .clone(),
        )
    }

    /// Authorize after `challenge`, telling the host (events, log).
    #[cfg(feature = "https")]
    async fn authorize(
        &self,
        auth: &crate::oauth::Auth,
        challenge: &crate::oauth::Challenge,
    ) -> Result<(), String> {
        let step_up = challenge.insufficient_scope;
        tracing::info!(server = %self.name, step_up, "MCP server asks for authorization");
        self.emit(
            "mcp.oauth",
            json!({"state": "authorizing", "step_up": step_up}),
        );
        match auth.authorize(challenge).await {
            Ok(()) => {
                self.emit(
                    "mcp.oauth",
                    json!({"state": "authorized", "step_up": step_up}),
                );
                Ok(())
            }
            Err(e) => {
                let e = format!("authorization failed: {e}");
                tracing::warn!(server = %self.name, "{e}");
                self.emit("mcp.oauth", json!({"state": "failed", "error": e}));
                Err(e)
            }
        }
    }

    /// After a call failed: when the server refused it for authorization (a
    /// revoked token whose refresh failed, or a scope the token lacks),
    /// authorize; true when the call may be tried again.
    async fn reauthorize_after(&self, e: &rmcp::ServiceError) -> bool {
        #[cfg(feature = "https")]
        {
            let auth = self.auth.lock().clone();
            if let (Some(auth), Some(ch)) = (auth, crate::oauth::call_challenge(e)) {
                return self.authorize(&auth, &ch).await.is_ok();
            }
        }
        let _ = e;
        false
    }

    /// Kill the child's whole tree (TERM, then KILL after a short grace).
    fn kill_child(&self) {
        if let Some(pid) = self.take_pid() {
            let kill = move || kill_tree_bounded(&[pid as i32]);
            // Never sleep on an engine worker.
            match tokio::runtime::Handle::try_current() {
                Ok(h) => {
                    h.spawn_blocking(kill);
                }
                Err(_) => kill(),
            }
        }
    }

    /// List the tools again with the current connection (after list_changed).
    async fn refresh_current(self: Arc<Self>) {
        let peer = self.state.lock().peer.clone();
        if let Some(peer) = peer
            && let Err(e) = self.refresh(&peer).await
        {
            tracing::warn!(server = %self.name, "MCP tool list refresh failed: {e}");
        }
    }

    /// `tools/list` (every page), then make the registry match it.
    async fn refresh(&self, peer: &Peer<RoleClient>) -> Result<(), String> {
        let _g = self.refresh_lock.lock().await;
        let tools = tokio::time::timeout(self.cfg.connect_timeout(), peer.list_all_tools())
            .await
            .map_err(|_| "timed out".to_string())?
            .map_err(|e| e.to_string())?;
        let mut all: Vec<(String, rmcp::model::Tool)> =
            tools.into_iter().map(|t| (t.name.to_string(), t)).collect();
        all.extend(self.utility_tools(peer));
        self.apply(all);
        Ok(())
    }

    /// `list_resources`, `read_resource`, `list_prompts`, `get_prompt` for a
    /// server that offers resources / prompts (unless `tools.resources` /
    /// `tools.prompts` is false). Their keys start with [`UTILITY`].
    fn utility_tools(&self, peer: &Peer<RoleClient>) -> Vec<(String, rmcp::model::Tool)> {
        let Some(info) = peer.peer_info() else {
            return Vec::new();
        };
        let mut specs = Vec::new();
        if self.cfg.tools.resources && info.capabilities.resources.is_some() {
            specs.push(json!({"name": "list_resources", "description": format!("List the resources of MCP server {}.", self.name),
                "inputSchema": {"type": "object", "properties": {}}}));
            specs.push(json!({"name": "read_resource", "description": format!("Read a resource of MCP server {} by its URI.", self.name),
                "inputSchema": {"type": "object", "properties": {"uri": {"type": "string", "description": "The resource URI."}}, "required": ["uri"]}}));
        }
        if self.cfg.tools.prompts && info.capabilities.prompts.is_some() {
            specs.push(json!({"name": "list_prompts", "description": format!("List the prompts of MCP server {}.", self.name),
                "inputSchema": {"type": "object", "properties": {}}}));
            specs.push(json!({"name": "get_prompt", "description": format!("Get a prompt of MCP server {} by name, with its arguments.", self.name),
                "inputSchema": {"type": "object", "properties": {"name": {"type": "string"},
                    "arguments": {"type": "object", "additionalProperties": {"type": "string"}}}, "required": ["name"]}}));
        }
        specs
            .into_iter()
            .filter_map(|v| serde_json::from_value::<rmcp::model::Tool>(v).ok())
            .map(|t| (format!("{UTILITY}{}", t.name), t))
            .collect()
    }

    /// Run a utility tool (`op` is its name).
    async fn utility(
        &self,
        peer: &Peer<RoleClient>,
        op: &str,
        args: Option<Map<String, Value>>,
    ) -> Result<Value, rmcp::ServiceError> {
        let args = args.unwrap_or_default();
        let text = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let v = match op {
            "list_resources" => json!({"resources": peer.list_all_resources().await?}),
            "read_resource" => serde_json::to_value(
                peer.read_resource(rmcp::model::ReadResourceRequestParams::new(text("uri")))
                    .await?,
            )
            .unwrap_or_default(),
            "list_prompts" => json!({"prompts": peer.list_all_prompts().await?}),
            _ => {
                let mut p = rmcp::model::GetPromptRequestParams::new(text("name"));
                if let Some(Value::Object(a)) = args.get("arguments") {
                    p = p.with_arguments(a.clone());
                }
                serde_json::to_value(peer.get_prompt(p).await?).unwrap_or_default()
            }
        };
        Ok(v)
    }

    /// Register new and changed tools, deregister vanished ones. A name a
    /// non-MCP tool (or another toolset) already holds is skipped, never shadowed.
    fn apply(&self, tools: Vec<(String, rmcp::model::Tool)>) {
        let Some(core) = self.core.upgrade() else {
            return;
        };
        let mut mine = self.tools.lock();
        let mut want: BTreeMap<String, Registered> = BTreeMap::new();
        let mut entries = Vec::new();
        let mut skipped = Vec::new();
        let mut rug_pulls = Vec::new();
        for (remote, t) in tools {
            let utility = remote.starts_with(UTILITY);
            if !utility && !self.cfg.tools.allows(&remote) {
                continue;
            }
            let name = names::tool_name(&self.name, &t.name);
            if !utility {
                let text = definition_text(&t);
                let mut pins = self.pins.lock();
                match pins.get(&remote) {
                    None => {
                        pins.insert(remote.clone(), text);
                    }
                    Some(pinned) if *pinned != text => {
                        let was = short_hash(pinned);
                        let mut changed = self.changed.lock();
                        if changed.get(&remote) != Some(&text) {
                            tracing::warn!(server = %self.name, tool = %remote,
                                "MCP tool definition changed since it was first listed ({was} -> {}){}",
                                short_hash(&text),
                                if self.cfg.pin { ": held until the host accepts it" } else { "" });
                            rug_pulls.push(json!({"tool": remote, "name": name,
                                "pinned": was, "now": short_hash(&text), "held": self.cfg.pin}));
                            changed.insert(remote.clone(), text);
                        }
                        if self.cfg.pin {
                            continue;
                        }
                    }
                    Some(_) => {
                        self.changed.lock().remove(&remote);
                    }
                }
            }
            if want.contains_key(&name) {
                tracing::warn!(server = %self.name, tool = %remote, "MCP tool skipped: its name '{name}' is taken by another tool of this server");
                skipped.push(t.name.to_string());
                continue;
            }
            let taken = core.read_registry(|r| {
                r.tools
                    .get(name.as_str())
                    .is_some_and(|e| e.toolset != self.toolset)
            });
            if taken {
                tracing::warn!(server = %self.name, tool = %remote, "MCP tool skipped: '{name}' is already a tool of another toolset");
                skipped.push(t.name.to_string());
                continue;
            }
            let fingerprint = serde_json::to_string(&t).unwrap_or_default();
            let destructive = t.annotations.as_ref().is_some_and(|a| {
                a.destructive_hint == Some(true) && a.read_only_hint != Some(true)
            });
            let unchanged = mine
                .get(&name)
                .is_some_and(|r| r.fingerprint == fingerprint);
            if !unchanged {
                let description = t
                    .description
                    .as_deref()
                    .filter(|d| !d.trim().is_empty())
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("MCP tool {remote} from {}", self.name));
                let spec = json!({
                    "name": name,
                    "toolset": self.toolset,
                    "timeout": self.cfg.timeout,
                    "schema": {
                        "name": name,
                        "description": description,
                        "parameters": schema::normalize(&t.input_schema),
                    }
                });
                let entry = parse_spec(&spec.to_string())
                    .and_then(|s| build_entry(s, self.tool.clone() as Arc<dyn Tool>, None));
                match entry {
                    Ok(e) => entries.push(e),
                    Err(e) => {
                        tracing::warn!(server = %self.name, tool = %remote, "MCP tool skipped: {}", e.message);
                        skipped.push(t.name.to_string());
                        continue;
                    }
                }
            }
            want.insert(
                name,
                Registered {
                    remote,
                    fingerprint,
                    destructive,
                },
            );
        }
        let vanished: Vec<String> = mine
            .keys()
            .filter(|k| !want.contains_key(*k))
            .cloned()
            .collect();
        for name in &vanished {
            // Only ours: a name another toolset took meanwhile stays theirs.
            let ours = core.read_registry(|r| {
                r.tools
                    .get(name.as_str())
                    .is_some_and(|e| e.toolset == self.toolset)
            });
            if ours {
                let _ = core.deregister(name);
            }
        }
        let added = entries.len();
        let added_names: Vec<String> = entries.iter().map(|e| e.name.clone()).collect();
        if !entries.is_empty()
            && let Err(e) = core.register_many(entries, false)
        {
            tracing::warn!(server = %self.name, "MCP tools not registered: {}", e.message);
            want.clear();
        }
        if let Some(alias) = &self.alias
            && !want.is_empty()
        {
            let exists = core.read_registry(|r| r.aliases.get(alias) == Some(&self.toolset));
            if !exists && let Err(e) = core.alias_toolset(alias, &self.toolset) {
                tracing::debug!(server = %self.name, "no toolset alias '{alias}': {}", e.message);
            }
        }
        tracing::info!(
            server = %self.name,
            tools = want.len(),
            registered = added,
            removed = vanished.len(),
            "MCP tools listed"
        );
        *mine = want;
        drop(mine);
        self.state.lock().skipped = skipped;
        if !added_names.is_empty() || !vanished.is_empty() {
            self.emit(
                "mcp.tools_changed",
                json!({"registered": added_names, "removed": vanished}),
            );
        }
        for ev in rug_pulls {
            self.emit("mcp.tool_changed", ev);
        }
    }

    /// Accept every changed tool definition as the new pin; the caller
    /// refreshes so that held tools come back. Returns the tools accepted.
    pub fn accept_changes(&self) -> Vec<String> {
        let mut pins = self.pins.lock();
        let changed = std::mem::take(&mut *self.changed.lock());
        let names = changed.keys().cloned().collect();
        pins.extend(changed);
        names
    }

    /// List again now (after [`Server::accept_changes`]).
    pub async fn refresh_now(self: Arc<Self>) -> Result<(), String> {
        let (peer, _) = self.peer().await?;
        self.refresh(&peer).await
    }

    /// Ask the runtime's approval policy whether destructive tool `shown`
    /// may run (the host's approval handler; denied without one).
    async fn approve_destructive(
        &self,
        shown: &str,
        ctx: hermes_core::dispatch::CallContext,
        cancel: CancelToken,
    ) -> Result<(), String> {
        let blocked = |why: &str| {
            format!(
                "BLOCKED: MCP tool '{shown}' of server '{}' is marked destructive and was not approved ({why}); it did not run",
                self.name
            )
        };
        let Some(services) = self.events.clone() else {
            return Err(blocked("no approval service"));
        };
        let subject = format!("MCP tool '{shown}' of server '{}'", self.name);
        let check = hermes_approval::CheckResult {
            verdict: hermes_approval::Verdict::Ask,
            reasons: vec![hermes_approval::Reason {
                rule: "mcp_destructive_tool".into(),
                description: format!(
                    "a tool the untrusted MCP server '{}' marks destructive (destructiveHint)",
                    self.name
                ),
                tier: hermes_approval::Verdict::Ask,
                command: subject.clone(),
                pack: "builtin".into(),
                sandbox: None,
                argv: Vec::new(),
            }],
            commands: Vec::new(),
            normalized: vec![subject.clone()],
            contained: Vec::new(),
        };
        let decision = tokio::task::spawn_blocking(move || {
            services.approve_check(check, &subject, &ctx, &cancel)
        })
        .await;
        match decision {
            Ok(hermes_core::CommandDecision::Allow) => Ok(()),
            Ok(hermes_core::CommandDecision::Deny { message, .. }) => Err(blocked(&message)),
            Err(_) => Err(blocked("the approval did not complete")),
        }
    }

    /// One `tools/call`, bounded by `deadline` and `cancel` (either sends
    /// `notifications/cancelled` to the server).
    pub async fn call(
        self: Arc<Self>,
        remote: String,
        args: Option<Map<String, Value>>,
        cancel: CancelToken,
        deadline: Instant,
        ctx: hermes_core::dispatch::CallContext,
        ask: bool,
    ) -> ToolOutput {
        let timeout = deadline.saturating_duration_since(Instant::now());
        let shown = remote.trim_start_matches(UTILITY).to_string();
        if let Err(e) = self.breaker_check() {
            return err_text(e);
        }
        // Whether the server failed this call (counts toward the breaker).
        let failed = std::sync::atomic::AtomicBool::new(false);
        let fail = |e: String| {
            failed.store(true, std::sync::atomic::Ordering::Relaxed);
            err_text(e)
        };
        let work = async {
            if ask {
                self.approve_destructive(&shown, ctx.clone(), cancel.clone())
                    .await
                    .map_err(err_text)?;
            }
            let (peer, fresh) = self.peer().await.map_err(fail)?;
            if fresh {
                // Reconnected: its tool list may have changed.
                let me = self.clone();
                let p = peer.clone();
                tokio::spawn(async move {
                    if let Err(e) = me.refresh(&p).await {
                        tracing::warn!(server = %me.name, "MCP tool list refresh failed: {e}");
                    }
                });
            }
            if let Some(op) = remote.strip_prefix(UTILITY) {
                return self
                    .utility(&peer, op, args)
                    .await
                    .map(|v| ToolOutput::json(&json!({ "result": v })))
                    .map_err(|e| err_text(format!("MCP call failed: {e}")));
            }
            let mut params = CallToolRequestParams::new(remote.clone());
            if let Some(a) = args {
                params = params.with_arguments(a);
            }
            let mut result = peer.call_tool(params.clone()).await;
            let mut peer = peer;
            // Refused for authorization (a step-up, a revoked token): once
            // authorized, the same call once more.
            if let Err(e) = &result
                && self.reauthorize_after(e).await
            {
                peer = self.peer().await.map_err(fail)?.0;
                result = peer.call_tool(params).await;
            }
            match result {
                Ok(r) => {
                    let (out, attachments) =
                        result::map_parts(&serde_json::to_value(&r).unwrap_or_default());
                    for (i, a) in attachments.into_iter().enumerate() {
                        let mut ev = json!({
                            "tool": shown, "tool_call_id": ctx.tool_call_id,
                            "task_id": ctx.task_id, "index": i + 1,
                        });
                        if let (Value::Object(e), Value::Object(mut a)) = (&mut ev, a) {
                            // The event's own `type` stays; the block's is `media`.
                            if let Some(t) = a.remove("type") {
                                e.insert("media".into(), t);
                            }
                            e.extend(a);
                        }
                        self.emit("mcp.attachment", ev);
                    }
                    Ok(out)
                }
                Err(e) => {
                    let lost = peer.is_transport_closed()
                        || matches!(
                            e,
                            rmcp::ServiceError::TransportClosed
                                | rmcp::ServiceError::TransportSend(_)
                        );
                    if lost {
                        self.state.lock().last_error = Some(format!("connection lost: {e}"));
                        Err(fail(format!(
                            "MCP call failed: server '{}' stopped or closed the connection ({e}); it is restarted on the next call",
                            self.name
                        )))
                    } else {
                        Err(err_text(format!("MCP call failed: {e}")))
                    }
                }
            }
        };
        // Some(ok) when the call ended on the server's account.
        let mut outcome = None;
        let out = tokio::select! {
            out = work => {
                outcome = Some(!failed.load(std::sync::atomic::Ordering::Relaxed));
                out.unwrap_or_else(|e| e)
            }
            _ = cancel.cancelled() => {
                // Dispatch answers a cancelled call itself right after firing
                // the token; answering at once could race ahead of it and
                // turn the cancellation into an error result. Ours, later, is
                // dropped harmlessly.
                tokio::time::sleep(Duration::from_millis(50)).await;
                err_text(format!("MCP tool '{shown}' of server '{}' was cancelled", self.name))
            }
            _ = tokio::time::sleep(timeout) => {
                outcome = Some(false);
                err_text(format!(
                "MCP tool '{shown}' of server '{}' timed out after {:.0} s", self.name, timeout.as_secs_f64()))
            }
            _ = self.closed.cancelled() => err_text(format!("MCP server '{}' is closed", self.name)),
        };
        if let Some(ok) = outcome {
            self.breaker_record(ok, &out);
        }
        out
    }

    /// Fail fast while the breaker is open. Once the cool-down is over calls
    /// go through again; the first failure among them re-opens it at once
    /// (the failure count is kept until a call succeeds).
    fn breaker_check(&self) -> Result<(), String> {
        let mut st = self.state.lock();
        let Some(until) = st.parked_until else {
            return Ok(());
        };
        let now = Instant::now();
        if now >= until {
            st.parked_until = None;
            return Ok(());
        }
        Err(format!(
            "MCP server '{}' is parked after {} consecutive failures (last: {}); calls fail fast until it is retried in {} s",
            self.name,
            st.call_failures,
            st.parked_reason.as_deref().unwrap_or("unknown"),
            until.saturating_duration_since(now).as_secs() + 1
        ))
    }

    /// Count a call's end toward the circuit breaker.
    fn breaker_record(&self, ok: bool, out: &ToolOutput) {
        let limit = self.cfg.breaker_failures;
        if limit == 0 {
            return;
        }
        let mut st = self.state.lock();
        if ok {
            st.call_failures = 0;
            st.parked_reason = None;
            return;
        }
        st.call_failures = st.call_failures.saturating_add(1);
        if st.call_failures < limit {
            return;
        }
        let reason = serde_json::from_str::<Value>(&out.text)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_string))
            .unwrap_or_else(|| "call failed".into());
        let cooldown = self.cfg.breaker_cooldown();
        st.parked_until = Some(Instant::now() + cooldown);
        st.parked_reason = Some(reason.clone());
        let failures = st.call_failures;
        drop(st);
        tracing::warn!(server = %self.name, failures, "MCP server parked for {:.0} s: {reason}", cooldown.as_secs_f64());
        self.emit(
            "mcp.state",
            json!({"state": "parked", "failures": failures, "error": reason,
                "retry_in_ms": cooldown.as_millis() as u64}),
        );
    }

    /// Ping the server every `every` while this connection lives. A ping
    /// that fails or is not answered in time (`every`, at most the call
    /// timeout, at least 1 s) drops the connection and kills the child: the
    /// next call reconnects. A server without `ping` (-32601) is left alone.
    async fn keepalive(self: Arc<Self>, peer: Peer<RoleClient>, every: Duration) {
        let wait = every
            .min(self.cfg.call_timeout())
            .max(Duration::from_secs(1));
        loop {
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = self.closed.cancelled() => return,
            }
            if peer.is_transport_closed() {
                return;
            }
            let ping = rmcp::model::ClientRequest::PingRequest(Default::default());
            let error = match tokio::time::timeout(wait, peer.send_request(ping)).await {
                Ok(Ok(_)) => continue,
                Ok(Err(rmcp::ServiceError::McpError(e)))
                    if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND =>
                {
                    tracing::debug!(server = %self.name, "MCP server has no ping: keepalive off");
                    return;
                }
                Ok(Err(e)) => format!("keepalive ping failed: {e}"),
                Err(_) => format!(
                    "keepalive ping not answered within {:.0} s",
                    wait.as_secs_f64()
                ),
            };
            if peer.is_transport_closed() {
                // Already known dead: the next call reconnects.
                return;
            }
            tracing::warn!(server = %self.name, "{error}: dropping the connection");
            {
                let mut conn = self.conn.lock().await;
                conn.take();
            }
            self.kill_child();
            {
                let mut st = self.state.lock();
                st.peer = None;
                st.last_error = Some(error.clone());
            }
            self.emit(
                "mcp.state",
                json!({"state": "disconnected", "error": error}),
            );
            let out = err_text(error);
            self.breaker_record(false, &out);
            return;
        }
    }

    /// The server-side name of tool `name` and whether a call must be approved.
    fn remote_name(&self, name: &str) -> Option<(String, bool)> {
        self.tools
            .lock()
            .get(name)
            .map(|r| (r.remote.clone(), r.destructive && !self.cfg.trusted()))
    }

    /// This server's state as JSON.
    pub fn status(&self) -> Value {
        // One lock at a time: `apply` takes the tools, then the state.
        let tools: Vec<String> = self.tools.lock().keys().cloned().collect();
        let held: Vec<String> = if self.cfg.pin {
            self.changed.lock().keys().cloned().collect()
        } else {
            Vec::new()
        };
        let st = self.state.lock();
        let state = if self.closed.is_cancelled() {
            "closed"
        } else {
            match &st.peer {
                Some(p) if !p.is_transport_closed() => "ready",
                Some(_) => "disconnected",
                None if st.failures > 0 => "failed",
                None if st.connects > 0 => "disconnected",
                None => "connecting",
            }
        };
        let parked_ms = st
            .parked_until
            .map(|t| t.saturating_duration_since(Instant::now()).as_millis() as u64)
            .filter(|ms| *ms > 0);
        let state = if parked_ms.is_some() && state != "closed" {
            "parked"
        } else {
            state
        };
        json!({
            "state": state,
            "transport": self.cfg.transport(),
            "toolset": self.toolset,
            "tools": tools,
            "skipped_tools": st.skipped,
            "held_tools": held,
            "trust": self.cfg.trust,
            "pid": st.pid,
            "connects": st.connects,
            "failures": st.failures,
            "retry_in_ms": st.retry_at.map(|t| t.saturating_duration_since(Instant::now()).as_millis() as u64),
            "last_error": st.last_error,
            "call_failures": st.call_failures,
            "parked_retry_in_ms": parked_ms,
            "server_info": st.server_info,
            "protocol_version": st.protocol_version,
        })
    }

    /// Stop: no more connections; the child is the caller's to kill
    /// ([`Server::take_pid`]), the connection is dropped.
    pub fn close(&self) {
        self.closed.cancel();
        if let Ok(mut c) = self.conn.try_lock() {
            c.take();
        }
    }

    /// Deregister this server's tools (those still in its toolset).
    pub fn remove_tools(&self) {
        let Some(core) = self.core.upgrade() else {
            return;
        };
        let mine = std::mem::take(&mut *self.tools.lock());
        for name in mine.keys() {
            let ours = core.read_registry(|r| {
                r.tools
                    .get(name.as_str())
                    .is_some_and(|e| e.toolset == self.toolset)
            });
            if ours {
                let _ = core.deregister(name);
            }
        }
    }

    /// The child's pid, when it is still that child (not exited and recycled).
    pub fn take_pid(&self) -> Option<u32> {
        let mut st = self.state.lock();
        let pid = st.pid.take()?;
        let started = st.started.take();
        (started.is_some() && start_time(pid) == started).then_some(pid)
    }
}

/// A process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// TERM every tree, wait up to 500 ms for them to exit, then KILL what is left.
pub fn kill_tree_bounded(pids: &[i32]) {
    for &p in pids {
        hermes_exec::kill_tree(p, libc::SIGTERM);
    }
    let until = Instant::now() + Duration::from_millis(500);
    while Instant::now() < until && pids.iter().any(|&p| hermes_exec::tree_alive(p)) {
        std::thread::sleep(Duration::from_millis(10));
    }
    for &p in pids {
        if hermes_exec::tree_alive(p) {
            hermes_exec::kill_tree(p, libc::SIGKILL);
        }
    }
}

/// Answers its call with an error when dropped unanswered.
struct ReplyGuard(Option<hermes_core::tool::Reply>);

impl Drop for ReplyGuard {
    fn drop(&mut self) {
        if let Some(reply) = self.0.take() {
            reply.send(err_text(
                "MCP call abandoned (internal error or runtime closing)",
            ));
        }
    }
}

/// The [`Tool`] every tool of one server shares (the call's name says which).
pub struct McpTool {
    server: Weak<Server>,
}

impl Tool for McpTool {
    fn call(&self, call: ToolCall<'_>) {
        let Some(server) = self.server.upgrade() else {
            call.reply.send(err_text("this MCP server is closed"));
            return;
        };
        let Some((remote, ask)) = server.remote_name(call.name) else {
            call.reply.send(err_text(format!(
                "MCP tool '{}' is no longer offered by server '{}'",
                call.name, server.name
            )));
            return;
        };
        let args = match call.args {
            Some(Value::Object(m)) => Some(m.clone()),
            Some(_) => None,
            None => serde_json::from_str::<Map<String, Value>>(call.args_text).ok(),
        };
        let deadline = call
            .deadline
            .unwrap_or_else(|| Instant::now() + server.cfg.call_timeout());
        let fut = server.call(
            remote,
            args,
            call.cancel.clone(),
            deadline,
            call.context.clone(),
            ask,
        );
        let Some(handle) = call.engine.handle() else {
            call.reply.send(err_text("the runtime is closing"));
            return;
        };
        let reply = call.reply;
        match call.mode {
            Mode::Async => {
                // Answered exactly once even if the task panics or is dropped.
                let mut guard = ReplyGuard(Some(reply));
                handle.spawn(async move {
                    let out = fut.await;
                    if let Some(reply) = guard.0.take() {
                        reply.send(out);
                    }
                });
            }
            Mode::Inline => {
                let (tx, rx) = std::sync::mpsc::sync_channel(1);
                handle.spawn(async move {
                    let _ = tx.send(fut.await);
                });
                let out = rx
                    .recv()
                    .unwrap_or_else(|_| err_text("the runtime is closing"));
                reply.send(out);
            }
        }
    }

    fn own_timeout(&self) -> bool {
        true
    }
}

/// The version offered in `initialize`: the newest revision that still has
/// the `initialize` handshake. rmcp's `ProtocolVersion::LATEST` (2026-07-28)
/// moved the lifecycle to `server/discover`; offering it in `initialize`
/// made servers of the current stable revisions refuse the handshake (the
/// stable conformance suite accepts only 2025-06-18 and 2025-11-25).
pub const OFFERED_VERSION: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

/// The revisions a server may answer `initialize` with: every one the
/// specification still lists that has the handshake (a server that does not
/// support the offered one answers with another it supports, and the
/// client then speaks that one).
pub const ACCEPTED_VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2024_11_05,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
];

/// Whether the server's answered version is one this client speaks; the
/// specification says a client that does not support it should disconnect,
/// and a clear reason beats a session that fails later in odd ways.
fn check_version(answered: Option<&ProtocolVersion>) -> Result<(), String> {
    match answered {
        Some(v) if ACCEPTED_VERSIONS.contains(v) => Ok(()),
        Some(v) => Err(format!(
            "the server answered protocol version '{v}', which this client does not speak (it offered {OFFERED_VERSION} and accepts {})",
            ACCEPTED_VERSIONS
                .iter()
                .map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        None => Err("the server did not answer initialize with a protocol version".into()),
    }
}

/// An error with its causes (`error sending request: ... certificate verify
/// failed`): the top message alone hides why a connection failed. rmcp's
/// transport type names are left out.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !out.contains(&m) {
            out.push_str(": ");
            out.push_str(&m);
        }
        cur = c.source();
    }
    // "Transport [rmcp::transport::worker::WorkerTransport<...>] error" -> "transport error"
    while let Some(a) = out.find("Transport [") {
        let mut depth = 0usize;
        let mut end = None;
        for (i, ch) in out[a + 10..].char_indices() {
            match ch {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(a + 10 + i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        match end {
            Some(e) => out.replace_range(a..e, "transport"),
            None => break,
        }
    }
    out.replace('\n', " ")
}

/// Why an HTTP handshake failed. rmcp keeps only the top of the HTTP error
/// ("error sending request"): ask once more ourselves to learn the cause (a
/// certificate not trusted, a refused connection).
#[cfg(feature = "https")]
async fn http_failure(
    e: &rmcp::service::ClientInitializeError,
    client: &reqwest::Client,
    url: &str,
) -> String {
    let mut why = format!("initialize failed: {}", error_chain(e));
    if let Ok(Err(probe)) =
        tokio::time::timeout(std::time::Duration::from_secs(5), client.get(url).send()).await
    {
        why.push_str(&format!(" ({})", error_chain(&probe)));
    }
    why
}

#[cfg(feature = "https")]
/// The HTTP client for a streamable HTTP server: the system's trust roots
/// (plus the server's own CA from `ca_file`), no connection pool (rmcp's
/// default: a reused connection stalls on delayed ACKs), and no redirects
/// (a redirect would replay the session and headers elsewhere; a configured
/// endpoint needs none).
fn http_client(ca_file: Option<&str>) -> Result<reqwest::Client, String> {
    let mut b = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none());
    if let Some(ca) = ca_file {
        let pem = std::fs::read(ca).map_err(|e| format!("ca_file '{ca}': {e}"))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("ca_file '{ca}': {e}"))?;
        b = b.tls_certs_merge(certs);
    }
    b.build()
        .map_err(|e| format!("HTTP client: {}", error_chain(&e)))
}

/// Whether `program` can be started: a path that is an executable file, or
/// a name found in `path` (the child's PATH).
fn findable(program: &str, path: Option<&str>, cwd: Option<&str>) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let found = if program.contains('/') {
        let p = std::path::Path::new(program);
        match cwd {
            Some(dir) if p.is_relative() => runnable(&std::path::Path::new(dir).join(p)),
            _ => runnable(p),
        }
    } else {
        std::env::split_paths(path.unwrap_or("/usr/local/bin:/usr/bin:/bin"))
            .any(|d| runnable(&d.join(program)))
    };
    if found {
        Ok(())
    } else if program.contains('/') {
        Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no such executable file",
        ))
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "not found on the server's PATH (is it installed?)",
        ))
    }
}

/// An accepted elicitation as the server must get it: the requested
/// schema's defaults filled in for what the host left out (a host that
/// accepts with `{}` accepts the defaults), then checked against the
/// schema; content that does not fit is declined with the reason, never
/// sent (the server asked for that shape).
pub(crate) fn complete_elicitation(mut answer: Value, schema: Option<&Value>) -> Value {
    if answer.get("action").and_then(Value::as_str) != Some("accept") {
        return answer;
    }
    let Some(schema) = schema.filter(|s| s.is_object()) else {
        return answer;
    };
    let mut content = match answer.get("content") {
        Some(Value::Object(m)) => m.clone(),
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(other) => {
            return json!({"action": "decline", "reason": format!("the host's answer is not an object: {other}")});
        }
    };
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, prop) in props {
            if !content.contains_key(k)
                && let Some(d) = prop.get("default")
            {
                content.insert(k.clone(), d.clone());
            }
        }
    }
    let content = Value::Object(content);
    match hermes_core::schema::Node::compile(schema, "") {
        Ok(node) => {
            let mut errs = Vec::new();
            node.validate(&content, "", &mut errs, 5);
            if !errs.is_empty() {
                return json!({"action": "decline", "reason": format!("the answer does not fit the requested schema: {}", errs.join("; "))});
            }
        }
        Err(e) => {
            return json!({"action": "decline", "reason": format!("the requested schema does not compile: {e}")});
        }
    }
    answer["content"] = content;
    answer
}

#[cfg(test)]
mod elicitation_tests {
    use super::complete_elicitation;
    use serde_json::json;

    /// The conformance suite's `elicitation-sep1034-client-defaults`: a
    /// host that accepts with `{}` sends the schema's defaults.
    #[test]
    fn accepted_with_nothing_gets_the_defaults() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
        }});
        let out = complete_elicitation(json!({"action": "accept", "content": {}}), Some(&schema));
        assert_eq!(out["action"], "accept");
        assert_eq!(
            out["content"],
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true})
        );
        // What the host gave wins over a default.
        let out = complete_elicitation(
            json!({"action": "accept", "content": {"age": 41}}),
            Some(&schema),
        );
        assert_eq!(out["content"]["age"], 41);
        assert_eq!(out["content"]["name"], "John Doe");
    }

    #[test]
    fn an_answer_that_does_not_fit_is_declined_with_the_reason() {
        let schema = json!({"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]});
        let out = complete_elicitation(
            json!({"action": "accept", "content": {"age": "old"}}),
            Some(&schema),
        );
        assert_eq!(out["action"], "decline", "{out}");
        assert!(out["reason"].as_str().unwrap().contains("age"), "{out}");
        let out = complete_elicitation(json!({"action": "accept", "content": {}}), Some(&schema));
        assert_eq!(out["action"], "decline", "{out}");
        // Declines and cancels pass unchanged.
        let d = json!({"action": "cancel"});
        assert_eq!(complete_elicitation(d.clone(), Some(&schema)), d);
    }
}
