//! `hermes-tools check`: the approval engine's verdict on shell commands.

use std::io::BufRead;

use hermes_approval::{Engine, Verdict};

use crate::out::{GREEN, RED, YELLOW, paint};

fn rank(v: Verdict) -> u8 {
    match v {
        Verdict::Allow => 0,
        Verdict::Ask => 3,
        Verdict::Block => 4,
    }
}

fn word(v: Verdict) -> String {
    match v {
        Verdict::Allow => paint("allow", GREEN),
        Verdict::Ask => paint("ask", YELLOW),
        Verdict::Block => paint("block", RED),
    }
}

pub fn run(json: bool, commands: Vec<String>) -> u8 {
    let commands = if commands.is_empty() {
        std::io::stdin()
            .lock()
            .lines()
            .map_while(Result::ok)
            .filter(|l| !l.trim().is_empty())
            .collect()
    } else {
        commands
    };
    if commands.is_empty() {
        return crate::out::fail(
            "check: no command given (pass commands as arguments or one per line on standard input)",
        );
    }
    // The engine a runtime uses by default (posture deny-list, scripts
    // read from the current directory), so `check` says what `call` does.
    let cwd = std::env::current_dir()
        .ok()
        .map(|d| d.display().to_string());
    let engine = match Engine::from_config(
        &hermes_approval::PolicyConfig::default().runtime_engine_config(cwd),
    ) {
        Ok(e) => e,
        Err(e) => return crate::out::fail(format!("check: {e}")),
    };
    let mut worst = 0u8;
    for command in &commands {
        let result = engine.check(command);
        worst = worst.max(rank(result.verdict));
        if json {
            match serde_json::to_string(&result) {
                Ok(s) => crate::out::say(s),
                Err(e) => return crate::out::fail(format!("check: {e}")),
            }
            continue;
        }
        crate::out::say(format!("{}  {}", word(result.verdict), command));
        for r in &result.reasons {
            let pack = if r.pack == "builtin" {
                String::new()
            } else {
                format!(" [pack {}]", r.pack)
            };
            crate::out::say(format!(
                "  {} {}{}: {} (in: {})",
                word(r.tier),
                r.rule,
                pack,
                r.description,
                r.command
            ));
        }
    }
    worst
}
