//! Which of the host's environment variables a command inherits: an
//! allow-list, never the whole environment.
//!
//! Why an allow-list: a name-based scrub ("drop what looks like a key")
//! misses most secret names in practice (`PGPASSWORD` is caught, but
//! `DATABASE_URL`, `SENTRY_DSN`, `SLACK_WEBHOOK_URL`, `MYSQL_PWD` and every
//! vendor's own name are not), and the host's environment is exactly where
//! agent hosts keep their API keys. So a command gets the variables a shell
//! and the common toolchains need ([`CORE`] and [`CORE_PREFIXES`]), the
//! proxy variables when they carry no credentials, and what the host names
//! itself (`terminal.env_passthrough`, `terminal.env`); everything else stays
//! in the host. The old behaviour (everything but secret-looking names) is
//! `terminal.env_inherit: "all"`, kept for hosts that relied on it.

/// Variables every command inherits when the host has them: the shell's own
/// and the non-secret homes and settings of common toolchains, so `cargo`,
/// `go`, `npm`, `pip` in a virtual environment, `java` and `conda` keep
/// working.
pub const CORE: &[&str] = &[
    // shell and locale
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "TZ",
    "TMPDIR",
    "HOSTNAME",
    // Rust
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_TARGET_DIR",
    // Go
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOMODCACHE",
    "GOBIN",
    "GOFLAGS",
    "GOPROXY",
    "GOPRIVATE",
    "GONOSUMDB",
    "GOTOOLCHAIN",
    // Python
    "VIRTUAL_ENV",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "PYTHONPATH",
    "PYTHONHOME",
    "PIPX_HOME",
    "POETRY_HOME",
    "UV_CACHE_DIR",
    "PIP_CACHE_DIR",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "CONDA_EXE",
    "CONDA_SHLVL",
    "CONDA_PYTHON_EXE",
    "MAMBA_ROOT_PREFIX",
    // Node, Deno, Bun
    "NVM_DIR",
    "NVM_BIN",
    "NVM_INC",
    "NODE_PATH",
    "NODE_OPTIONS",
    "NODE_EXTRA_CA_CERTS",
    "PNPM_HOME",
    "COREPACK_HOME",
    "BUN_INSTALL",
    "DENO_DIR",
    "VOLTA_HOME",
    "FNM_DIR",
    // JVM, .NET, Ruby, Android
    "JAVA_HOME",
    "JDK_HOME",
    "MAVEN_HOME",
    "M2_HOME",
    "GRADLE_HOME",
    "GRADLE_USER_HOME",
    "DOTNET_ROOT",
    "GEM_HOME",
    "GEM_PATH",
    "RBENV_ROOT",
    "ANDROID_HOME",
    "ANDROID_SDK_ROOT",
    // C and C++ builds
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "LDFLAGS",
    "PKG_CONFIG_PATH",
    "LD_LIBRARY_PATH",
    "LIBRARY_PATH",
    "CPATH",
    "CMAKE_PREFIX_PATH",
    "MAKEFLAGS",
    // certificates
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
];

/// Name prefixes every command inherits (locale categories, XDG folders).
pub const CORE_PREFIXES: &[&str] = &["LC_", "XDG_"];

/// Proxy variables: inherited only when they carry no credentials
/// (`http://user:pass@proxy` stays in the host).
pub const PROXIES: &[&str] = &[
    "http_proxy",
    "https_proxy",
    "ftp_proxy",
    "all_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "FTP_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
];

/// How much of the host's environment commands inherit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Inherit {
    /// [`CORE`], [`CORE_PREFIXES`], credential-free [`PROXIES`] and the
    /// names the host passes through (the default).
    #[default]
    Core,
    /// Everything except secret-looking names (the original's behaviour).
    All,
}

/// Whether a host variable `name=value` reaches commands under `inherit`.
/// `passthrough` names always pass; `is_secret_name` is the second net that
/// keeps a secret-looking name out unless passed through by name.
pub fn inherits(
    inherit: Inherit,
    name: &str,
    value: &str,
    passthrough: &[String],
    is_secret_name: &dyn Fn(&str) -> bool,
) -> bool {
    if passthrough.iter().any(|p| p == name) {
        return true;
    }
    // A value that carries credentials is a secret whatever its name
    // (`GOPROXY=https://user:token@proxy,direct`, `PIP_INDEX_URL`, ...).
    if is_secret_name(name) || has_credentials(value) {
        return false;
    }
    match inherit {
        Inherit::All => true,
        Inherit::Core => {
            CORE.contains(&name)
                || CORE_PREFIXES.iter().any(|p| name.starts_with(p))
                || PROXIES.contains(&name)
        }
    }
}

/// Whether any URL in `value` (a list separated by `,`, `|`, spaces or
/// `;`, as proxy and module-proxy variables are) has a `user@` or
/// `user:password@` part; proxies without a scheme count too.
fn has_credentials(value: &str) -> bool {
    value
        .split([',', '|', ' ', ';'])
        .filter(|u| !u.is_empty())
        .any(|u| {
            let (scheme, rest) = u.split_once("://").map_or((None, u), |(s, r)| (Some(s), r));
            let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
            // `user@host` without a scheme is an address, not a URL, unless
            // it names a password.
            authority.contains('@') && (scheme.is_some() || authority.contains(':'))
        })
}

/// The host's variables a command inherits (see [`inherits`]).
pub fn host_env(
    inherit: Inherit,
    passthrough: &[String],
    is_secret_name: &dyn Fn(&str) -> bool,
) -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, v)| inherits(inherit, k, v, passthrough, is_secret_name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never(_: &str) -> bool {
        false
    }

    #[test]
    fn core_names_pass_and_unknown_names_stay() {
        for k in [
            "PATH",
            "HOME",
            "LC_ALL",
            "XDG_CONFIG_HOME",
            "CARGO_HOME",
            "VIRTUAL_ENV",
        ] {
            assert!(inherits(Inherit::Core, k, "x", &[], &never), "{k}");
        }
        for k in [
            "PGPASSWORD",
            "MYSQL_PWD",
            "DB_PASS",
            "DATABASE_URL",
            "OPENAI_KEY",
            "SENTRY_DSN",
            "SLACK_WEBHOOK_URL",
            "SOME_VENDOR_THING",
        ] {
            assert!(!inherits(Inherit::Core, k, "x", &[], &never), "{k}");
        }
        assert!(inherits(
            Inherit::Core,
            "SENTRY_DSN",
            "x",
            &["SENTRY_DSN".into()],
            &never
        ));
    }

    #[test]
    fn proxies_pass_only_without_credentials() {
        assert!(inherits(
            Inherit::Core,
            "https_proxy",
            "http://proxy:3128",
            &[],
            &never
        ));
        assert!(!inherits(
            Inherit::Core,
            "https_proxy",
            "http://u:pw@proxy:3128",
            &[],
            &never
        ));
    }

    /// Red team 2026-11-28: a credentialed GOPROXY (a list; `GOPROXY` is a
    /// toolchain variable of the core list, not a proxy variable) reached
    /// commands.
    #[test]
    fn any_value_with_url_credentials_stays_whatever_its_name() {
        for (name, value) in [
            ("GOPROXY", "https://user:CANARY@proxy.example,direct"),
            ("GOPROXY", "direct|https://tok@goproxy.example"),
            ("PIP_INDEX_URL", "https://u:p@pypi.example/simple"),
            ("https_proxy", "u:pw@proxy:3128"),
        ] {
            for inherit in [Inherit::Core, Inherit::All] {
                assert!(
                    !inherits(inherit, name, value, &[], &never),
                    "{name}={value}"
                );
            }
        }
        assert!(inherits(
            Inherit::Core,
            "GOPROXY",
            "https://proxy.golang.org,direct",
            &[],
            &never
        ));
        assert!(inherits(
            Inherit::All,
            "EMAIL",
            "me@example.com",
            &[],
            &never
        ));
        // Named by the host, it passes.
        assert!(inherits(
            Inherit::Core,
            "GOPROXY",
            "https://u:p@x",
            &["GOPROXY".into()],
            &never
        ));
    }

    #[test]
    fn all_keeps_the_name_net() {
        let secret = |n: &str| n.contains("TOKEN");
        assert!(inherits(
            Inherit::All,
            "SOME_VENDOR_THING",
            "x",
            &[],
            &secret
        ));
        assert!(!inherits(Inherit::All, "GITHUB_TOKEN", "x", &[], &secret));
        assert!(!inherits(Inherit::Core, "GITHUB_TOKEN", "x", &[], &secret));
    }
}
