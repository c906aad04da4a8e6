//! Secret redaction for everything the approval layer shows to hosts, models
//! and logs: `TOKEN=...` assignments, `--password x` / `--token=x` flags,
//! `Authorization:` headers, `user:pass@` in URLs, `mysql -p<pw>`,
//! `curl -u user:pw`, `sshpass -p`, and well-known token shapes (GitHub,
//! OpenAI/Anthropic-style `sk-`, Slack, AWS access keys, Google API keys,
//! GitLab, JWTs, PEM private keys).

use once_cell::sync::Lazy;
use regex::{Regex, RegexSet};

const MASK: &str = "***";

static QUICK: Lazy<Regex> = Lazy::new(|| {
    Regex::new(
        r"(?i)(token|secret|passw|pwd|api[_-]?key|apikey|access[_-]?key|private|credential|auth|bearer|session|cookie|://[^/\s@]*:[^/\s@]*@|ghp_|gho_|ghs_|ghu_|github_pat_|sk-|xox[abprs]-|AKIA|AIza|glpat-|eyJ|-----BEGIN|\s-p\S|\s-u\s|sshpass)",
    )
    .expect("quick regex")
});

struct Rx {
    re: Regex,
    rep: &'static str,
}

static RULES: Lazy<Vec<Rx>> = Lazy::new(|| {
    let r = |re: &str, rep: &'static str| Rx {
        re: Regex::new(re).expect("redact regex"),
        rep,
    };
    vec![
        // PEM private key blocks
        r(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)",
            "-----BEGIN PRIVATE KEY-----***",
        ),
        // URL credentials
        r(r"(://[^/\s:@]*):[^/\s@]+@", "${1}:***@"),
        // Authorization / auth headers
        r(
            r#"(?i)((?:proxy-)?authorization\s*:\s*(?:bearer|basic|token|digest|bot)?\s*)[^\s"']+"#,
            "${1}***",
        ),
        r(
            r#"(?i)((?:x-api-key|api-key|x-auth-token|x-access-token|private-token|cookie)\s*:\s*)[^\s"']+"#,
            "${1}***",
        ),
        // NAME=value where NAME looks secret (env assignments, key=value args)
        r(
            r#"(?i)\b([A-Z0-9_.-]*(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|PASS|PWD|API_?KEY|APIKEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH|SESSION_?ID|COOKIE)[A-Z0-9_]*\s*=\s*)("[^"]*"|'[^']*'|[^\s;&|'"]+)"#,
            "${1}***",
        ),
        // `password: x` (YAML/JSON-ish), not Authorization headers
        r(
            r#"(?i)(["']?\b[A-Z0-9_.-]*(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|APIKEY|ACCESS_?KEY|PRIVATE_?KEY|CLIENT_?SECRET)[A-Z0-9_]*["']?\s*:\s*)("[^"]*"|'[^']*'|[^\s;&|'",}]+)"#,
            "${1}***",
        ),
        // --password x, --token=x, ...
        r(
            r#"(?i)(--?(?:password|passwd|pass|token|api-key|apikey|api_key|secret|access-token|auth-token|client-secret|private-key|passphrase|key-password)(?:=|\s+))("[^"]*"|'[^']*'|[^\s;&|'"]+)"#,
            "${1}***",
        ),
        // mysql-style -pPASSWORD
        r(
            r"(?i)(\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlimport|mysqlcheck)\b[^\n;|&]*?\s-p)([^\s;&|]+)",
            "${1}***",
        ),
        // sshpass -p X
        r(r"(\bsshpass\s+-p\s*)(\S+)", "${1}***"),
        // curl -u user:pass / --user user:pass
        r(r"((?:\s-u|--user)\s+[^\s:]+):(\S+)", "${1}:***"),
        // token shapes
        r(r"\b(gh[pousr]_)[A-Za-z0-9]{16,}", "${1}***"),
        r(r"\bgithub_pat_[A-Za-z0-9_]{20,}", "github_pat_***"),
        r(
            r"\b(sk-(?:ant-|proj-|live-|test-)?)[A-Za-z0-9_-]{16,}",
            "${1}***",
        ),
        r(r"\b(xox[abprs]-)[A-Za-z0-9-]{8,}", "${1}***"),
        r(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b", "${1}***"),
        r(r"\bAIza[0-9A-Za-z_-]{30,}", "AIza***"),
        r(r"\bglpat-[A-Za-z0-9_-]{16,}", "glpat-***"),
        r(
            r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
            "eyJ***",
        ),
    ]
});

static SECRET_FLAG: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"(?i)^--?(password|passwd|pass|token|api-key|apikey|api_key|secret|access-token|auth-token|client-secret|private-key|passphrase|key-password)$")
        .expect("secret flag regex")
});

/// Redact an argv: each word, plus the word after a secret-bearing flag
/// (`--password X`), after `sshpass -p`, and the password part of
/// `-u user:pass`.
pub fn redact_argv_words(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let sshpass = argv.first().is_some_and(|a| a.ends_with("sshpass"));
    for (i, w) in argv.iter().enumerate() {
        let prev = if i > 0 { argv[i - 1].as_str() } else { "" };
        if i > 0 && (SECRET_FLAG.is_match(prev) || (sshpass && prev == "-p")) {
            out.push(MASK.to_string());
        } else if (prev == "-u" || prev == "--user") && w.contains(':') {
            let user = w.split(':').next().unwrap_or("");
            out.push(format!("{user}:{MASK}"));
        } else {
            out.push(redact_secrets(w));
        }
    }
    out
}

/// Does this variable name look like it holds a secret?
pub fn is_secret_name(name: &str) -> bool {
    static NAME: Lazy<Regex> = Lazy::new(|| {
        Regex::new(r"(?i)(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|PASS|PWD|API_?KEY|APIKEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH|SESSION|COOKIE|BEARER)")
            .expect("secret name regex")
    });
    name != "PWD" && name != "OLDPWD" && NAME.is_match(name)
}

/// Whether `text` may contain something [`redact_secrets`] would change.
pub fn may_contain_secret(text: &str) -> bool {
    QUICK.is_match(text)
}

/// All of [`RULES`] in one automaton: one pass says which rules can apply.
static SET: Lazy<RegexSet> =
    Lazy::new(|| RegexSet::new(RULES.iter().map(|r| r.re.as_str())).expect("redact regex set"));

/// Replace secrets in `text` with `***`. Cheap when nothing looks secret.
pub fn redact_secrets(text: &str) -> String {
    if !QUICK.is_match(text) {
        return text.to_string();
    }
    // QUICK is broad (`auth` in UNAUTHORIZED, ` -p`): only the rules that
    // match the text run their (slower, capturing) replacement
    let hits = SET.matches(text);
    if !hits.matched_any() {
        return text.to_string();
    }
    let mut out = text.to_string();
    for (k, rx) in RULES.iter().enumerate() {
        if hits.matched(k) && rx.re.is_match(&out) {
            out = rx.re.replace_all(&out, rx.rep).into_owned();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::redact_secrets as r;

    #[test]
    fn redacts() {
        assert_eq!(
            r("GITHUB_TOKEN=abc123 git push"),
            "GITHUB_TOKEN=*** git push"
        );
        assert_eq!(
            r("curl -H 'Authorization: Bearer abc.def' x"),
            "curl -H 'Authorization: Bearer ***' x"
        );
        assert_eq!(
            r("git clone https://u:pw@h/x"),
            "git clone https://u:***@h/x"
        );
        assert_eq!(r("mysql -uroot -phunter2 db"), "mysql -uroot -p*** db");
        assert_eq!(r("tool --password hunter2"), "tool --password ***");
        assert_eq!(r("tool --api-key=zzz"), "tool --api-key=***");
        assert!(!r("echo ghp_abcdefghijklmnopqrstuvwxyz0123").contains("abcdefghij"));
        assert!(!r("x sk-ant-abcdefghijklmnopqrstu").contains("abcdefghij"));
        assert_eq!(r("ls -la"), "ls -la");
        assert_eq!(
            r("curl -u admin:s3cret http://x"),
            "curl -u admin:*** http://x"
        );
    }
}
