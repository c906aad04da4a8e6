//! Official package sources and the environment variables that redirect
//! package managers (a leaf module, used by the analysis and the supply
//! chain family).

/// Hosts of the default public package indexes and proxies.
pub fn official_source(v: &str) -> bool {
    let l = v.trim().trim_matches(['"', '\'']).to_ascii_lowercase();
    if matches!(
        l.as_str(),
        "direct" | "off" | "defaults" | "conda-forge" | "main" | "pypi" | "crates-io"
    ) {
        return true;
    }
    let host = l
        .trim_start_matches("sparse+")
        .split("://")
        .nth(1)
        .unwrap_or(&l)
        .split(['/', ':'])
        .next()
        .unwrap_or("");
    matches!(
        host,
        "pypi.org"
            | "pypi.python.org"
            | "files.pythonhosted.org"
            | "registry.npmjs.org"
            | "registry.npmjs.com"
            | "registry.yarnpkg.com"
            | "crates.io"
            | "index.crates.io"
            | "static.crates.io"
            | "rubygems.org"
            | "proxy.golang.org"
            | "sum.golang.org"
            | "repo.anaconda.com"
            | "conda.anaconda.org"
            | "repo1.maven.org"
            | "repo.maven.apache.org"
            | "api.nuget.org"
            | "repo.packagist.org"
            | "packagist.org"
    ) && l.starts_with("https://")
        || (l.starts_with("sparse+https://index.crates.io"))
}

/// Does `NAME=value` point a package manager somewhere untrusted or turn
/// its verification off?
pub fn package_env_risky(name: &str, value: &str) -> bool {
    let n = name.to_ascii_uppercase();
    let v = value.trim();
    let all_official = |v: &str| {
        v.split([',', '|', ' '])
            .filter(|s| !s.is_empty())
            .all(official_source)
    };
    match n.as_str() {
        "PIP_INDEX_URL"
        | "PIP_EXTRA_INDEX_URL"
        | "PIP_FIND_LINKS"
        | "UV_INDEX_URL"
        | "UV_EXTRA_INDEX_URL"
        | "UV_DEFAULT_INDEX"
        | "UV_INDEX"
        | "UV_FIND_LINKS"
        | "NPM_CONFIG_REGISTRY"
        | "YARN_REGISTRY"
        | "YARN_NPM_REGISTRY_SERVER"
        | "BUN_CONFIG_REGISTRY"
        | "PNPM_REGISTRY"
        | "GOPROXY"
        | "CONDA_CHANNELS"
        | "POETRY_REPOSITORIES_URL"
        | "GEM_SOURCE"
        | "COMPOSER_REPO_PACKAGIST" => !all_official(v),
        "PIP_TRUSTED_HOST" | "UV_INSECURE_HOST" | "GONOSUMDB" | "GONOSUMCHECK" | "GOINSECURE"
        | "GONOSUMDB_PATTERN" => !v.is_empty(),
        "GOSUMDB" => v == "off" || !(v == "sum.golang.org" || v.starts_with("sum.golang.org ")),
        "GOFLAGS" => v.contains("-insecure"),
        "GOPRIVATE" => v.split(',').any(|p| p == "*" || p == "*/*"),
        "NODE_TLS_REJECT_UNAUTHORIZED" | "PYTHONHTTPSVERIFY" => v == "0",
        "NPM_CONFIG_STRICT_SSL" => v.eq_ignore_ascii_case("false"),
        "GIT_SSL_NO_VERIFY" => !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"),
        _ => {
            (n.starts_with("CARGO_REGISTRIES_") && n.ends_with("_INDEX") && !official_source(v))
                || (n.starts_with("BUNDLE_MIRROR__") && !official_source(v))
        }
    }
}
