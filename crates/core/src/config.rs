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
}

impl Default for DispatchConfig {
    fn default() -> Self {
        DispatchConfig {
            timeout: 300.0,
            hook_timeout: 30.0,
            max_result_size_chars: 100_000,
            max_parallel: 8,
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
