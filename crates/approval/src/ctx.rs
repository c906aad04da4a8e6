//! What every matcher shares: the context a rule judges a program in
//! ([`RuleCtx`]), the kind of a file write ([`WriteKind`]) and the plain
//! argv helpers (`operands`, `tail`).
//!
//! Why a module of its own: the rule table ([`crate::rules`]), the posture
//! matchers ([`crate::effects`], [`crate::posture`]), the families, the
//! catalog and the sandbox judgement all need these items. Kept here, below
//! all of them, each imports them downwards and none has to import another
//! for them, so the modules form layers instead of an import circle.

use crate::analyze::Analysis;
use crate::types::Posture;

/// What matchers can look at besides the program itself.
pub struct RuleCtx<'a> {
    pub analysis: &'a Analysis,
    /// `write_targets` of every exec, computed once.
    pub targets: Vec<Vec<(String, WriteKind)>>,
    /// The whole input is one simple command (no lists, pipes, substitutions).
    pub single: bool,
    /// The posture of [`crate::CheckOptions`] (`None`: compatibility).
    pub posture: Option<Posture>,
    /// The project directory the command runs in, when known.
    pub workspace: Option<&'a str>,
    /// A Python virtual environment is active.
    pub virtualenv: bool,
    /// The command text being judged.
    pub text: &'a str,
}

/// How a program changes a file it names.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WriteKind {
    Overwrite,
    Append,
    InPlace,
    Delete,
    Create,
}

/// Operands of a command: words after options (GNU permutation: options may
/// follow operands; `--` ends options). `vals` are options taking a value.
pub(crate) fn operands<'a>(argv: &'a [String], vals: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 1;
    let mut opts_done = false;
    while i < argv.len() {
        let a = argv[i].as_str();
        if opts_done || !a.starts_with('-') || a == "-" {
            out.push(a);
            i += 1;
            continue;
        }
        if a == "--" {
            opts_done = true;
            i += 1;
            continue;
        }
        if vals.contains(&a) {
            i += 2;
            continue;
        }
        i += 1;
    }
    out
}

/// The arguments after the program name (empty for a bare redirection).
pub(crate) fn tail(a: &[String]) -> &[String] {
    a.get(1..).unwrap_or(&[])
}
