//! What every matcher shares: the context a rule judges a program in
//! ([`RuleCtx`]), the kind of a file write ([`WriteKind`]) and, re-exported
//! from [`crate::argv`], the plain argv helpers (`operands`, `tail`).
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
    /// Files are written under this directory (`tar -C DIR`, `cp -r x DIR`,
    /// `git clone . DIR`, `wget -P DIR`): it writes persistence files when
    /// the directory is, or holds, a persistence path.
    IntoDir,
}

pub(crate) use crate::argv::{operands, tail};
