//! Secrets the sandbox sees only as placeholders (see the module above).

use super::policy;

/// How every placeholder starts (`hermes-secret-<NAME>-<random>`).
pub const PLACEHOLDER_PREFIX: &str = "hermes-secret-";

/// A value the command never sees: it gets [`Secret::placeholder`] in the
/// variable `name`, and the proxy puts `value` in its place in requests to
/// `hosts` only.
pub struct Secret {
    pub name: String,
    pub value: String,
    /// Name rules (as in `allow`) of the hosts the value may go to.
    pub hosts: Vec<policy::NamePattern>,
    /// Host variables that carry the value and must not reach the command.
    pub unset: Vec<String>,
    pub placeholder: String,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secret")
            .field("name", &self.name)
            .field("hosts", &self.hosts)
            .field("placeholder", &self.placeholder)
            .finish_non_exhaustive()
    }
}

impl Secret {
    /// A secret with a fresh random placeholder; `hosts` are name rules
    /// (`api.example.com`, `*.example.com`).
    pub fn new(
        name: &str,
        value: String,
        hosts: &[String],
        unset: Vec<String>,
    ) -> Result<Secret, String> {
        let mut pats = Vec::new();
        for h in hosts {
            match policy::Rule::parse(h) {
                Ok(policy::Rule::Name(p, _)) => pats.push(p),
                Ok(policy::Rule::Range(..)) => {
                    return Err(format!(
                        "secrets.{name}.hosts: '{h}': a secret goes to host names, not IP ranges"
                    ));
                }
                Err(e) => return Err(format!("secrets.{name}.hosts: {e}")),
            }
        }
        if pats.is_empty() {
            return Err(format!("secrets.{name}.hosts: name at least one host"));
        }
        if value.is_empty() {
            return Err(format!("secrets.{name}: the value is empty"));
        }
        if value.contains(['\r', '\n']) {
            return Err(format!(
                "secrets.{name}: the value has a line break (it goes into HTTP headers)"
            ));
        }
        Ok(Secret {
            name: name.into(),
            value,
            hosts: pats,
            unset,
            placeholder: format!("{PLACEHOLDER_PREFIX}{name}-{}", random_hex(16)),
        })
    }
}

/// `n` random bytes as hex, from the kernel.
pub(crate) fn random_hex(n: usize) -> String {
    let mut b = vec![0u8; n];
    if rustix::rand::getrandom(&mut b, rustix::rand::GetRandomFlags::empty()).is_err() {
        // Never reached on Linux >= 3.17; still unpredictable enough for a
        // placeholder, which is not itself a secret.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        for (i, x) in b.iter_mut().enumerate() {
            *x = (t >> ((i % 16) * 8)) as u8 ^ std::process::id() as u8;
        }
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}
