//! Print the engine's verdict for each argument (or each line of stdin):
//! a quick way to see what a command is judged as while writing rules.
//! `cargo run -p hermes-approval --example check -- 'git push --for'`

use std::io::BufRead;

fn main() {
    let engine = hermes_approval::Engine::new();
    let mut cmds: Vec<String> = std::env::args().skip(1).collect();
    if cmds.is_empty() {
        cmds = std::io::stdin()
            .lock()
            .lines()
            .map_while(Result::ok)
            .collect();
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
