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
        // PEM private key blocks: a whole block, or (cut short) the BEGIN
        // line and the base64 and header lines after it; what follows the
        // key is kept.
        r(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[A-Za-z0-9+/=\s:,.-]*?-----END [A-Z ]*PRIVATE KEY-----",
            "-----BEGIN PRIVATE KEY-----***",
        ),
        r(
            r"(?m)-----BEGIN [A-Z ]*PRIVATE KEY-----(?:\r?\n(?:[A-Za-z0-9+/=]+|[A-Za-z-]+: [^\r\n]*)\r?$)*",
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
        Regex::new(r"(?i)(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|PASS|PWD|API_?KEY|APIKEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH|SESSION|COOKIE|BEARER|DSN|WEBHOOK|DATABASE_URL|_URI$|CONNECTION_?STRING|(^|_)KEY$|SIGNING|CERT_?KEY)")
            .expect("secret name regex")
    });
    name != "PWD" && name != "OLDPWD" && NAME.is_match(name)
}

/// Whether `text` may contain something [`redact_secrets`] would change.
pub fn may_contain_secret(text: &str) -> bool {
    QUICK.is_match(text)
        || HOST_SECRET_VALUES
            .as_ref()
            .is_some_and(|re| re.is_match(text))
}

/// All of [`RULES`] in one automaton: one pass says which rules can apply.
static SET: Lazy<RegexSet> =
    Lazy::new(|| RegexSet::new(RULES.iter().map(|r| r.re.as_str())).expect("redact regex set"));

/// The values of this process's secret-looking environment variables
/// ([`is_secret_name`], at least 8 characters), read once at first use, as
/// one literal search: a secret printed by a command (`env`, a config
/// file, an error message) is masked by its value whatever the shape.
static HOST_SECRET_VALUES: Lazy<Option<Regex>> = Lazy::new(|| {
    let mut values: Vec<String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, v)| {
            let url_with_credentials = (k.ends_with("_URL") || k.ends_with("_URI"))
                && v.split_once("://").is_some_and(|(_, rest)| {
                    rest.split('/')
                        .next()
                        .is_some_and(|auth| auth.contains('@'))
                });
            (is_secret_name(k) || url_with_credentials) && v.chars().count() >= 8
        })
        .map(|(_, v)| v)
        .collect();
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    values.dedup();
    if values.is_empty() {
        return None;
    }
    let alternation: Vec<String> = values.iter().map(|v| regex::escape(v)).collect();
    Regex::new(&alternation.join("|")).ok()
});

/// Replace secrets in `text` with `***`: the host's own secret values, then
/// the known shapes. Cheap when nothing looks secret.
pub fn redact_secrets(text: &str) -> String {
    let by_value;
    let text = match HOST_SECRET_VALUES.as_ref() {
        Some(re) if re.is_match(text) => {
            by_value = re.replace_all(text, MASK).into_owned();
            by_value.as_str()
        }
        _ => text,
    };
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
    fn a_private_key_hides_only_itself() {
        let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQyNTUxOQAAACBx\n";
        let out = r(&format!(
            "{key}-----END OPENSSH PRIVATE KEY-----\nafter the key\n"
        ));
        assert!(out.contains("after the key"), "{out}");
        assert!(!out.contains("b3BlbnNz"), "{out}");
        // Cut short (no END line): the key's lines go, the output after stays.
        let out = r(&format!("before\n{key}build finished: 3 warnings\n"));
        assert!(
            out.contains("before") && out.contains("build finished: 3 warnings"),
            "{out}"
        );
        assert!(!out.contains("QyNTUxOQ"), "{out}");
    }

    #[test]
    fn secret_names_the_old_scrub_missed() {
        for k in [
            "PGPASSWORD",
            "MYSQL_PWD",
            "DB_PASS",
            "DATABASE_URL",
            "OPENAI_KEY",
            "SENTRY_DSN",
            "SLACK_WEBHOOK_URL",
            "MONGO_URI",
            "AZURE_CONNECTION_STRING",
        ] {
            assert!(super::is_secret_name(k), "{k}");
        }
        for k in ["PATH", "HOME", "KEYBOARD", "PWD", "LANG"] {
            assert!(!super::is_secret_name(k), "{k}");
        }
    }

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
