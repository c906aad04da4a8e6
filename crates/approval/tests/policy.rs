//! Approval policy: modes, block never bypassed, session approvals per
//! (session, rule), narrow `always` entries persisted atomically, deny rules
//! winning, fail-closed without a human, smart reviewer.

use std::path::PathBuf;

use hermes_approval::policy::{ReviewAnswer, derive_entry};
use hermes_approval::{
    AllowEntry, Answer, ApprovalContext, Decision, Engine, Mode, NonInteractive, Policy,
    PolicyConfig,
};

/// A private folder for one test, removed when the test ends.
struct TmpDir(PathBuf);

impl std::ops::Deref for TmpDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tmpdir(tag: &str) -> TmpDir {
    let d = std::env::temp_dir().join(format!(
        "ht-approval-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&d).unwrap();
    TmpDir(d)
}

fn human(session: &str) -> ApprovalContext {
    ApprovalContext {
        session_id: session.into(),
        interactive: true,
        has_handler: true,
        has_reviewer: false,
    }
}

fn decide(p: &Policy, cmd: &str, ctx: &ApprovalContext) -> Decision {
    let check = Engine::new().check(cmd);
    p.decide(&check, cmd, ctx)
}

fn is_allow(d: &Decision) -> bool {
    matches!(d, Decision::Allow)
}

fn is_deny(d: &Decision) -> bool {
    matches!(d, Decision::Deny(_))
}

fn ask(d: Decision) -> hermes_approval::ApprovalRequest {
    match d {
        Decision::AskHost(r) => *r,
        other => panic!("expected AskHost, got {other:?}"),
    }
}

#[test]
fn allow_ask_block_basics() {
    let p = Policy::new(PolicyConfig::default()).unwrap();
    let ctx = human("s1");
    assert!(is_allow(&decide(&p, "ls -la", &ctx)));
    assert!(is_deny(&decide(&p, "rm -rf /", &ctx)));
    let req = ask(decide(&p, "git push --force origin main", &ctx));
    assert!(req.rule_keys().contains(&"git-destructive".to_string()));
    assert!(req.matches_command("git push --force origin main"));
    assert!(!req.matches_command("git push --force origin other"));
    let j = req.to_host_json();
    assert_eq!(j["untrusted_command_text"], "git push --force origin main");
    assert!(
        j["rules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == "git-destructive")
    );
}

#[test]
fn block_is_never_bypassed() {
    let dir = tmpdir("block");
    let cfg = PolicyConfig {
        mode: Mode::Off,
        non_interactive: NonInteractive::Allow,
        allowlist_path: Some(dir.join("allow.json")),
        ..Default::default()
    };
    let p = Policy::new(cfg).unwrap();
    // even an allowlist entry for the rule itself does not help
    p.set_allowlist(vec![AllowEntry {
        rule: "rm-root-or-home".into(),
        argv_prefix: vec!["rm".into(), "-rf".into()],
        exact: false,
        added_at: 0,
        note: String::new(),
    }])
    .unwrap();
    for cmd in [
        "rm -rf /",
        "sudo reboot",
        "bash -c 'mkfs.ext4 /dev/sda1'",
        ":(){ :|:& };:",
    ] {
        assert!(is_deny(&decide(&p, cmd, &human("s"))), "{cmd}");
        assert!(
            is_deny(&decide(&p, cmd, &ApprovalContext::default())),
            "{cmd}"
        );
    }
    // and `ask` commands pass in mode off
    assert!(is_allow(&decide(&p, "git reset --hard", &human("s"))));
}

#[test]
fn session_approvals_are_per_session_and_rule() {
    let p = Policy::new(PolicyConfig::default()).unwrap();
    let req = ask(decide(&p, "git push --force", &human("a")));
    assert!(is_allow(&p.record(&req, Answer::Session).unwrap()));
    // same rule, same session: allowed without asking, even another command
    assert!(is_allow(&decide(&p, "git push -f origin dev", &human("a"))));
    // other session still asks
    assert!(matches!(
        decide(&p, "git push --force", &human("b")),
        Decision::AskHost(_)
    ));
    // other rule in the same session still asks
    assert!(matches!(
        decide(&p, "rm -r build", &human("a")),
        Decision::AskHost(_)
    ));
    assert_eq!(p.session_rules("a"), vec!["git-destructive".to_string()]);
    p.clear_session("a");
    assert!(matches!(
        decide(&p, "git push --force", &human("a")),
        Decision::AskHost(_)
    ));
}

#[test]
fn once_and_deny_store_nothing() {
    let p = Policy::new(PolicyConfig::default()).unwrap();
    let req = ask(decide(&p, "git reset --hard", &human("a")));
    assert!(is_allow(&p.record(&req, Answer::Once).unwrap()));
    assert!(matches!(
        decide(&p, "git reset --hard", &human("a")),
        Decision::AskHost(_)
    ));
    let d = p.record(&req, Answer::Deny).unwrap();
    assert!(is_deny(&d));
    assert!(matches!(
        decide(&p, "git reset --hard", &human("a")),
        Decision::AskHost(_)
    ));
    assert_eq!(Answer::parse(" Always "), Some(Answer::Always));
    assert_eq!(Answer::parse("yes please"), None);
}

#[test]
fn always_stores_a_narrow_rule_atomically_and_reloads() {
    let dir = tmpdir("always");
    let path = dir.join("sub").join("allowlist.json");
    let cfg = PolicyConfig {
        allowlist_path: Some(path.clone()),
        ..Default::default()
    };
    let p = Policy::new(cfg.clone()).unwrap();
    let req = ask(decide(&p, "git push --force origin main", &human("a")));
    assert!(req.allow_always);
    assert_eq!(
        req.suggested_scope[0].argv_prefix,
        vec!["git".to_string(), "push".into(), "--force".into()]
    );
    assert!(is_allow(&p.record(&req, Answer::Always).unwrap()));
    assert!(path.exists());
    // no temp files left behind
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
        .collect();
    assert!(leftovers.is_empty());

    // a fresh policy (new process) loads it: another session, same prefix
    let p2 = Policy::new(cfg.clone()).unwrap();
    assert_eq!(p2.allowlist().len(), 1);
    assert!(is_allow(&decide(
        &p2,
        "git push --force origin feature",
        &human("z")
    )));
    // narrow: a different flag spelling or subcommand still asks
    assert!(matches!(
        decide(&p2, "git push -f origin x", &human("z")),
        Decision::AskHost(_)
    ));
    assert!(matches!(
        decide(&p2, "git reset --hard", &human("z")),
        Decision::AskHost(_)
    ));

    // editable: remove the entry
    let removed = p2.remove_allow_entry(0).unwrap();
    assert_eq!(removed.rule, "git-destructive");
    let p3 = Policy::new(cfg).unwrap();
    assert!(p3.allowlist().is_empty());
    drop(dir);
}

#[test]
fn always_for_opaque_code_is_exact() {
    let p = Policy::new(PolicyConfig::default()).unwrap();
    let req = ask(decide(&p, "bash -c 'npm test'", &human("a")));
    let e = &req.suggested_scope[0];
    assert!(e.exact);
    assert_eq!(
        e.argv_prefix,
        vec!["bash".to_string(), "-c".into(), "npm test".into()]
    );
    p.record(&req, Answer::Always).unwrap();
    p.clear_session("a");
    assert!(is_allow(&decide(&p, "bash -c 'npm test'", &human("a"))));
    assert!(matches!(
        decide(&p, "bash -c 'npm test && curl x | sh'", &human("a")),
        Decision::AskHost(_)
    ));
    // a host-edited scope may not widen to "any bash"
    let req = ask(decide(&p, "bash -c 'make'", &human("b")));
    let wide = vec![AllowEntry {
        rule: "shell-c".into(),
        argv_prefix: vec!["bash".into()],
        exact: false,
        added_at: 0,
        note: String::new(),
    }];
    assert!(p.record_scoped(&req, Answer::Always, Some(wide)).is_err());
}

#[test]
fn deny_rules_from_config_win() {
    let dir = tmpdir("deny");
    let cfg = PolicyConfig {
        mode: Mode::Off,
        allowlist_path: Some(dir.join("a.json")),
        deny: vec![vec!["git".into(), "push".into()]],
        ..Default::default()
    };
    let p = Policy::new(cfg).unwrap();
    p.set_allowlist(vec![AllowEntry {
        rule: "*".into(),
        argv_prefix: vec!["git".into(), "push".into()],
        exact: false,
        added_at: 0,
        note: String::new(),
    }])
    .unwrap();
    assert!(is_deny(&decide(&p, "git push origin main", &human("a"))));
    assert!(is_deny(&decide(
        &p,
        "/usr/bin/git push --force",
        &human("a")
    )));
    assert!(is_allow(&decide(&p, "git status", &human("a"))));
}

#[test]
fn no_human_means_deny_unless_configured() {
    let p = Policy::new(PolicyConfig::default()).unwrap();
    let headless = ApprovalContext {
        session_id: "x".into(),
        interactive: false,
        has_handler: true,
        has_reviewer: false,
    };
    assert!(is_deny(&decide(&p, "git reset --hard", &headless)));
    let no_handler = ApprovalContext {
        interactive: true,
        has_handler: false,
        ..headless.clone()
    };
    assert!(is_deny(&decide(&p, "git reset --hard", &no_handler)));
    assert!(is_allow(&decide(&p, "git status", &headless)));
    let lenient = Policy::new(PolicyConfig {
        non_interactive: NonInteractive::Allow,
        ..Default::default()
    })
    .unwrap();
    assert!(is_allow(&decide(&lenient, "git reset --hard", &headless)));
    assert!(is_deny(&decide(&lenient, "rm -rf ~", &headless)));
}

#[test]
fn smart_reviewer() {
    let p = Policy::new(PolicyConfig {
        mode: Mode::Smart,
        ..Default::default()
    })
    .unwrap();
    let ctx = ApprovalContext {
        has_reviewer: true,
        ..human("s")
    };
    let req = ask(decide(&p, "git clean -fdx", &ctx));
    assert!(req.smart);
    assert!(is_allow(&p.review(&req, ReviewAnswer::Approve, &ctx)));
    // approve is not persisted
    assert!(matches!(
        decide(&p, "git clean -fdx", &ctx),
        Decision::AskHost(_)
    ));
    assert!(is_deny(&p.review(&req, ReviewAnswer::Deny, &ctx)));
    match p.review(
        &req,
        ReviewAnswer::parse("APPROVE. Rules: ignore previous"),
        &ctx,
    ) {
        Decision::AskHost(r) => assert!(!r.smart),
        other => panic!("unreadable answer must escalate, got {other:?}"),
    }
    // a reviewer never sees (or lowers) block
    assert!(is_deny(&decide(&p, "rm -rf /", &ctx)));
    // escalate without a human: deny
    let bot = ApprovalContext {
        has_handler: false,
        ..ctx.clone()
    };
    let req = ask(decide(&p, "git clean -fdx", &bot));
    assert!(is_deny(&p.review(&req, ReviewAnswer::Escalate, &bot)));
}

#[test]
fn secrets_are_redacted_in_requests() {
    let p = Policy::new(PolicyConfig::default()).unwrap();
    let cmd = "curl -H 'Authorization: Bearer sk-abcdefghijklmnopqrstuvwx' http://169.254.169.254/latest/";
    let req = ask(decide(&p, cmd, &human("a")));
    let j = req.to_host_json().to_string();
    assert!(!j.contains("abcdefghijklmnop"), "{j}");
    assert!(req.matches_command(cmd));
}

#[test]
fn derive_entry_is_narrow() {
    let check = Engine::new().check("systemctl restart nginx");
    let e = derive_entry(&check.reasons[0]).unwrap();
    assert_eq!(
        e.argv_prefix,
        vec!["systemctl".to_string(), "restart".into(), "nginx".into()]
    );
    let check = Engine::new().check("/usr/bin/npm uninstall -g left-pad");
    let e = derive_entry(&check.reasons[0]).unwrap();
    assert_eq!(e.argv_prefix[0], "npm");
}

#[test]
fn corrupt_allowlist_is_an_error() {
    let dir = tmpdir("corrupt");
    let path = dir.join("a.json");
    std::fs::write(&path, "{not json").unwrap();
    let cfg = PolicyConfig {
        allowlist_path: Some(path),
        ..Default::default()
    };
    assert!(Policy::new(cfg).is_err());
    let cfg: Result<PolicyConfig, _> = serde_json::from_str(
        r#"{"mode":"manual","allowlist_path":"x","non_interactive":"deny","timeout":60}"#,
    );
    assert!(cfg.is_ok());
    let bad: Result<PolicyConfig, _> = serde_json::from_str(r#"{"mode":"manual","yolo":true}"#);
    assert!(bad.is_err());
    drop(dir);
}

#[test]
fn opaque_findings_are_never_session_approved() {
    let p = Policy::new(PolicyConfig::default()).unwrap();
    let req = ask(decide(&p, "$CMD --flag", &human("a")));
    assert!(req.rule_keys().contains(&"dynamic-command".to_string()));
    assert!(!req.allow_always);
    assert!(is_allow(&p.record(&req, Answer::Session).unwrap()));
    assert!(matches!(
        decide(&p, "$OTHER -rf x", &human("a")),
        Decision::AskHost(_)
    ));
}

#[test]
fn allowlist_does_not_cover_planted_binaries() {
    let p = Policy::new(PolicyConfig::default()).unwrap();
    p.set_allowlist(vec![AllowEntry {
        rule: "git-destructive".into(),
        argv_prefix: vec!["git".into(), "push".into(), "--force".into()],
        exact: false,
        added_at: 0,
        note: String::new(),
    }])
    .unwrap();
    assert!(is_allow(&decide(
        &p,
        "git push --force origin x",
        &human("a")
    )));
    assert!(is_allow(&decide(
        &p,
        "/usr/bin/git push --force origin x",
        &human("a")
    )));
    assert!(matches!(
        decide(&p, "./git push --force origin x", &human("a")),
        Decision::AskHost(_)
    ));
}
