//! What the CLI prints: colour for a terminal, plain text for pipes and
//! files, and errors on one line.

use std::io::IsTerminal;

/// Wrap `text` in an ANSI colour when standard output is a terminal.
pub fn paint(text: &str, colour: u8) -> String {
    if std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
        format!("\x1b[{colour}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

pub const GREEN: u8 = 32;
pub const YELLOW: u8 = 33;
pub const RED: u8 = 31;

/// Print an error on one line, with what to do about it, and return 1.
pub fn fail(message: impl std::fmt::Display) -> u8 {
    let one_line = message.to_string().replace(['\n', '\r'], " ");
    eprintln!("hermes-tools: {one_line}");
    1
}

/// Print a warning on one line on standard error (the work goes on).
pub fn warn(message: impl std::fmt::Display) {
    let one_line = message.to_string().replace(['\n', '\r'], " ");
    eprintln!("hermes-tools: warning: {one_line}");
}

/// Print a usage error (a bad argument, not a failure of the work) on one
/// line and return 2, the exit status of usage errors.
pub fn usage(message: impl std::fmt::Display) -> u8 {
    let one_line = message.to_string().replace(['\n', '\r'], " ");
    eprintln!("hermes-tools: {one_line}");
    2
}

/// Print a line on standard output. A closed pipe (`| head -1`) is not an
/// error: the rest is dropped and the command still exits with its own
/// status (a verdict, a failure), instead of panicking as `println!` does.
pub fn say(text: impl std::fmt::Display) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}
