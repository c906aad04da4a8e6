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
