//! One server's config (`mcp_servers.<name>` in the runtime config), with
//! `${VAR}` interpolation and the environment its child process gets.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

use hermes_core::error::{Error, Result};

/// `mcp_servers.<name>`: a stdio server (`command`, `args`, `env`, `cwd`) or
/// a streamable HTTP one (`url`, `headers`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The program to run (looked up on `PATH`).
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Added to the child's minimal environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// Streamable HTTP endpoint (`http://` or `https://`); wins over `command`.
    #[serde(default)]
    pub url: Option<String>,
    /// `https://` servers: a PEM file of CA certificates trusted for this
    /// server besides the system's (a private or self-signed CA).
    #[serde(default)]
    pub ca_file: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// OAuth 2.1 (the MCP authorization specification) for an HTTP server
    /// that answers 401: `false` turns it off, an object configures it;
    /// absent means on with the defaults (dynamic client registration, the
    /// host's browser step, tokens in a file only the user can read).
    #[serde(default)]
    pub oauth: OAuthSetting,
    /// Per tool call, in seconds (default 300).
    #[serde(default = "default_timeout")]
    pub timeout: f64,
    /// Connect and initialize, in seconds (default 60).
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout: f64,
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default)]
    pub tools: ToolsFilter,
    /// `"trusted"`: its destructive tools run without asking. Default
    /// `"untrusted"`: a tool annotated `destructiveHint: true` (and not
    /// `readOnlyHint`) asks the approval handler first (denied without one).
    #[serde(default = "untrusted")]
    pub trust: String,
    /// Hold a tool whose description, schema or annotations changed since it
    /// was first listed (a "rug pull") until the host accepts the change
    /// (`ht_runtime_mcp_accept_tools`). Default true; false only reports it.
    #[serde(default = "yes")]
    pub pin: bool,
    /// Seconds between liveness pings of a connected server (0 = none; default 180, min 1).
    #[serde(default = "default_keepalive")]
    pub keepalive_interval: f64,
    /// Consecutive call failures (transport lost, timeouts) that park the
    /// server (default 3; 0 = never).
    #[serde(default = "default_breaker_failures")]
    pub breaker_failures: u32,
    /// Seconds a parked server fails calls fast before one probe (default 60).
    #[serde(default = "default_breaker_cooldown")]
    pub breaker_cooldown: f64,
    /// The server's `sampling/createMessage` requests, answered by the
    /// host's sampling handler.
    #[serde(default)]
    pub sampling: SamplingConfig,
    /// The server's `elicitation/create` requests, put to the host's
    /// approval handler.
    #[serde(default)]
    pub elicitation: ElicitationConfig,
}

/// `oauth`: `false`, or the settings ([`OAuthConfig`]).
#[derive(Clone, Debug)]
pub enum OAuthSetting {
    Enabled(bool),
    Config(Box<OAuthConfig>),
}

// By hand rather than `untagged`: a typo inside the object must be an error
// naming the key, not "did not match any variant".
impl<'de> Deserialize<'de> for OAuthSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Bool(b) => Ok(OAuthSetting::Enabled(b)),
            v @ serde_json::Value::Object(_) => serde_json::from_value(v)
                .map(|c| OAuthSetting::Config(Box::new(c)))
                .map_err(D::Error::custom),
            _ => Err(D::Error::custom("oauth: expected false, true or an object")),
        }
    }
}

impl Default for OAuthSetting {
    fn default() -> Self {
        OAuthSetting::Enabled(true)
    }
}

impl OAuthSetting {
    /// The settings when OAuth is on (`true` or absent: the defaults).
    pub fn config(&self) -> Option<OAuthConfig> {
        match self {
            OAuthSetting::Enabled(false) => None,
            OAuthSetting::Enabled(true) => Some(OAuthConfig::default()),
            OAuthSetting::Config(c) => Some((**c).clone()),
        }
    }
}

/// `mcp_servers.<name>.oauth`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// `"authorization_code"` (default: a user signs in through the host's
    /// browser step) or `"client_credentials"` (machine to machine: needs
    /// `client_id` and `client_secret`, no user).
    #[serde(default)]
    pub grant: Option<String>,
    /// A client registered with the authorization server beforehand; without
    /// it the client registers itself (RFC 7591) or, when `client_metadata_url`
    /// is set and the server supports it, uses that URL as its id.
    #[serde(default)]
    pub client_id: Option<String>,
    /// The pre-registered client's secret (confidential clients only).
    #[serde(default)]
    pub client_secret: Option<String>,
    /// An https URL of this client's metadata document (Client ID Metadata
    /// Documents, SEP-991).
    #[serde(default)]
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for; default: the server's `WWW-Authenticate` scope,
    /// then its protected-resource metadata `scopes_supported`, else none.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Where the authorization server sends the browser back (default
    /// `http://127.0.0.1:8976/callback`; the CLI listens there).
    #[serde(default)]
    pub redirect_uri: Option<String>,
    /// The name registered for this client (default "hermes-tools").
    #[serde(default)]
    pub client_name: Option<String>,
    /// Where tokens are kept: `"file"` (default: one file per server, mode
    /// 0600, under `token_dir`), `"host"` (the host's OAuth handler loads and
    /// saves them) or `"memory"` (this runtime only).
    #[serde(default)]
    pub token_store: Option<String>,
    /// The token files' folder (default `$XDG_STATE_HOME/hermes-tools/mcp-oauth`,
    /// else `~/.local/state/hermes-tools/mcp-oauth`).
    #[serde(default)]
    pub token_dir: Option<String>,
    /// Seconds the host's browser step may take (default 300).
    #[serde(default)]
    pub timeout: Option<f64>,
}

/// The redirect URI used when the config names none.
pub const DEFAULT_REDIRECT_URI: &str = "http://127.0.0.1:8976/callback";

impl OAuthConfig {
    pub fn client_credentials(&self) -> bool {
        self.grant.as_deref() == Some("client_credentials")
    }
    pub fn redirect_uri(&self) -> &str {
        self.redirect_uri.as_deref().unwrap_or(DEFAULT_REDIRECT_URI)
    }
    pub fn token_store(&self) -> &str {
        self.token_store.as_deref().unwrap_or("file")
    }
    pub fn browser_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout.unwrap_or(300.0))
    }

    fn validate(&mut self, what: &str) -> Result<()> {
        let what = format!("{what}.oauth");
        if !matches!(
            self.grant.as_deref(),
            None | Some("authorization_code" | "client_credentials")
        ) {
            return Err(Error::invalid(format!(
                "{what}.grant: '{}' is not one of authorization_code, client_credentials",
                self.grant.as_deref().unwrap_or_default()
            )));
        }
        if self.client_credentials() && (self.client_id.is_none() || self.client_secret.is_none()) {
            return Err(Error::invalid(format!(
                "{what}: grant client_credentials needs client_id and client_secret"
            )));
        }
        if self.client_secret.is_some() && self.client_id.is_none() {
            return Err(Error::invalid(format!(
                "{what}.client_secret: needs the client_id it belongs to"
            )));
        }
        if !matches!(self.token_store(), "file" | "host" | "memory") {
            return Err(Error::invalid(format!(
                "{what}.token_store: '{}' is not one of file, host, memory",
                self.token_store()
            )));
        }
        let r = self.redirect_uri();
        if !(r.starts_with("http://") || r.starts_with("https://")) || r.contains(['#', ' ']) {
            return Err(Error::invalid(format!(
                "{what}.redirect_uri: '{r}' is not an http(s) URL without a fragment"
            )));
        }
        if let Some(u) = &self.client_metadata_url
            && !u.starts_with("https://")
        {
            return Err(Error::invalid(format!(
                "{what}.client_metadata_url: '{u}' is not an https:// URL"
            )));
        }
        if let Some(t) = self.timeout {
            hermes_core::error::seconds(&format!("{what}.timeout"), t, false)?;
        }
        let lookup = |v: &str| std::env::var(v).ok();
        for v in [
            &mut self.client_id,
            &mut self.client_secret,
            &mut self.token_dir,
        ]
        .into_iter()
        .flatten()
        {
            *v = interpolate(v, &lookup);
        }
        Ok(())
    }
}

/// `sampling`: whether the server may ask the host's model, and how much.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplingConfig {
    /// Offer the capability (default true; without a host handler every
    /// request is refused with a reason).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// `maxTokens` of a request is lowered to this (default 4096).
    #[serde(default = "default_max_tokens_cap")]
    pub max_tokens_cap: u64,
    /// Seconds the host may take to answer (default 60).
    #[serde(default = "default_sampling_timeout")]
    pub timeout: f64,
    /// Requests per minute; more are refused (default 10; 0 = no limit).
    #[serde(default = "default_max_rpm")]
    pub max_rpm: u32,
}

impl Default for SamplingConfig {
    fn default() -> Self {
        SamplingConfig {
            enabled: true,
            max_tokens_cap: default_max_tokens_cap(),
            timeout: default_sampling_timeout(),
            max_rpm: default_max_rpm(),
        }
    }
}

/// `elicitation`: whether the server may ask the user for input.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElicitationConfig {
    /// Offer the capability (default true; without an approval handler
    /// every request is declined).
    #[serde(default = "yes")]
    pub enabled: bool,
}

impl Default for ElicitationConfig {
    fn default() -> Self {
        ElicitationConfig { enabled: true }
    }
}

fn default_max_tokens_cap() -> u64 {
    4096
}
fn default_sampling_timeout() -> f64 {
    60.0
}
fn default_max_rpm() -> u32 {
    10
}

/// `tools`: which of the server's tools become tools here.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsFilter {
    /// Only these (the server's names); all when absent.
    #[serde(default)]
    pub include: Option<Vec<String>>,
    #[serde(default)]
    pub exclude: Vec<String>,
    /// `list_resources` / `read_resource` tools when the server has resources.
    #[serde(default = "yes")]
    pub resources: bool,
    /// `list_prompts` / `get_prompt` tools when the server has prompts.
    #[serde(default = "yes")]
    pub prompts: bool,
}

impl Default for ToolsFilter {
    fn default() -> Self {
        ToolsFilter {
            include: None,
            exclude: Vec::new(),
            resources: true,
            prompts: true,
        }
    }
}

fn default_timeout() -> f64 {
    300.0
}
fn default_connect_timeout() -> f64 {
    60.0
}
fn yes() -> bool {
    true
}
fn untrusted() -> String {
    "untrusted".into()
}
fn default_keepalive() -> f64 {
    180.0
}
fn default_breaker_failures() -> u32 {
    3
}
fn default_breaker_cooldown() -> f64 {
    60.0
}

impl ToolsFilter {
    pub fn allows(&self, tool: &str) -> bool {
        self.include
            .as_ref()
            .is_none_or(|inc| inc.iter().any(|t| t == tool))
            && !self.exclude.iter().any(|t| t == tool)
    }
}

impl ServerConfig {
    /// Check a server's entry (`what` names it in messages) and interpolate
    /// `${VAR}` / `${env:VAR}` in every string (unset variables are left as written).
    pub fn validate(mut self, name: &str) -> Result<ServerConfig> {
        let what = format!("runtime config: mcp_servers.{name}");
        if name.is_empty() || name.chars().any(|c| c.is_control()) {
            return Err(Error::invalid(format!(
                "{what}: a server name must be non-empty, without control characters"
            )));
        }
        self.ca_file = self.ca_file.map(|c| {
            let c = interpolate(&c, &|v: &str| std::env::var(v).ok());
            match (c.strip_prefix("~/"), std::env::var("HOME")) {
                (Some(rest), Ok(home)) => format!("{home}/{rest}"),
                _ => c,
            }
        });
        if let Some(url) = &self.url {
            if !url.starts_with("http://") && !url.starts_with("https://") {
                return Err(Error::invalid(format!(
                    "{what}.url: '{url}' is not an http:// or https:// URL"
                )));
            }
            if let Some(ca) = &self.ca_file {
                if !url.starts_with("https://") {
                    return Err(Error::invalid(format!(
                        "{what}.ca_file: only an https:// url uses a CA file ('{url}' is plain http)"
                    )));
                }
                let pem = std::fs::read(ca).map_err(|e| {
                    Error::invalid(format!("{what}.ca_file: cannot read '{ca}': {e}"))
                })?;
                #[cfg(feature = "https")]
                match reqwest::Certificate::from_pem_bundle(&pem) {
                    Ok(certs) if !certs.is_empty() => {}
                    _ => {
                        return Err(Error::invalid(format!(
                            "{what}.ca_file: '{ca}' holds no PEM certificate"
                        )));
                    }
                }
                #[cfg(not(feature = "https"))]
                let _ = pem;
            }
            if let OAuthSetting::Config(c) = &mut self.oauth {
                c.validate(&what)?;
            }
            for (k, v) in &self.headers {
                if http::HeaderName::from_bytes(k.as_bytes()).is_err() {
                    return Err(Error::invalid(format!(
                        "{what}.headers: '{k}' is not a header name"
                    )));
                }
                if v.contains(['\r', '\n', '\0']) {
                    return Err(Error::invalid(format!(
                        "{what}.headers.{k}: control characters in a header value"
                    )));
                }
            }
        } else {
            if matches!(self.oauth, OAuthSetting::Config(_)) {
                return Err(Error::invalid(format!(
                    "{what}.oauth: only an http(s) server (url) uses OAuth"
                )));
            }
            if self.ca_file.is_some() {
                return Err(Error::invalid(format!(
                    "{what}.ca_file: only an https:// url uses a CA file"
                )));
            }
            match &self.command {
                Some(c) if !c.trim().is_empty() => {}
                _ => return Err(Error::invalid(format!("{what}.command (or url): required"))),
            }
        }
        hermes_core::error::seconds(&format!("{what}.timeout"), self.timeout, false)?;
        hermes_core::error::seconds(
            &format!("{what}.connect_timeout"),
            self.connect_timeout,
            false,
        )?;
        if !matches!(self.trust.as_str(), "trusted" | "untrusted") {
            return Err(Error::invalid(format!(
                "{what}.trust: '{}' is not one of trusted, untrusted",
                self.trust
            )));
        }
        if self.keepalive_interval != 0.0 {
            hermes_core::error::seconds(
                &format!("{what}.keepalive_interval"),
                self.keepalive_interval,
                false,
            )?;
        }
        hermes_core::error::seconds(
            &format!("{what}.breaker_cooldown"),
            self.breaker_cooldown,
            false,
        )?;
        hermes_core::error::seconds(
            &format!("{what}.sampling.timeout"),
            self.sampling.timeout,
            false,
        )?;
        if self.sampling.max_tokens_cap == 0 {
            return Err(Error::invalid(format!(
                "{what}.sampling.max_tokens_cap: must be at least 1"
            )));
        }
        for k in self.env.keys() {
            if k.is_empty() || k.contains('=') || k.contains('\0') {
                return Err(Error::invalid(format!(
                    "{what}.env: '{k}' is not an environment variable name"
                )));
            }
        }
        let lookup = |v: &str| std::env::var(v).ok();
        self.command = self.command.map(|c| interpolate(&c, &lookup));
        for a in &mut self.args {
            *a = interpolate(a, &lookup);
        }
        for v in self.env.values_mut() {
            *v = interpolate(v, &lookup);
        }
        self.cwd = self.cwd.map(|c| interpolate(&c, &lookup));
        for v in self.headers.values_mut() {
            *v = interpolate(v, &lookup);
        }
        Ok(self)
    }

    /// The OAuth settings when this HTTP server may use OAuth: on unless
    /// turned off, or a static `Authorization` header is configured.
    pub fn oauth(&self) -> Option<OAuthConfig> {
        self.url.as_ref()?;
        if self
            .headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization"))
        {
            return None;
        }
        self.oauth.config()
    }

    /// `"http"` or `"stdio"`.
    pub fn transport(&self) -> &'static str {
        if self.url.is_some() { "http" } else { "stdio" }
    }

    pub fn call_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout)
    }
    pub fn connect_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.connect_timeout)
    }
    pub fn trusted(&self) -> bool {
        self.trust == "trusted"
    }
    /// The keepalive period, if any.
    pub fn keepalive(&self) -> Option<Duration> {
        (self.keepalive_interval > 0.0).then(|| Duration::from_secs_f64(self.keepalive_interval))
    }
    pub fn breaker_cooldown(&self) -> Duration {
        Duration::from_secs_f64(self.breaker_cooldown)
    }

    /// The child's environment: a safe baseline taken from ours (`PATH`,
    /// `HOME`, `USER`, `LANG`, `LC_ALL`, `TERM`, `SHELL`, `TMPDIR`, `XDG_*`)
    /// plus the config's `env` (which wins). Nothing else leaks: no API keys.
    pub fn child_env(&self) -> BTreeMap<String, String> {
        let mut out: BTreeMap<String, String> = std::env::vars()
            .filter(|(k, _)| SAFE_ENV.contains(&k.as_str()) || k.starts_with("XDG_"))
            .collect();
        out.extend(self.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        out
    }
}

/// Variables a stdio server inherits from the host.
pub const SAFE_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR",
];

/// Replace `${VAR}` and `${env:VAR}` with `lookup(VAR)`; unknown ones stay.
pub fn interpolate(s: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) => {
                let inner = &after[..end];
                let var = inner.strip_prefix("env:").unwrap_or(inner);
                match (!var.is_empty()).then(|| lookup(var)).flatten() {
                    Some(v) => out.push_str(&v),
                    None => out.push_str(&rest[start..start + 2 + end + 1]),
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation() {
        let l = |v: &str| (v == "A").then(|| "x".to_string());
        assert_eq!(interpolate("a${A}b${env:A}", &l), "axbx");
        assert_eq!(interpolate("${B} ${} ${A", &l), "${B} ${} ${A");
        assert_eq!(interpolate("no vars", &l), "no vars");
    }

    #[test]
    fn filter() {
        let f = ToolsFilter {
            include: Some(vec!["a".into(), "b".into()]),
            exclude: vec!["b".into()],
            ..Default::default()
        };
        assert!(f.allows("a") && !f.allows("b") && !f.allows("c"));
        assert!(ToolsFilter::default().allows("z"));
    }
}
