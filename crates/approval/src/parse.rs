//! A hand-written, error-tolerant parser for the POSIX shell / bash subset that
//! agents actually emit.
//!
//! It produces a small AST ([`List`] → [`Pipeline`] → [`Cmd`]) whose words keep
//! their quoting structure ([`Part`]), so the analyser can do its own quote
//! removal and expansion. It never panics, never recurses deeper than
//! [`MAX_DEPTH`], and reports anything it did not understand through
//! [`Parsed::error`] (the engine turns that into at least `ask`).
//!
//! Supported: words with `'..'`, `".."`, `$'..'`, `$".."`, backslash escapes and
//! line continuations; `$name`, `${...}`, `$(...)`, backticks, `$((...))`,
//! `<(...)`/`>(...)`; redirections (`< > >> >| <> <<< << <<- &> &>> >& <&`,
//! with fds and heredoc bodies); pipelines (`|`, `|&`, `!`); lists (`&&`, `||`,
//! `;`, `&`, newline); `( )`, `{ }`, `if`/`while`/`until`/`for`/`select`/`case`,
//! function definitions, `[[ ]]`, `(( ))`, assignments (including arrays) and
//! comments.

/// Maximum nesting depth (substitutions, subshells, groups, payload re-parses).
pub const MAX_DEPTH: usize = 24;
/// Maximum number of AST nodes one parse may create.
pub const MAX_NODES: usize = 20_000;

#[derive(Clone, Debug, Default)]
pub struct List {
    pub items: Vec<(Pipeline, Sep)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sep {
    Seq,
    And,
    Or,
    Bg,
}

#[derive(Clone, Debug, Default)]
pub struct Pipeline {
    pub cmds: Vec<Cmd>,
}

#[derive(Clone, Debug)]
pub enum Cmd {
    Simple(Simple),
    /// `( list )`
    Subshell(List, Vec<Redir>),
    /// `{ list; }`, and the bodies of `if`/`while`/`until`/`case`.
    Group(List, Vec<Redir>),
    /// `for NAME in WORDS; do BODY; done` (words `None` means `"$@"` / C-style).
    For {
        var: String,
        words: Option<Vec<Word>>,
        body: List,
    },
    FuncDef {
        name: String,
        body: Box<Cmd>,
    },
}

#[derive(Clone, Debug, Default)]
pub struct Simple {
    pub assigns: Vec<(String, Word)>,
    pub words: Vec<Word>,
    pub redirs: Vec<Redir>,
}

#[derive(Clone, Debug, Default)]
pub struct Word {
    pub parts: Vec<Part>,
    /// The source text of the word.
    pub raw: String,
}

#[derive(Clone, Debug)]
pub enum Part {
    /// Unquoted literal text (glob characters keep their meaning).
    Lit(String),
    /// Quoted or escaped literal text.
    Quoted(String),
    /// The content of a double-quoted string.
    Dq(Vec<Part>),
    /// `$name` or `${...}`.
    Param(Box<Param>),
    /// `$(...)` or backticks.
    CmdSub(Box<List>),
    /// `<(...)` or `>(...)`.
    ProcSub(Box<List>),
    /// `$((...))`
    Arith(String),
    /// A leading unquoted `~` or `~user`.
    Tilde(String),
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    /// `${#name}`
    pub length: bool,
    /// `${!name}`
    pub indirect: bool,
    /// The operator after the name (`:-`, `%%`, `/`, `:`, ...), empty for none.
    pub op: String,
    /// The operand(s) after the operator.
    pub arg: Option<Word>,
    /// For `/pat/rep`: the replacement.
    pub arg2: Option<Word>,
    /// `${name[SUB]}`: the subscript text (`@`, `*`, `0`, ...).
    pub subscript: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedirOp {
    /// `<`
    In,
    /// `>` / `>|` / `&>`
    Out,
    /// `>>` / `&>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `>&` / `<&` (duplication or, with a file name, a write)
    Dup,
    /// `<<` / `<<-`
    Heredoc,
    /// `<<<`
    Herestring,
}

#[derive(Clone, Debug)]
pub struct Redir {
    pub fd: Option<u32>,
    pub op: RedirOp,
    pub target: Word,
    /// Index into [`Parsed::heredocs`] for `<<`.
    pub heredoc: Option<usize>,
}

#[derive(Clone, Debug, Default)]
pub struct Heredoc {
    pub body: String,
    /// Unquoted delimiter: the body undergoes expansion (`$(...)` runs).
    pub expand: bool,
    /// Body parsed as expandable text (only when `expand`).
    pub parts: Vec<Part>,
}

#[derive(Debug, Default)]
pub struct Parsed {
    pub list: List,
    pub heredocs: Vec<Heredoc>,
    pub error: Option<String>,
}

struct PendingHd {
    delim: String,
    strip_tabs: bool,
    idx: usize,
}

/// Parse `src` (already normalised) into a [`Parsed`] tree.
pub fn parse(src: &str, depth: usize) -> Parsed {
    let chars: Vec<char> = src.chars().collect();
    let mut p = Parser {
        s: &chars,
        i: 0,
        depth,
        pending: Vec::new(),
        heredocs: Vec::new(),
        error: None,
        nodes: 0,
    };
    let list = p.parse_list(&[], false);
    if p.i < p.s.len() {
        // stray `)` or keyword: note it and parse the remainder too.
        p.err("unexpected token");
        let mut items = list.items;
        while p.i < p.s.len() && p.nodes < MAX_NODES {
            let before = p.i;
            p.i += 1;
            let more = p.parse_list(&[], false);
            items.extend(more.items);
            if p.i <= before {
                break;
            }
        }
        return Parsed {
            list: List { items },
            heredocs: p.heredocs,
            error: p.error,
        };
    }
    if !p.pending.is_empty() {
        p.err("unterminated heredoc");
    }
    Parsed {
        list,
        heredocs: p.heredocs,
        error: p.error,
    }
}

struct Parser<'a> {
    s: &'a [char],
    i: usize,
    depth: usize,
    pending: Vec<PendingHd>,
    heredocs: Vec<Heredoc>,
    error: Option<String>,
    nodes: usize,
}

fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl<'a> Parser<'a> {
    fn err(&mut self, m: &str) {
        if self.error.is_none() {
            self.error = Some(m.to_string());
        }
    }

    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.s.get(self.i + k).copied()
    }

    fn starts_with(&self, t: &str) -> bool {
        t.chars()
            .enumerate()
            .all(|(k, c)| self.s.get(self.i + k) == Some(&c))
    }

    fn bump_node(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            self.err("command too complex");
            self.i = self.s.len();
            return false;
        }
        true
    }

    /// Skip blanks (not newlines), line continuations and comments.
    fn skip_blanks(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' => self.i += 1,
                '\\' if self.peek_at(1) == Some('\n') => self.i += 2,
                '\\' if self.peek_at(1) == Some('\r') && self.peek_at(2) == Some('\n') => {
                    self.i += 3
                }
                '#' => {
                    while let Some(c) = self.peek() {
                        if c == '\n' {
                            break;
                        }
                        self.i += 1;
                    }
                }
                _ => break,
            }
        }
    }

    /// Consume a newline and read any pending heredoc bodies.
    fn newline(&mut self) {
        self.i += 1;
        if !self.pending.is_empty() {
            let pend = std::mem::take(&mut self.pending);
            for hd in pend {
                self.read_heredoc(hd);
            }
        }
    }

    fn read_heredoc(&mut self, hd: PendingHd) {
        let start = self.i;
        let mut body_end = self.s.len();
        let mut after = self.s.len();
        let mut ls = self.i;
        while ls < self.s.len() {
            let mut le = ls;
            while le < self.s.len() && self.s[le] != '\n' {
                le += 1;
            }
            let mut a = ls;
            if hd.strip_tabs {
                while a < le && self.s[a] == '\t' {
                    a += 1;
                }
            }
            let mut b = le;
            if b > a && self.s[b - 1] == '\r' {
                b -= 1;
            }
            let line: String = self.s[a..b].iter().collect();
            if line == hd.delim {
                body_end = ls;
                after = (le + 1).min(self.s.len());
                break;
            }
            ls = le + 1;
        }
        if body_end == self.s.len() && after == self.s.len() && ls >= self.s.len() {
            // delimiter never found: bash takes the rest as the body.
            body_end = self.s.len();
        }
        let body: String = self.s[start..body_end].iter().collect();
        let expand = self.heredocs[hd.idx].expand;
        if expand && (body.contains('$') || body.contains('`')) {
            let save = self.i;
            self.i = start;
            let parts = self.parse_parts(body_end, Mode::Heredoc);
            self.i = save;
            self.heredocs[hd.idx].parts = parts;
        }
        self.heredocs[hd.idx].body = body;
        self.i = after;
    }

    fn at_keyword(&self, kws: &[&str]) -> Option<&'static str> {
        // read the bare word at the cursor (keywords are short)
        let first = self.peek()?;
        if !(first.is_ascii_lowercase() || matches!(first, '{' | '}' | ';' | '[' | '!')) {
            return None;
        }
        let mut buf = [0u8; 8];
        let mut n = 0;
        let mut k = self.i;
        while k < self.s.len() && n < 8 {
            let c = self.s[k];
            if !c.is_ascii() {
                return None;
            }
            if n > 0 && is_meta(c) && !(buf[0] == b';' && matches!(c, ';' | '&')) {
                break;
            }
            if n == 0 && c == ';' {
                buf[n] = b';';
                n += 1;
                k += 1;
                continue;
            }
            if buf[0] == b';' && !matches!(c, ';' | '&') {
                break;
            }
            buf[n] = c as u8;
            n += 1;
            k += 1;
        }
        let word = std::str::from_utf8(&buf[..n]).ok()?;
        const ALL: &[&str] = &[
            "then", "elif", "else", "fi", "do", "done", "esac", "}", ";;", ";&", ";;&", "if",
            "while", "until", "for", "select", "case", "function", "{", "[[", "!", "in", "time",
        ];
        let kw = ALL.iter().find(|k| **k == word)?;
        if kws.contains(kw) { Some(kw) } else { None }
    }

    fn consume_kw(&mut self, kw: &str) {
        self.i += kw.chars().count();
    }

    /// Parse a list until EOF, a terminator keyword in `terms`, or (when
    /// `paren`) an unmatched `)`.
    fn parse_list(&mut self, terms: &[&str], paren: bool) -> List {
        let mut list = List::default();
        if self.depth > MAX_DEPTH {
            self.err("nesting too deep");
            self.i = self.s.len();
            return list;
        }
        loop {
            // skip separators and blank lines
            loop {
                self.skip_blanks();
                match self.peek() {
                    Some('\n') => self.newline(),
                    Some(';') if !self.starts_with(";;") && !self.starts_with(";&") => self.i += 1,
                    _ => break,
                }
            }
            let Some(c) = self.peek() else { break };
            if c == ')' && paren {
                break;
            }
            if !terms.is_empty() && self.at_keyword(terms).is_some() {
                break;
            }
            if !self.bump_node() {
                break;
            }
            let before = self.i;
            let pl = self.parse_pipeline(terms, paren);
            self.skip_blanks();
            let sep = if self.starts_with("&&") {
                self.i += 2;
                Sep::And
            } else if self.starts_with("||") {
                self.i += 2;
                Sep::Or
            } else if self.starts_with(";;") || self.starts_with(";&") {
                // case terminator: leave for the case parser
                Sep::Seq
            } else if self.peek() == Some(';') {
                self.i += 1;
                Sep::Seq
            } else if self.peek() == Some('&') {
                self.i += 1;
                Sep::Bg
            } else if self.peek() == Some('\n') {
                self.newline();
                Sep::Seq
            } else {
                Sep::Seq
            };
            if !pl.cmds.is_empty() {
                list.items.push((pl, sep));
            }
            if self.i == before {
                // nothing consumed: skip one char so we always progress
                match self.peek() {
                    Some(')') if paren => break,
                    Some(_) => {
                        if !terms.is_empty() && self.at_keyword(terms).is_some() {
                            break;
                        }
                        self.err("unexpected character");
                        self.i += 1;
                    }
                    None => break,
                }
            }
        }
        list
    }

    fn parse_pipeline(&mut self, terms: &[&str], paren: bool) -> Pipeline {
        let mut pl = Pipeline::default();
        self.skip_blanks();
        // `!` negation and the `time [-p]` keyword
        if self.at_keyword(&["!"]).is_some() {
            self.i += 1;
            self.skip_blanks();
        }
        if self.at_keyword(&["time"]).is_some() {
            self.i += 4;
            self.skip_blanks();
            if self.starts_with("-p ") {
                self.i += 3;
                self.skip_blanks();
            }
        }
        loop {
            self.skip_blanks();
            if let Some(cmd) = self.parse_command(terms, paren) {
                pl.cmds.push(cmd);
            }
            self.skip_blanks();
            if self.starts_with("||") {
                break;
            }
            if self.starts_with("|&") {
                self.i += 2;
            } else if self.peek() == Some('|') {
                self.i += 1;
            } else {
                break;
            }
            // allow newlines after a pipe
            loop {
                self.skip_blanks();
                if self.peek() == Some('\n') {
                    self.newline();
                } else {
                    break;
                }
            }
            if !self.bump_node() {
                break;
            }
        }
        pl
    }

    fn parse_command(&mut self, terms: &[&str], paren: bool) -> Option<Cmd> {
        self.skip_blanks();
        let c = self.peek()?;
        if c == ')' && paren {
            return None;
        }
        if self.depth > MAX_DEPTH {
            self.err("nesting too deep");
            self.i = self.s.len();
            return None;
        }
        if c == '(' {
            if self.peek_at(1) == Some('(') {
                // arithmetic command (( ... ))
                // Not a program: kept as a pseudo-assignment so substitutions
                // inside are still analysed.
                let text = self.scan_balanced_parens(2);
                let mut s = Simple::default();
                let w = if text.contains("$(") || text.contains('`') {
                    self.sub_parse_operand(&text)
                } else {
                    Word {
                        parts: vec![Part::Arith(text.clone())],
                        raw: text.clone(),
                    }
                };
                s.assigns.push(("__arith".into(), w));
                let redirs = self.parse_redirs_only();
                s.redirs = redirs;
                return Some(Cmd::Simple(s));
            }
            self.i += 1;
            self.depth += 1;
            let list = self.parse_list(&[], true);
            self.depth -= 1;
            if self.peek() == Some(')') {
                self.i += 1;
            } else {
                self.err("unterminated subshell");
            }
            let redirs = self.parse_redirs_only();
            return Some(Cmd::Subshell(list, redirs));
        }
        let kw = self.at_keyword(&[
            "{", "if", "while", "until", "for", "select", "case", "function", "[[",
        ]);
        match kw {
            Some("{") => {
                self.i += 1;
                self.depth += 1;
                let list = self.parse_list(&["}"], paren);
                self.depth -= 1;
                if self.at_keyword(&["}"]).is_some() {
                    self.i += 1;
                } else {
                    self.err("unterminated group");
                }
                let redirs = self.parse_redirs_only();
                return Some(Cmd::Group(list, redirs));
            }
            Some(k @ ("if" | "while" | "until")) => {
                self.consume_kw(k);
                self.depth += 1;
                let mut all = List::default();
                let endkw = if k == "if" { "fi" } else { "done" };
                loop {
                    let l = self.parse_list(&["then", "elif", "else", "fi", "do", "done"], paren);
                    all.items.extend(l.items);
                    match self.at_keyword(&["then", "elif", "else", "fi", "do", "done"]) {
                        Some(e) if e == endkw => {
                            self.consume_kw(e);
                            break;
                        }
                        Some(e) => self.consume_kw(e),
                        None => {
                            self.err("unterminated compound command");
                            break;
                        }
                    }
                }
                self.depth -= 1;
                let redirs = self.parse_redirs_only();
                return Some(Cmd::Group(all, redirs));
            }
            Some(k @ ("for" | "select")) => {
                self.consume_kw(k);
                self.skip_blanks();
                let mut var = String::new();
                let mut words = None;
                if self.starts_with("((") {
                    let _ = self.scan_balanced_parens(2);
                } else {
                    while let Some(c) = self.peek() {
                        if is_name_char(c) {
                            var.push(c);
                            self.i += 1;
                        } else {
                            break;
                        }
                    }
                    // skip newlines then optional `in words`
                    loop {
                        self.skip_blanks();
                        if self.peek() == Some('\n') {
                            self.newline();
                        } else {
                            break;
                        }
                    }
                    if self.at_keyword(&["in"]).is_some() {
                        self.i += 2;
                        let mut ws = Vec::new();
                        loop {
                            self.skip_blanks();
                            match self.peek() {
                                None | Some('\n') | Some(';') => break,
                                Some(c) if is_meta(c) => {
                                    self.err("unexpected token in for");
                                    break;
                                }
                                _ => {
                                    let before = self.i;
                                    let w = self.parse_word();
                                    if self.i == before {
                                        break;
                                    }
                                    ws.push(w);
                                }
                            }
                        }
                        words = Some(ws);
                    }
                }
                // separators
                loop {
                    self.skip_blanks();
                    match self.peek() {
                        Some('\n') => self.newline(),
                        Some(';') => self.i += 1,
                        _ => break,
                    }
                }
                self.depth += 1;
                let body = if self.at_keyword(&["do"]).is_some() {
                    self.consume_kw("do");
                    let b = self.parse_list(&["done"], paren);
                    if self.at_keyword(&["done"]).is_some() {
                        self.consume_kw("done");
                    } else {
                        self.err("unterminated for loop");
                    }
                    b
                } else if self.at_keyword(&["{"]).is_some() {
                    self.i += 1;
                    let b = self.parse_list(&["}"], paren);
                    if self.at_keyword(&["}"]).is_some() {
                        self.i += 1;
                    }
                    b
                } else {
                    self.err("malformed for loop");
                    List::default()
                };
                self.depth -= 1;
                let _ = self.parse_redirs_only();
                return Some(Cmd::For { var, words, body });
            }
            Some("case") => {
                self.consume_kw("case");
                self.skip_blanks();
                let subject = self.parse_word();
                let mut all = List::default();
                // record the subject so substitutions in it are analysed
                all.items.push((
                    Pipeline {
                        cmds: vec![Cmd::Simple(Simple {
                            assigns: vec![("__case".into(), subject)],
                            ..Default::default()
                        })],
                    },
                    Sep::Seq,
                ));
                loop {
                    self.skip_blanks();
                    if self.peek() == Some('\n') {
                        self.newline();
                    } else {
                        break;
                    }
                }
                if self.at_keyword(&["in"]).is_some() {
                    self.i += 2;
                } else {
                    self.err("malformed case");
                }
                self.depth += 1;
                loop {
                    loop {
                        self.skip_blanks();
                        match self.peek() {
                            Some('\n') => self.newline(),
                            _ => break,
                        }
                    }
                    if self.peek().is_none() {
                        self.err("unterminated case");
                        break;
                    }
                    if self.at_keyword(&["esac"]).is_some() {
                        self.consume_kw("esac");
                        break;
                    }
                    if self.peek() == Some('(') {
                        self.i += 1;
                    }
                    // patterns until `)`
                    loop {
                        self.skip_blanks();
                        match self.peek() {
                            None => break,
                            Some(')') => {
                                self.i += 1;
                                break;
                            }
                            Some('|') => self.i += 1,
                            Some('\n') => {
                                self.err("malformed case pattern");
                                break;
                            }
                            Some(c) if is_meta(c) => {
                                self.i += 1;
                            }
                            _ => {
                                let before = self.i;
                                let _ = self.parse_word();
                                if self.i == before {
                                    self.i += 1;
                                }
                            }
                        }
                    }
                    let l = self.parse_list(&["esac", ";;", ";&", ";;&"], paren);
                    all.items.extend(l.items);
                    self.skip_blanks();
                    if self.starts_with(";;&") {
                        self.i += 3;
                    } else if self.starts_with(";;") || self.starts_with(";&") {
                        self.i += 2;
                    }
                    if !self.bump_node() {
                        break;
                    }
                }
                self.depth -= 1;
                let redirs = self.parse_redirs_only();
                return Some(Cmd::Group(all, redirs));
            }
            Some("function") => {
                self.consume_kw("function");
                self.skip_blanks();
                let w = self.parse_word();
                let name = lit_text(&w).unwrap_or_default();
                self.skip_blanks();
                if self.starts_with("()") {
                    self.i += 2;
                }
                return Some(self.func_body(name, terms, paren));
            }
            Some("[[") => {
                self.i += 2;
                let mut s = Simple::default();
                s.words.push(Word {
                    parts: vec![Part::Lit("[[".into())],
                    raw: "[[".into(),
                });
                loop {
                    self.skip_blanks();
                    match self.peek() {
                        None => {
                            self.err("unterminated [[");
                            break;
                        }
                        Some('\n') => self.newline(),
                        Some('&' | '|' | '<' | '>' | '(' | ')' | ';') => {
                            // operators inside [[ ]] are words
                            let mut t = String::new();
                            while let Some(c) = self.peek() {
                                if matches!(c, '&' | '|' | '<' | '>' | '(' | ')' | ';') {
                                    t.push(c);
                                    self.i += 1;
                                } else {
                                    break;
                                }
                            }
                            s.words.push(Word {
                                parts: vec![Part::Lit(t.clone())],
                                raw: t,
                            });
                        }
                        _ => {
                            let before = self.i;
                            let w = self.parse_word();
                            if self.i == before {
                                self.i += 1;
                                continue;
                            }
                            let end = w.raw == "]]";
                            s.words.push(w);
                            if end {
                                break;
                            }
                        }
                    }
                }
                s.redirs = self.parse_redirs_only();
                return Some(Cmd::Simple(s));
            }
            _ => {}
        }
        self.parse_simple(terms, paren)
    }

    fn func_body(&mut self, name: String, terms: &[&str], paren: bool) -> Cmd {
        loop {
            self.skip_blanks();
            if self.peek() == Some('\n') {
                self.newline();
            } else {
                break;
            }
        }
        self.depth += 1;
        let body = self
            .parse_command(terms, paren)
            .unwrap_or(Cmd::Group(List::default(), Vec::new()));
        self.depth -= 1;
        Cmd::FuncDef {
            name,
            body: Box::new(body),
        }
    }

    /// Scan `((` ... `))` (open = number of parens already at i) and return the
    /// inner text.
    fn scan_balanced_parens(&mut self, open: usize) -> String {
        self.i += open;
        let start = self.i;
        let mut depth = open as i32;
        while let Some(c) = self.peek() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            self.i += 1;
        }
        let end = self.i.min(self.s.len());
        let inner_end = if end >= start + (open - 1) {
            end - (open - 1)
        } else {
            end
        };
        let text: String = self.s[start..inner_end.max(start)].iter().collect();
        if self.peek() == Some(')') {
            self.i += 1;
        } else {
            self.err("unterminated arithmetic");
        }
        text
    }

    fn parse_redirs_only(&mut self) -> Vec<Redir> {
        let mut out = Vec::new();
        loop {
            self.skip_blanks();
            match self.try_redir() {
                Some(r) => out.push(r),
                None => break,
            }
        }
        out
    }

    fn parse_simple(&mut self, _terms: &[&str], _paren: bool) -> Option<Cmd> {
        let mut s = Simple::default();
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else { break };
            if let Some(r) = self.try_redir() {
                s.redirs.push(r);
                continue;
            }
            if is_meta(c) && !((c == '<' || c == '>') && self.peek_at(1) == Some('(')) {
                if c == '(' && s.words.len() == 1 && s.assigns.is_empty() {
                    // function definition `name() body`
                    let save = self.i;
                    self.i += 1;
                    self.skip_blanks();
                    if self.peek() == Some(')') {
                        self.i += 1;
                        let name = s.words[0].raw.clone();
                        return Some(self.func_body(name, _terms, _paren));
                    }
                    self.i = save;
                    self.err("unexpected (");
                    self.i += 1;
                    continue;
                }
                break;
            }
            if !self.bump_node() {
                break;
            }
            // assignment?
            if s.words.is_empty()
                && let Some((name, w)) = self.try_assignment()
            {
                s.assigns.push((name, w));
                continue;
            }
            let before = self.i;
            let w = self.parse_word();
            if self.i == before {
                self.err("unexpected character");
                self.i += 1;
                continue;
            }
            s.words.push(w);
        }
        if s.words.is_empty() && s.assigns.is_empty() && s.redirs.is_empty() {
            return None;
        }
        Some(Cmd::Simple(s))
    }

    fn try_assignment(&mut self) -> Option<(String, Word)> {
        let c = self.peek()?;
        if !is_name_start(c) {
            return None;
        }
        let mut k = self.i;
        while k < self.s.len() && is_name_char(self.s[k]) {
            k += 1;
        }
        let name_end = k;
        // optional [index]
        if k < self.s.len() && self.s[k] == '[' {
            while k < self.s.len() && self.s[k] != ']' && !is_meta(self.s[k]) {
                k += 1;
            }
            if k < self.s.len() && self.s[k] == ']' {
                k += 1;
            } else {
                return None;
            }
        }
        if k < self.s.len() && self.s[k] == '+' {
            k += 1;
        }
        if k >= self.s.len() || self.s[k] != '=' {
            return None;
        }
        let name: String = self.s[self.i..name_end].iter().collect();
        self.i = k + 1;
        if self.peek() == Some('(') {
            // array assignment: parse the elements as words, keep them all
            self.i += 1;
            let mut parts = Vec::new();
            let start = self.i;
            loop {
                self.skip_blanks();
                match self.peek() {
                    None => {
                        self.err("unterminated array");
                        break;
                    }
                    Some(')') => {
                        self.i += 1;
                        break;
                    }
                    Some('\n') => self.newline(),
                    _ => {
                        let before = self.i;
                        let w = self.parse_word();
                        if self.i == before {
                            self.i += 1;
                            continue;
                        }
                        if !parts.is_empty() {
                            // elements stay apart: `"${a[@]}"` expands to one
                            // word per element
                            parts.push(Part::Quoted(crate::words::ARRAY_SEP.to_string()));
                        }
                        parts.extend(w.parts);
                    }
                }
            }
            let raw: String = self.s[start..self.i.min(self.s.len())].iter().collect();
            return Some((name, Word { parts, raw }));
        }
        let w = self.parse_word();
        Some((name, w))
    }

    fn try_redir(&mut self) -> Option<Redir> {
        let save = self.i;
        let mut fd: Option<u32> = None;
        let mut k = self.i;
        while k < self.s.len() && self.s[k].is_ascii_digit() && k - self.i < 4 {
            k += 1;
        }
        if k > self.i && k < self.s.len() && (self.s[k] == '<' || self.s[k] == '>') {
            let t: String = self.s[self.i..k].iter().collect();
            fd = t.parse().ok();
            self.i = k;
        } else if self.peek() == Some('{') {
            // {varname}>file
            let mut j = self.i + 1;
            while j < self.s.len() && is_name_char(self.s[j]) {
                j += 1;
            }
            if j > self.i + 1
                && j + 1 < self.s.len()
                && self.s[j] == '}'
                && (self.s[j + 1] == '<' || self.s[j + 1] == '>')
            {
                self.i = j + 1;
            }
        }
        let op = if self.starts_with("&>>") {
            self.i += 3;
            RedirOp::Append
        } else if self.starts_with("&>") {
            self.i += 2;
            RedirOp::Out
        } else if self.starts_with("<<<") {
            self.i += 3;
            RedirOp::Herestring
        } else if self.starts_with("<<") {
            self.i += 2;
            let strip = if self.peek() == Some('-') {
                self.i += 1;
                true
            } else {
                false
            };
            self.skip_blanks();
            let w = self.parse_word();
            let quoted = w.raw.contains(['\'', '"', '\\']);
            let delim = word_literal_unquoted(&w);
            let idx = self.heredocs.len();
            self.heredocs.push(Heredoc {
                expand: !quoted,
                ..Default::default()
            });
            self.pending.push(PendingHd {
                delim,
                strip_tabs: strip,
                idx,
            });
            return Some(Redir {
                fd,
                op: RedirOp::Heredoc,
                target: w,
                heredoc: Some(idx),
            });
        } else if self.starts_with("<(") || self.starts_with(">(") {
            self.i = save;
            return None;
        } else if self.starts_with("<>") {
            self.i += 2;
            RedirOp::ReadWrite
        } else if self.starts_with(">&") || self.starts_with("<&") {
            self.i += 2;
            RedirOp::Dup
        } else if self.starts_with(">>") {
            self.i += 2;
            RedirOp::Append
        } else if self.starts_with(">|") {
            self.i += 2;
            RedirOp::Out
        } else if self.peek() == Some('>') {
            self.i += 1;
            RedirOp::Out
        } else if self.peek() == Some('<') {
            self.i += 1;
            RedirOp::In
        } else {
            self.i = save;
            return None;
        };
        self.skip_blanks();
        let before = self.i;
        let target = self.parse_word();
        if self.i == before {
            self.err("redirection without target");
        }
        Some(Redir {
            fd,
            op,
            target,
            heredoc: None,
        })
    }

    /// Parse one unquoted-context word.
    fn parse_word(&mut self) -> Word {
        let start = self.i;
        let mut parts = Vec::new();
        let mut lit = String::new();
        let flush = |lit: &mut String, parts: &mut Vec<Part>| {
            if !lit.is_empty() {
                parts.push(Part::Lit(std::mem::take(lit)));
            }
        };
        // leading tilde
        if self.peek() == Some('~') {
            let mut user = String::new();
            let mut k = self.i + 1;
            while k < self.s.len() {
                let c = self.s[k];
                if is_name_char(c) || c == '-' || c == '.' {
                    user.push(c);
                    k += 1;
                } else {
                    break;
                }
            }
            let next = self.s.get(k).copied();
            if next.is_none() || next == Some('/') || is_meta(next.unwrap_or(' ')) {
                parts.push(Part::Tilde(user));
                self.i = k;
            }
        }
        while let Some(c) = self.peek() {
            match c {
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    flush(&mut lit, &mut parts);
                    self.i += 2;
                    self.depth += 1;
                    let l = self.parse_list(&[], true);
                    self.depth -= 1;
                    if self.peek() == Some(')') {
                        self.i += 1;
                    } else {
                        self.err("unterminated process substitution");
                    }
                    parts.push(Part::ProcSub(Box::new(l)));
                }
                '(' if parts.is_empty() && is_array_assign_prefix(&lit) => {
                    // `declare -A m=(...)` / `local a=(x y)`: keep the list in the word
                    let st = self.i;
                    let _ = self.scan_balanced_parens(1);
                    lit.extend(&self.s[st..self.i]);
                }
                c if is_meta(c) => break,
                '\\' => match self.peek_at(1) {
                    Some('\n') => self.i += 2,
                    Some('\r') if self.peek_at(2) == Some('\n') => self.i += 3,
                    Some(n) => {
                        flush(&mut lit, &mut parts);
                        parts.push(Part::Quoted(n.to_string()));
                        self.i += 2;
                    }
                    None => {
                        self.i += 1;
                    }
                },
                '\'' => {
                    flush(&mut lit, &mut parts);
                    self.i += 1;
                    let mut q = String::new();
                    let mut closed = false;
                    while let Some(c) = self.peek() {
                        self.i += 1;
                        if c == '\'' {
                            closed = true;
                            break;
                        }
                        q.push(c);
                    }
                    if !closed {
                        self.err("unterminated single quote");
                    }
                    parts.push(Part::Quoted(q));
                }
                '"' => {
                    flush(&mut lit, &mut parts);
                    self.i += 1;
                    let inner = self.parse_parts(self.s.len(), Mode::Dq);
                    if self.peek() == Some('"') {
                        self.i += 1;
                    } else {
                        self.err("unterminated double quote");
                    }
                    parts.push(Part::Dq(inner));
                }
                '$' => {
                    flush(&mut lit, &mut parts);
                    if let Some(p) = self.parse_dollar() {
                        parts.push(p);
                    } else {
                        lit.push('$');
                    }
                }
                '`' => {
                    flush(&mut lit, &mut parts);
                    parts.push(self.parse_backtick());
                }
                _ => {
                    // a run of plain characters in one go
                    let st = self.i;
                    self.i += 1;
                    while let Some(c) = self.peek() {
                        if is_meta(c) || matches!(c, '\\' | '\'' | '"' | '$' | '`') {
                            break;
                        }
                        self.i += 1;
                    }
                    lit.reserve(self.i - st);
                    lit.extend(&self.s[st..self.i]);
                }
            }
        }
        flush(&mut lit, &mut parts);
        let end = self.i.min(self.s.len());
        let mut raw = String::with_capacity(end - start);
        raw.extend(&self.s[start..end]);
        Word { parts, raw }
    }

    /// Parse parts until `end` (index) or the closing char of the mode.
    fn parse_parts(&mut self, end: usize, mode: Mode) -> Vec<Part> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        while self.i < end {
            let c = self.s[self.i];
            match c {
                '"' if mode == Mode::Dq => break,
                '"' if mode == Mode::Operand => {
                    if !lit.is_empty() {
                        parts.push(Part::Quoted(std::mem::take(&mut lit)));
                    }
                    self.i += 1;
                    let inner = self.parse_parts(end, Mode::Dq);
                    if self.i < end && self.s[self.i] == '"' {
                        self.i += 1;
                    }
                    parts.push(Part::Dq(inner));
                }
                '\'' if mode == Mode::Operand => {
                    if !lit.is_empty() {
                        parts.push(Part::Quoted(std::mem::take(&mut lit)));
                    }
                    self.i += 1;
                    let mut q = String::new();
                    while self.i < end && self.s[self.i] != '\'' {
                        q.push(self.s[self.i]);
                        self.i += 1;
                    }
                    self.i += 1;
                    parts.push(Part::Quoted(q));
                }
                '\\' => {
                    let n = if self.i + 1 < end {
                        Some(self.s[self.i + 1])
                    } else {
                        None
                    };
                    match n {
                        Some('\n') => self.i += 2,
                        Some(n @ ('$' | '`' | '\\')) => {
                            lit.push(n);
                            self.i += 2;
                        }
                        Some('"') if mode != Mode::Heredoc => {
                            lit.push('"');
                            self.i += 2;
                        }
                        Some(n) if mode == Mode::Operand => {
                            lit.push(n);
                            self.i += 2;
                        }
                        _ => {
                            lit.push('\\');
                            self.i += 1;
                        }
                    }
                }
                '$' => {
                    if !lit.is_empty() {
                        parts.push(Part::Quoted(std::mem::take(&mut lit)));
                    }
                    match self.parse_dollar() {
                        Some(p) => parts.push(p),
                        None => lit.push('$'),
                    }
                }
                '`' => {
                    if !lit.is_empty() {
                        parts.push(Part::Quoted(std::mem::take(&mut lit)));
                    }
                    parts.push(self.parse_backtick());
                }
                _ => {
                    lit.push(c);
                    self.i += 1;
                }
            }
        }
        if !lit.is_empty() {
            parts.push(Part::Quoted(lit));
        }
        parts
    }

    fn parse_backtick(&mut self) -> Part {
        self.i += 1;
        let mut inner = String::new();
        let mut closed = false;
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                '`' => {
                    closed = true;
                    break;
                }
                '\\' => match self.peek() {
                    Some(n @ ('`' | '\\' | '$')) => {
                        inner.push(n);
                        self.i += 1;
                    }
                    _ => inner.push('\\'),
                },
                _ => inner.push(c),
            }
        }
        if !closed {
            self.err("unterminated backtick");
        }
        let sub = self.sub_parse(&inner);
        Part::CmdSub(Box::new(sub))
    }

    /// Parse a separate string (backtick body, parameter operand) in a child
    /// parser that shares the depth and node budget.
    fn sub_parse(&mut self, text: &str) -> List {
        if self.depth + 1 > MAX_DEPTH {
            self.err("nesting too deep");
            return List::default();
        }
        let chars: Vec<char> = text.chars().collect();
        let mut p = Parser {
            s: &chars,
            i: 0,
            depth: self.depth + 1,
            pending: Vec::new(),
            heredocs: Vec::new(),
            error: None,
            nodes: self.nodes,
        };
        let l = p.parse_list(&[], false);
        if p.i < p.s.len() {
            p.err("unexpected token");
        }
        self.nodes = p.nodes;
        if let Some(e) = p.error {
            self.err(&e);
        }
        // heredocs in backticks: append, re-indexing is not needed because the
        // analyser only reads bodies through Redir indices of the same table.
        if !p.heredocs.is_empty() {
            let base = self.heredocs.len();
            self.heredocs.extend(p.heredocs);
            let mut l = l;
            reindex_heredocs(&mut l, base);
            return l;
        }
        l
    }

    fn sub_parse_operand(&mut self, text: &str) -> Word {
        let chars: Vec<char> = text.chars().collect();
        let mut p = Parser {
            s: &chars,
            i: 0,
            depth: self.depth + 1,
            pending: Vec::new(),
            heredocs: Vec::new(),
            error: None,
            nodes: self.nodes,
        };
        let parts = if self.depth + 1 > MAX_DEPTH {
            vec![Part::Quoted(text.to_string())]
        } else {
            p.parse_parts(chars.len(), Mode::Operand)
        };
        self.nodes = p.nodes;
        if let Some(e) = p.error {
            self.err(&e);
        }
        if !p.heredocs.is_empty() {
            // a heredoc inside an operand (`${x:-`cat <<E`}`): its body is not
            // kept, so the command cannot be fully read
            self.err("heredoc inside an expansion operand");
        }
        Word {
            parts,
            raw: text.to_string(),
        }
    }

    /// Parse a `$` expansion at the cursor. Always consumes at least the `$`;
    /// returns `None` for a literal `$`.
    fn parse_dollar(&mut self) -> Option<Part> {
        let Some(n) = self.peek_at(1) else {
            self.i += 1;
            return None;
        };
        match n {
            '(' => {
                if self.peek_at(2) == Some('(') {
                    // $(( arith )) -- but `$( (cmd) )` is rare; treat as arith
                    self.i += 1;
                    let t = self.scan_balanced_parens(2);
                    // arithmetic may contain $(...) itself
                    if t.contains("$(") || t.contains('`') {
                        let w = self.sub_parse_operand(&t);
                        return Some(Part::Dq(w.parts));
                    }
                    return Some(Part::Arith(t));
                }
                self.i += 2;
                self.depth += 1;
                let l = if self.depth > MAX_DEPTH {
                    self.err("nesting too deep");
                    self.i = self.s.len();
                    List::default()
                } else {
                    self.parse_list(&[], true)
                };
                self.depth -= 1;
                if self.peek() == Some(')') {
                    self.i += 1;
                } else {
                    self.err("unterminated command substitution");
                }
                Some(Part::CmdSub(Box::new(l)))
            }
            '{' => {
                self.i += 2;
                let start = self.i;
                let mut depth = 1;
                while let Some(c) = self.peek() {
                    match c {
                        '\\' => {
                            self.i += 2;
                            continue;
                        }
                        '\'' => {
                            self.i += 1;
                            while let Some(c) = self.peek() {
                                self.i += 1;
                                if c == '\'' {
                                    break;
                                }
                            }
                            continue;
                        }
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
                let end = self.i.min(self.s.len());
                let inner: String = self.s[start..end].iter().collect();
                if self.peek() == Some('}') {
                    self.i += 1;
                } else {
                    self.err("unterminated ${");
                }
                Some(Part::Param(Box::new(self.parse_param(&inner))))
            }
            '\'' => {
                self.i += 2;
                let mut raw = String::new();
                let mut closed = false;
                while let Some(c) = self.peek() {
                    self.i += 1;
                    if c == '\\' {
                        if let Some(n) = self.peek() {
                            raw.push('\\');
                            raw.push(n);
                            self.i += 1;
                        }
                        continue;
                    }
                    if c == '\'' {
                        closed = true;
                        break;
                    }
                    raw.push(c);
                }
                if !closed {
                    self.err("unterminated $'");
                }
                Some(Part::Quoted(ansi_c_unescape(&raw)))
            }
            '"' => {
                self.i += 2;
                let inner = self.parse_parts(self.s.len(), Mode::Dq);
                if self.peek() == Some('"') {
                    self.i += 1;
                } else {
                    self.err("unterminated double quote");
                }
                Some(Part::Dq(inner))
            }
            c if is_name_start(c) => {
                self.i += 1;
                let mut name = String::new();
                while let Some(c) = self.peek() {
                    if is_name_char(c) {
                        name.push(c);
                        self.i += 1;
                    } else {
                        break;
                    }
                }
                Some(Part::Param(Box::new(Param {
                    name,
                    length: false,
                    indirect: false,
                    op: String::new(),
                    arg: None,
                    arg2: None,
                    subscript: None,
                })))
            }
            c if c.is_ascii_digit() || matches!(c, '@' | '*' | '#' | '?' | '$' | '!' | '-') => {
                self.i += 2;
                Some(Part::Param(Box::new(Param {
                    name: c.to_string(),
                    length: false,
                    indirect: false,
                    op: String::new(),
                    arg: None,
                    arg2: None,
                    subscript: None,
                })))
            }
            _ => {
                self.i += 1;
                None
            }
        }
    }

    fn parse_param(&mut self, inner: &str) -> Param {
        let chars: Vec<char> = inner.chars().collect();
        let mut k = 0;
        let mut length = false;
        let mut indirect = false;
        if chars.len() > 1 && chars[0] == '#' {
            length = true;
            k = 1;
        } else if chars.len() > 1 && chars[0] == '!' {
            indirect = true;
            k = 1;
        }
        let mut name = String::new();
        if k < chars.len()
            && (chars[k].is_ascii_digit()
                || matches!(chars[k], '@' | '*' | '#' | '?' | '$' | '!' | '-'))
            && !is_name_start(chars[k])
        {
            name.push(chars[k]);
            k += 1;
        } else {
            while k < chars.len() && is_name_char(chars[k]) {
                name.push(chars[k]);
                k += 1;
            }
        }
        // array subscript
        let mut subscript = None;
        if k < chars.len() && chars[k] == '[' {
            let start = k + 1;
            while k < chars.len() && chars[k] != ']' {
                k += 1;
            }
            subscript = Some(
                chars[start.min(chars.len())..k.min(chars.len())]
                    .iter()
                    .collect(),
            );
            k += 1;
        }
        let rest: String = chars[k.min(chars.len())..].iter().collect();
        let mut op = String::new();
        let mut arg = None;
        let mut arg2 = None;
        if !rest.is_empty() {
            let ops = [
                ":-", ":=", ":+", ":?", "##", "%%", "//", "/#", "/%", "^^", ",,", "-", "=", "+",
                "?", "#", "%", "/", "^", ",", ":", "@",
            ];
            for o in ops {
                if let Some(r) = rest.strip_prefix(o) {
                    op = o.to_string();
                    if o.starts_with('/') {
                        // split pattern / replacement at the first unescaped '/'
                        let mut pat = String::new();
                        let mut rep = None;
                        let mut esc = false;
                        for (ix, ch) in r.char_indices() {
                            if esc {
                                pat.push(ch);
                                esc = false;
                                continue;
                            }
                            if ch == '\\' {
                                esc = true;
                                pat.push(ch);
                                continue;
                            }
                            if ch == '/' {
                                rep = Some(&r[ix + 1..]);
                                break;
                            }
                            pat.push(ch);
                        }
                        arg = Some(self.sub_parse_operand(&pat));
                        arg2 = Some(self.sub_parse_operand(rep.unwrap_or("")));
                    } else {
                        arg = Some(self.sub_parse_operand(r));
                    }
                    break;
                }
            }
            if op.is_empty() {
                op = "?unknown".into();
            }
        }
        Param {
            name,
            length,
            indirect,
            op,
            arg,
            arg2,
            subscript,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Inside `"..."`.
    Dq,
    /// A heredoc body with an unquoted delimiter.
    Heredoc,
    /// A `${name op WORD}` operand.
    Operand,
}

fn reindex_heredocs(l: &mut List, base: usize) {
    for (pl, _) in &mut l.items {
        for c in &mut pl.cmds {
            reindex_cmd(c, base);
        }
    }
}

fn reindex_cmd(c: &mut Cmd, base: usize) {
    match c {
        Cmd::Simple(s) => {
            for r in &mut s.redirs {
                if let Some(h) = &mut r.heredoc {
                    *h += base;
                }
            }
        }
        Cmd::Subshell(l, rs) | Cmd::Group(l, rs) => {
            reindex_heredocs(l, base);
            for r in rs {
                if let Some(h) = &mut r.heredoc {
                    *h += base;
                }
            }
        }
        Cmd::For { body, .. } => reindex_heredocs(body, base),
        Cmd::FuncDef { body, .. } => reindex_cmd(body, base),
    }
}

fn is_array_assign_prefix(lit: &str) -> bool {
    let Some(name) = lit.strip_suffix('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let mut cs = name.chars();
    matches!(cs.next(), Some(c) if is_name_start(c)) && cs.all(is_name_char)
}

/// The literal text of a word made only of literal/quoted parts.
pub fn lit_text(w: &Word) -> Option<String> {
    let mut s = String::new();
    for p in &w.parts {
        match p {
            Part::Lit(t) | Part::Quoted(t) => s.push_str(t),
            Part::Dq(inner) => {
                for q in inner {
                    match q {
                        Part::Lit(t) | Part::Quoted(t) => s.push_str(t),
                        _ => return None,
                    }
                }
            }
            _ => return None,
        }
    }
    Some(s)
}

fn word_literal_unquoted(w: &Word) -> String {
    lit_text(w).unwrap_or_else(|| w.raw.replace(['\'', '"', '\\'], ""))
}

/// Decode the body of a `$'...'` string.
pub fn ansi_c_unescape(s: &str) -> String {
    let cs: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let hex = |cs: &[char], i: usize, max: usize| -> (u32, usize) {
        let mut v = 0u32;
        let mut n = 0;
        while n < max && i + n < cs.len() && cs[i + n].is_ascii_hexdigit() {
            v = v * 16 + cs[i + n].to_digit(16).unwrap_or(0);
            n += 1;
        }
        (v, n)
    };
    while i < cs.len() {
        let c = cs[i];
        if c != '\\' || i + 1 >= cs.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let n = cs[i + 1];
        i += 2;
        match n {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            '?' => out.push('?'),
            'x' => {
                let (v, k) = hex(&cs, i, 2);
                if k == 0 {
                    out.push_str("\\x");
                } else {
                    out.extend(char::from_u32(v));
                    i += k;
                }
            }
            'u' | 'U' => {
                let (v, k) = hex(&cs, i, if n == 'u' { 4 } else { 8 });
                if k == 0 {
                    out.push('\\');
                    out.push(n);
                } else {
                    out.extend(char::from_u32(v));
                    i += k;
                }
            }
            'c' => {
                if i < cs.len() {
                    out.extend(char::from_u32((cs[i] as u32) & 0x1f));
                    i += 1;
                }
            }
            '0'..='7' => {
                let mut v = n.to_digit(8).unwrap_or(0);
                let mut k = 0;
                while k < 2 && i < cs.len() && ('0'..='7').contains(&cs[i]) {
                    v = v * 8 + cs[i].to_digit(8).unwrap_or(0);
                    i += 1;
                    k += 1;
                }
                out.extend(char::from_u32(v));
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}
