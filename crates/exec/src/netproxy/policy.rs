//! The rules of a network allow-list: host name patterns, IP ranges, and
//! the address classes a sandbox never reaches unless a rule names them.
//!
//! A rule is one of:
//! - `example.com`: that name exactly (any port);
//! - `*.example.com`: any name below it (`a.example.com`, `a.b.example.com`),
//!   not `example.com` itself (list both for both);
//! - `10.1.0.0/16`, `192.0.2.7`, `2001:db8::/32`: an IP range or address.
//!
//! `deny` wins over `allow`. A name passes when an `allow` name rule matches
//! it and no `deny` name rule does; then each address it resolves to must
//! pass too: none in a `deny` range, and none private, loopback,
//! link-local (cloud metadata endpoints such as 169.254.169.254 among
//! them), multicast or otherwise special unless an `allow` range holds it
//! (or it came from `hosts`, the operator's own mapping). An IP literal
//! passes only when an `allow` range holds it: a name rule never lets a
//! bare address through.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A name rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NamePattern {
    Exact(String),
    /// `*.suffix`: names strictly below `suffix`.
    Below(String),
}

impl NamePattern {
    pub fn matches(&self, host: &str) -> bool {
        match self {
            NamePattern::Exact(n) => host == n,
            NamePattern::Below(s) => {
                host.len() > s.len() + 1
                    && host.ends_with(s.as_str())
                    && host.as_bytes()[host.len() - s.len() - 1] == b'.'
            }
        }
    }
}

/// An IP range (`addr/prefix`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    pub addr: IpAddr,
    pub prefix: u8,
}

impl Cidr {
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        match (self.addr, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let mask = u32::MAX.checked_shl(32 - self.prefix as u32).unwrap_or(0);
                u32::from(n) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let mask = u128::MAX.checked_shl(128 - self.prefix as u32).unwrap_or(0);
                u128::from(n) & mask == u128::from(a) & mask
            }
            _ => false,
        }
    }

    fn parse(s: &str) -> Option<Cidr> {
        let (a, p) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = a
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match p {
            Some(p) => p.parse::<u8>().ok().filter(|p| *p <= max)?,
            None => max,
        };
        Some(Cidr {
            addr: canonical(addr),
            prefix,
        })
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    }
}

/// One rule as written, and what it means.
#[derive(Clone, Debug)]
pub enum Rule {
    Name(NamePattern, String),
    Range(Cidr, String),
}

impl Rule {
    /// Parse one rule; the error names it and says what a rule looks like.
    pub fn parse(text: &str) -> Result<Rule, String> {
        let t = text.trim();
        let bad = |why: &str| {
            Err(format!(
                "'{text}': {why} (a rule is a host name, '*.' and a domain, or an IP address or range such as 10.0.0.0/8)"
            ))
        };
        if t.is_empty() {
            return bad("empty");
        }
        if let Some(c) = Cidr::parse(t) {
            return Ok(Rule::Range(c, t.to_string()));
        }
        if t.contains('/') || t.contains(':') {
            return bad(
                "not a valid IP range, and a host name has no '/' or ':' (ports are not part of a rule)",
            );
        }
        let lower = t.to_ascii_lowercase();
        let lower = lower.trim_end_matches('.');
        if let Some(rest) = lower.strip_prefix("*.") {
            if !valid_name(rest) || !rest.contains('.') && rest.len() < 2 {
                return bad("not a valid domain after '*.'");
            }
            return Ok(Rule::Name(NamePattern::Below(rest.to_string()), t.into()));
        }
        if lower == "*" {
            return bad("'*' would allow everything: use \"on\" for that");
        }
        if !valid_name(lower) {
            return bad(
                "not a valid host name (letters, digits, '-', '.', with '*.' only in front)",
            );
        }
        Ok(Rule::Name(NamePattern::Exact(lower.to_string()), t.into()))
    }
}

/// A host name the proxy accepts: ASCII letters, digits, `-`, `_` and dots,
/// labels of 1 to 63 characters (an internationalised name arrives as its
/// `xn--` form from any client that resolves it).
pub fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 253
        && n.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// The allow-list policy.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    pub allow: Vec<Rule>,
    pub deny: Vec<Rule>,
    /// Ask the approval handler about a name no rule allows (not about one a
    /// `deny` rule names).
    pub ask: bool,
    /// Names answered from this table instead of DNS (the operator's own
    /// mapping, like /etc/hosts; tests point names at loopback servers).
    /// Its addresses skip the special-address check.
    pub hosts: BTreeMap<String, Vec<IpAddr>>,
    /// Certificate authorities (PEM) trusted for upstreams beside the
    /// system's, when the proxy makes TLS itself (HTTPS to a secret's host).
    pub upstream_ca: Vec<Vec<u8>>,
}

/// Why a connection is refused: the rule (a short key or the rule as
/// written) and a sentence for the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub host: String,
    pub port: u16,
    /// `deny:<rule>`, `not-allowed`, `private-address`, `secret-host:<NAME>`,
    /// `unresolved`, `invalid-host`, `not-approved`.
    pub rule: String,
    pub message: String,
}

/// What the host is told, and asked, about the sandbox's connections.
pub trait NetEvents: Send + Sync {
    /// A connection or request was refused (runs on a proxy thread: must
    /// not block).
    fn refused(&self, r: &Refusal);
    /// Whether `host:port`, which no rule allows, may be reached for the
    /// rest of the session (blocking: the approval handler is asked).
    /// Called only when the policy's `ask` is on.
    fn ask(&self, host: &str, port: u16) -> bool {
        let _ = (host, port);
        false
    }
}

/// What the name check says.
#[derive(Debug)]
pub enum NameVerdict {
    Allowed,
    /// No rule allows it: refused, or asked about when `ask` is on.
    Unlisted,
    Refused(Refusal),
}

impl Rules {
    /// Build from the rules as written; every error names its rule.
    pub fn new(
        allow: &[String],
        deny: &[String],
        ask: bool,
        hosts: &BTreeMap<String, Vec<String>>,
    ) -> Result<Rules, String> {
        let parse = |key: &str, xs: &[String]| -> Result<Vec<Rule>, String> {
            xs.iter()
                .map(|x| Rule::parse(x).map_err(|e| format!("{key}: {e}")))
                .collect()
        };
        let mut table = BTreeMap::new();
        for (name, addrs) in hosts {
            let n = name.trim_end_matches('.').to_ascii_lowercase();
            if !valid_name(&n) {
                return Err(format!("hosts: '{name}' is not a valid host name"));
            }
            let mut ips = Vec::new();
            for a in addrs {
                ips.push(
                    a.parse::<IpAddr>()
                        .map_err(|_| format!("hosts: '{name}': '{a}' is not an IP address"))?,
                );
            }
            if ips.is_empty() {
                return Err(format!("hosts: '{name}' has no address"));
            }
            table.insert(n, ips);
        }
        Ok(Rules {
            allow: parse("allow", allow)?,
            deny: parse("deny", deny)?,
            ask,
            hosts: table,
            upstream_ca: Vec::new(),
        })
    }

    /// The name check (`host` lower-case, no trailing dot).
    pub fn check_name(&self, host: &str, port: u16) -> NameVerdict {
        for r in &self.deny {
            if let Rule::Name(p, text) = r
                && p.matches(host)
            {
                return NameVerdict::Refused(Refusal {
                    host: host.into(),
                    port,
                    rule: format!("deny:{text}"),
                    message: format!("{host} matches the deny rule '{text}'"),
                });
            }
        }
        let allowed = self
            .allow
            .iter()
            .any(|r| matches!(r, Rule::Name(p, _) if p.matches(host)));
        if allowed {
            NameVerdict::Allowed
        } else {
            NameVerdict::Unlisted
        }
    }

    /// The address check for `ip` (reached as `host`); `from_hosts`: the
    /// address came from the `hosts` table.
    pub fn check_addr(
        &self,
        host: &str,
        port: u16,
        ip: IpAddr,
        from_hosts: bool,
    ) -> Result<(), Refusal> {
        let ip = canonical(ip);
        for r in &self.deny {
            if let Rule::Range(c, text) = r
                && c.contains(ip)
            {
                return Err(Refusal {
                    host: host.into(),
                    port,
                    rule: format!("deny:{text}"),
                    message: format!("{host} resolves to {ip}, in the deny rule '{text}'"),
                });
            }
        }
        let listed = self
            .allow
            .iter()
            .any(|r| matches!(r, Rule::Range(c, _) if c.contains(ip)));
        let literal = host.parse::<IpAddr>().is_ok();
        if literal && !listed {
            return Err(Refusal {
                host: host.into(),
                port,
                rule: "not-allowed".into(),
                message: format!(
                    "{ip} is not in the allow-list (an IP address needs an IP range in terminal.network.allow)"
                ),
            });
        }
        if let Some(class) = special(ip)
            && !listed
            && !from_hosts
        {
            return Err(Refusal {
                host: host.into(),
                port,
                rule: "private-address".into(),
                message: format!(
                    "{host} resolves to {ip}, a {class} address, which the sandbox never reaches unless terminal.network.allow lists its range"
                ),
            });
        }
        Ok(())
    }

    /// The rules as written, for `doctor` and errors.
    pub fn describe(&self) -> String {
        let list = |rs: &[Rule]| {
            rs.iter()
                .map(|r| match r {
                    Rule::Name(_, t) | Rule::Range(_, t) => t.as_str(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut s = format!("allow [{}]", list(&self.allow));
        if !self.deny.is_empty() {
            s.push_str(&format!(", deny [{}]", list(&self.deny)));
        }
        if self.ask {
            s.push_str(", other names asked through the approval handler");
        }
        if !self.hosts.is_empty() {
            s.push_str(&format!(
                ", {} name(s) from terminal.network.hosts",
                self.hosts.len()
            ));
        }
        s
    }
}

/// The class of a special address (`None`: a public unicast address).
pub fn special(ip: IpAddr) -> Option<&'static str> {
    match canonical(ip) {
        IpAddr::V4(a) => special_v4(a),
        IpAddr::V6(a) => special_v6(a),
    }
}

fn special_v4(a: Ipv4Addr) -> Option<&'static str> {
    let o = a.octets();
    Some(match o {
        [127, ..] => "loopback",
        [169, 254, ..] => "link-local (cloud metadata)",
        [10, ..] | [192, 168, ..] => "private",
        [172, b, ..] if (16..32).contains(&b) => "private",
        [100, b, ..] if (64..128).contains(&b) => "shared (carrier-grade NAT)",
        [0, ..] => "unspecified ('this network')",
        [192, 0, 0, _] => "IETF protocol assignment",
        [192, 0, 2, _] | [198, 51, 100, _] | [203, 0, 113, _] => "documentation",
        [198, b, ..] if b == 18 || b == 19 => "benchmarking",
        [a0, ..] if a0 >= 224 => "multicast or reserved",
        _ => return None,
    })
}

fn special_v6(a: Ipv6Addr) -> Option<&'static str> {
    let s = a.segments();
    if a.is_unspecified() {
        return Some("unspecified");
    }
    if a.is_loopback() {
        return Some("loopback");
    }
    Some(match s[0] {
        x if x & 0xffc0 == 0xfe80 => "link-local",
        x if x & 0xffc0 == 0xfec0 => "site-local",
        x if x & 0xfe00 == 0xfc00 => "unique local (private)",
        x if x & 0xff00 == 0xff00 => "multicast",
        0x2001 if s[1] == 0x0db8 => "documentation",
        // NAT64 and the old IPv4-compatible form carry an IPv4 address:
        // judged as that address.
        0x0064 if s[1] == 0xff9b => {
            let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
            return special_v4(v4).or(Some("NAT64"));
        }
        0 if s[1..6].iter().all(|x| *x == 0) => "IPv4-compatible",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(allow: &[&str], deny: &[&str]) -> Rules {
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Rules::new(&v(allow), &v(deny), false, &BTreeMap::new()).unwrap()
    }

    #[test]
    fn names_wildcards_and_deny() {
        let r = rules(&["Example.com", "*.github.com"], &["evil.github.com"]);
        assert!(matches!(
            r.check_name("example.com", 443),
            NameVerdict::Allowed
        ));
        assert!(matches!(
            r.check_name("api.github.com", 443),
            NameVerdict::Allowed
        ));
        assert!(matches!(
            r.check_name("a.b.github.com", 443),
            NameVerdict::Allowed
        ));
        assert!(matches!(
            r.check_name("github.com", 443),
            NameVerdict::Unlisted
        ));
        assert!(matches!(
            r.check_name("xgithub.com", 443),
            NameVerdict::Unlisted
        ));
        assert!(matches!(
            r.check_name("sub.example.com", 443),
            NameVerdict::Unlisted
        ));
        match r.check_name("evil.github.com", 443) {
            NameVerdict::Refused(f) => assert_eq!(f.rule, "deny:evil.github.com"),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn bad_rules_are_errors() {
        for bad in [
            "",
            "*",
            "a b",
            "example.com:443",
            "10.0.0.0/33",
            "*.",
            "http://x",
        ] {
            assert!(Rule::parse(bad).is_err(), "{bad}");
        }
        assert!(matches!(Rule::parse("10.0.0.0/8"), Ok(Rule::Range(..))));
        assert!(matches!(Rule::parse("::1"), Ok(Rule::Range(..))));
    }

    #[test]
    fn special_addresses_need_a_range() {
        let r = rules(&["x.test", "10.1.0.0/16"], &["203.0.113.0/24"]);
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        for a in [
            "169.254.169.254",
            "127.0.0.1",
            "10.2.0.1",
            "192.168.1.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "0.0.0.0",
        ] {
            let e = r.check_addr("x.test", 80, ip(a), false).unwrap_err();
            assert_eq!(e.rule, "private-address", "{a}");
        }
        assert!(r.check_addr("x.test", 80, ip("10.1.2.3"), false).is_ok());
        assert!(
            r.check_addr("x.test", 80, ip("93.184.216.34"), false)
                .is_ok()
        );
        assert!(r.check_addr("x.test", 80, ip("127.0.0.1"), true).is_ok());
        assert_eq!(
            r.check_addr("x.test", 80, ip("203.0.113.9"), true)
                .unwrap_err()
                .rule,
            "deny:203.0.113.0/24"
        );
        // A literal needs a range, public or not.
        assert_eq!(
            r.check_addr("93.184.216.34", 80, ip("93.184.216.34"), false)
                .unwrap_err()
                .rule,
            "not-allowed"
        );
        assert!(r.check_addr("10.1.0.9", 80, ip("10.1.0.9"), false).is_ok());
    }
}
