//! Names: `mcp__<server>__<tool>` and toolset `mcp-<server>`, sanitized to
//! `[A-Za-z0-9_-]` and at most 64 characters (a stable short hash of the
//! full name replaces the tail of a longer one).

/// The longest tool or toolset name the registry accepts.
pub const MAX_NAME: usize = 64;

/// Every character outside `[A-Za-z0-9_-]` becomes `_`.
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// FNV-1a 64: stable across builds and platforms (std's hasher is not).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h ^= 0;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        for b in p.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// `name` cut to [`MAX_NAME`] with `_` and 8 hex digits of `parts`' hash
/// when it is longer.
fn fit(name: String, parts: &[&str]) -> String {
    if name.len() <= MAX_NAME {
        return name;
    }
    let hash = format!("_{:08x}", fnv1a(parts) as u32);
    let keep = MAX_NAME - hash.len();
    format!("{}{hash}", &name[..keep]) // ASCII only: any index is a boundary
}

/// The registered name of `tool` of `server`.
pub fn tool_name(server: &str, tool: &str) -> String {
    fit(
        format!("mcp__{}__{}", sanitize(server), sanitize(tool)),
        &[server, tool],
    )
}

/// The toolset of `server`'s tools.
pub fn toolset_name(server: &str) -> String {
    fit(format!("mcp-{}", sanitize(server)), &[server])
}

/// The alias of the toolset (the server's own name, when it is a valid name).
pub fn alias_name(server: &str) -> Option<String> {
    let s = sanitize(server);
    (s == server && s.len() <= MAX_NAME).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(tool_name("fs", "read_file"), "mcp__fs__read_file");
        assert_eq!(tool_name("my server", "a.b/c"), "mcp__my_server__a_b_c");
        let long = "x".repeat(100);
        let a = tool_name("s", &long);
        assert_eq!(a.len(), 64);
        assert_eq!(a, tool_name("s", &long), "stable");
        assert_ne!(a, tool_name("s", &format!("{long}y")));
        assert_eq!(toolset_name("everything"), "mcp-everything");
        assert_eq!(alias_name("a b"), None);
    }
}
