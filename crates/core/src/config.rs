//! The parts of the runtime config the core reads itself: dispatch limits
//! and availability-check timing. The runtime parses the whole config.

use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DispatchConfig {
    /// Default per-call timeout in seconds for host handlers (0 = none).
    pub timeout: f64,
    /// Seconds to wait for a hook decision before continuing without it.
    pub hook_timeout: f64,
    /// Default result cap in characters for tools that do not set their own.
    pub max_result_size_chars: usize,
    /// Worker threads for a parallel batch segment.
    pub max_parallel: usize,
    /// When a registered tool's parameters schema is compiled.
    pub compile_schemas: CompileSchemas,
    /// Repair arguments before validating them (`"5"` for an integer, a
    /// JSON-encoded array or object, a bare value for a one-item list,
    /// arguments double-encoded as a string). `false`: arguments are
    /// validated exactly as the model wrote them.
    pub repair: bool,
    /// Whether JSON Schema `format` is asserted (see [`Formats`]).
    pub formats: Formats,
}

/// `dispatch.formats`: what `format` does in a parameters schema.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Formats {
    /// What the schema's draft says by default: an annotation in 2020-12
    /// (the default draft), an assertion in draft-07 (and 4, 6), an
    /// assertion in a 2020-12 dialect whose meta-schema requires the
    /// format-assertion vocabulary.
    #[default]
    Draft,
    /// Always asserted: `"format": "date"` refuses `"yesterday"`.
    Assert,
    /// Never asserted: only an annotation.
    Annotate,
}

/// `dispatch.compile_schemas`: when a tool's parameters schema compiles.
/// Registration always checks the JSON, the spec's fields and the schema's
/// top-level type; the rest of the schema compiles either on the tool's
/// first call (cheap registration: most tools of a large registry are
/// never called) or at registration (a bad schema is refused where the
/// host wrote it). See crates/core/src/params.rs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompileSchemas {
    #[default]
    OnFirstUse,
    AtRegistration,
}

impl Default for DispatchConfig {
    fn default() -> Self {
        DispatchConfig {
            timeout: 300.0,
            hook_timeout: 30.0,
            max_result_size_chars: 100_000,
            max_parallel: 8,
            compile_schemas: CompileSchemas::OnFirstUse,
            repair: true,
            formats: Formats::Draft,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AvailabilityConfig {
    /// How long a check result is trusted, in seconds.
    pub ttl: f64,
    /// A check that fails within this many seconds of a success still counts as available.
    pub failure_grace: f64,
    /// How long definitions wait for checks before treating them as unavailable, in ms.
    pub check_timeout_ms: u64,
}

impl Default for AvailabilityConfig {
    fn default() -> Self {
        AvailabilityConfig {
            ttl: 30.0,
            failure_grace: 60.0,
            check_timeout_ms: 250,
        }
    }
}

/// Caps on hostile or runaway sizes. Each one, when exceeded, gives a clear
/// error naming the limit (`limits.<key>`) instead of unbounded memory or time.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Most calls in one batch (`ht_runtime_dispatch_batch`).
    pub max_batch_calls: usize,
    /// Most bytes of one batch's JSON text.
    pub max_batch_bytes: usize,
    /// Most bytes of one tool spec (its schema included) at registration.
    pub max_schema_bytes: usize,
    /// Most regular expressions (`pattern`, `patternProperties` keys) in one tool's schema.
    pub max_schema_patterns: usize,
    /// Most events queued for the host's event handler; more are dropped and counted.
    pub max_queued_events: usize,
    /// Most async calls in flight (started, not yet completed) per runtime.
    pub max_calls_in_flight: usize,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            max_batch_calls: 256,
            max_batch_bytes: 16 * 1024 * 1024,
            max_schema_bytes: 1024 * 1024,
            max_schema_patterns: 1000,
            max_queued_events: 1024,
            max_calls_in_flight: 65_536,
        }
    }
}
