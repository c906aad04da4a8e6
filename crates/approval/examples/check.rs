//! Print the engine's verdict for each argument (or each line of stdin):
//! a quick way to see what a command is judged as while writing rules.
//! `cargo run -p hermes-approval --example check -- 'git push --for'`
//! (`CHECK_FILE=path`: the whole file is one command).

use std::io::BufRead;

fn main() {
    let mut engine = hermes_approval::Engine::new();
    // `CHECK_POSTURE=1`: the deny-list posture with a workspace (as the
    // GTFOBins / LOLBAS coverage test judges); `CHECK_SHELL=cmd|powershell`
    if std::env::var_os("CHECK_POSTURE").is_some() {
        engine = engine.with_posture(
            hermes_approval::Posture::DenyList,
            Some("/work/project".into()),
            false,
        );
    }
    // `CHECK_WS=DIR` (`CHECK_KS=1`: known-safe): the runtime's engine for
    // that workspace, reading scripts
    if let Some(ws) = std::env::var("CHECK_WS").ok().filter(|s| !s.is_empty()) {
        let p = if std::env::var_os("CHECK_KS").is_some() {
            hermes_approval::Posture::KnownSafe
        } else {
            hermes_approval::Posture::DenyList
        };
        engine = engine
            .with_posture(p, Some(ws), false)
            .reading_scripts(true);
    }
    if let Some(sh) = std::env::var("CHECK_SHELL").ok().filter(|s| !s.is_empty()) {
        let cfg: hermes_approval::EngineConfig = serde_json::from_str(&format!(
            "{{\"shell\": \"{sh}\", \"posture\": \"deny-list\", \"workspace\": \"/work/project\"}}"
        ))
        .expect("shell config");
        engine = hermes_approval::Engine::from_config(&cfg).expect("engine");
    }
    let mut cmds: Vec<String> = std::env::args().skip(1).collect();
    if let Some(f) = std::env::var_os("CHECK_FILE") {
        // `CHECK_FILE=path`: the whole file is one command (newlines kept)
        cmds = vec![std::fs::read_to_string(f).unwrap_or_default()];
    }
    if cmds.is_empty() {
        cmds = std::io::stdin()
            .lock()
            .lines()
            .map_while(Result::ok)
            .collect();
    }
    if std::env::var_os("CHECK_TIME").is_some() {
        // `CHECK_TIME=1`: the slowest commands, mean of 200 checks each
        let mut t: Vec<(f64, &String)> = cmds
            .iter()
            .map(|c| {
                let s = std::time::Instant::now();
                for _ in 0..200 {
                    std::hint::black_box(engine.check(std::hint::black_box(c)));
                }
                (s.elapsed().as_secs_f64() * 1e6 / 200.0, c)
            })
            .collect();
        t.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (us, c) in t.iter().take(15) {
            println!("{us:8.1} us  {}", c.chars().take(100).collect::<String>());
        }
        return;
    }
    for c in cmds {
        let r = engine.check(&c);
        println!("{:?}\t{c}", r.verdict);
        for x in &r.reasons {
            println!(
                "    {} [{:?}] {} :: {}",
                x.rule, x.tier, x.description, x.command
            );
        }
        println!("    commands: {:?}", r.commands);
    }
}
