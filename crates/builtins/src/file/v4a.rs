//! The original's V4A multi-file patch format, parsed and simulated in
//! memory: `*** Begin Patch` / `*** End Patch` (both optional),
//! `*** Update File: p` (with an optional `*** Move to: q`), `*** Add File:
//! p` (`+` lines), `*** Delete File: p`, `*** Move File: a -> b`, `@@ hint`
//! hunk headers and ` `/`-`/`+` lines. Every operation is checked against
//! the current content (hunks in order, with the same fuzzy matcher as
//! `patch` replace) before anything is written; the caller writes only
//! when the whole patch is valid.

use crate::fuzzy;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Update {
        path: String,
        move_to: Option<String>,
        hunks: Vec<Hunk>,
    },
    Add {
        path: String,
        content: String,
    },
    Delete {
        path: String,
    },
    Move {
        from: String,
        to: String,
    },
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunk {
    pub hint: Option<String>,
    /// Context and removed lines (what must be found).
    pub old: Vec<String>,
    /// Context and added lines (what replaces it).
    pub new: Vec<String>,
}

fn check_path(p: &str, line: usize) -> Result<String, String> {
    let p = p.trim();
    if p.is_empty() {
        return Err(format!("line {line}: empty file path"));
    }
    if p.split(['/', '\\']).any(|c| c == "..") {
        return Err(format!("line {line}: path '{p}' contains '..': refused"));
    }
    Ok(p.to_string())
}

/// The `*** ` directives of a file section.
const DIRECTIVES: &[&str] = &[
    "Update File:",
    "Add File:",
    "Delete File:",
    "Move File:",
    "Move to:",
];

/// Parse a V4A patch body.
pub fn parse(text: &str) -> Result<Vec<Op>, String> {
    let mut ops: Vec<Op> = Vec::new();
    let mut cur: Option<Op> = None;
    let mut hunk: Option<Hunk> = None;
    let flush_hunk = |cur: &mut Option<Op>, hunk: &mut Option<Hunk>| {
        if let (Some(Op::Update { hunks, .. }), Some(h)) = (cur.as_mut(), hunk.take())
            && (!h.old.is_empty() || !h.new.is_empty())
        {
            hunks.push(h);
        }
    };
    for (i, raw) in text.split('\n').enumerate() {
        let n = i + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let t = line.trim_end();
        // Markers padded with whitespace are markers (as Codex and the
        // original read them): a padded `*** End Patch` taken as a context
        // line would be written into the file.
        let bare = line.trim();
        if bare == "*** End Patch" {
            break;
        }
        if bare == "*** Begin Patch" || bare == "*** End of File" {
            continue;
        }
        let directive = if t.starts_with("*** ") {
            t.strip_prefix("*** ")
        } else {
            bare.strip_prefix("*** ")
                .filter(|r| DIRECTIVES.iter().any(|d| r.starts_with(d)))
        };
        if let Some(rest) = directive {
            flush_hunk(&mut cur, &mut hunk);
            if let Some(op) = cur.take() {
                ops.push(op);
            }
            if let Some(p) = rest.strip_prefix("Update File:") {
                cur = Some(Op::Update {
                    path: check_path(p, n)?,
                    move_to: None,
                    hunks: Vec::new(),
                });
            } else if let Some(p) = rest.strip_prefix("Add File:") {
                cur = Some(Op::Add {
                    path: check_path(p, n)?,
                    content: String::new(),
                });
            } else if let Some(p) = rest.strip_prefix("Delete File:") {
                ops.push(Op::Delete {
                    path: check_path(p, n)?,
                });
            } else if let Some(p) = rest.strip_prefix("Move File:") {
                let (a, b) = p
                    .split_once("->")
                    .ok_or_else(|| format!("line {n}: Move File needs 'from -> to'"))?;
                ops.push(Op::Move {
                    from: check_path(a, n)?,
                    to: check_path(b, n)?,
                });
            } else if let Some(p) = rest.strip_prefix("Move to:") {
                match ops.pop() {
                    Some(Op::Update { path, hunks, .. }) => {
                        cur = Some(Op::Update {
                            path,
                            move_to: Some(check_path(p, n)?),
                            hunks,
                        })
                    }
                    _ => {
                        return Err(format!(
                            "line {n}: '*** Move to:' must follow '*** Update File:'"
                        ));
                    }
                }
            } else {
                return Err(format!("line {n}: unknown directive '*** {rest}'"));
            }
            continue;
        }
        match cur.as_mut() {
            Some(Op::Add { content, .. }) => {
                if let Some(rest) = line.strip_prefix('+') {
                    content.push_str(rest);
                    content.push('\n');
                } else if !t.is_empty() {
                    return Err(format!(
                        "line {n}: lines of an added file must start with '+'"
                    ));
                }
            }
            Some(Op::Update { .. }) => {
                if let Some(rest) = t.strip_prefix("@@") {
                    flush_hunk(&mut cur, &mut hunk);
                    let hint = rest.trim().trim_end_matches("@@").trim();
                    hunk = Some(Hunk {
                        hint: (!hint.is_empty()).then(|| hint.to_string()),
                        ..Hunk::default()
                    });
                    continue;
                }
                let h = hunk.get_or_insert_with(Hunk::default);
                if let Some(rest) = line.strip_prefix('-') {
                    h.old.push(rest.to_string());
                } else if let Some(rest) = line.strip_prefix('+') {
                    h.new.push(rest.to_string());
                } else if let Some(rest) = line.strip_prefix(' ') {
                    h.old.push(rest.to_string());
                    h.new.push(rest.to_string());
                } else if line.is_empty() {
                    // a blank context line whose leading space was lost
                    h.old.push(String::new());
                    h.new.push(String::new());
                } else {
                    return Err(format!(
                        "line {n}: hunk lines must start with ' ', '-' or '+' (got '{}')",
                        line.chars().take(40).collect::<String>()
                    ));
                }
            }
            _ => {
                if !t.is_empty() {
                    return Err(format!(
                        "line {n}: text outside a file section (expected '*** Update File:', '*** Add File:', '*** Delete File:' or '*** Move File:')"
                    ));
                }
            }
        }
    }
    flush_hunk(&mut cur, &mut hunk);
    if let Some(op) = cur.take() {
        ops.push(op);
    }
    // trailing blank context lines picked up from the patch's end are noise
    for op in &mut ops {
        if let Op::Update { hunks, .. } = op {
            for h in hunks.iter_mut() {
                while h.old.last().is_some_and(String::is_empty)
                    && h.new.last().is_some_and(String::is_empty)
                {
                    h.old.pop();
                    h.new.pop();
                }
            }
        }
    }
    if ops.is_empty() {
        return Err("the patch has no file operations".into());
    }
    Ok(ops)
}

/// Apply `hunks` to `content` in order; the new content or why not.
pub fn apply_hunks(content: &str, hunks: &[Hunk]) -> Result<String, String> {
    let mut text = content.to_string();
    for (k, h) in hunks.iter().enumerate() {
        let n = k + 1;
        if h.old.iter().all(|l| l.trim().is_empty()) && !h.new.is_empty() && h.old.is_empty() {
            // add-only hunk: after the (unique) hint line, or at the end
            let add = h.new.join("\n");
            match &h.hint {
                Some(hint) => {
                    let hits: Vec<usize> =
                        text.match_indices(hint.as_str()).map(|(i, _)| i).collect();
                    if hits.len() != 1 {
                        return Err(format!(
                            "hunk {n}: the hint '{hint}' of an add-only hunk must match exactly one place (found {})",
                            hits.len()
                        ));
                    }
                    let eol = text[hits[0]..]
                        .find('\n')
                        .map(|i| hits[0] + i + 1)
                        .unwrap_or(text.len());
                    let mut ins = add;
                    ins.push('\n');
                    if eol == text.len() && !text.ends_with('\n') {
                        text.push('\n');
                        text.push_str(&ins);
                    } else {
                        text.insert_str(eol, &ins);
                    }
                }
                None => {
                    if !text.is_empty() && !text.ends_with('\n') {
                        text.push('\n');
                    }
                    text.push_str(&add);
                    text.push('\n');
                }
            }
            continue;
        }
        let old = h.old.join("\n");
        let new = h.new.join("\n");
        match fuzzy::find_and_replace(&text, &old, &new, false) {
            Ok(r) => text = r.content,
            Err(fuzzy::FuzzyError::Ambiguous { count, .. }) if h.hint.is_some() => {
                // narrow to the region after the hint
                let hint = h.hint.as_deref().unwrap_or_default();
                let Some(at) = text.find(hint) else {
                    return Err(format!(
                        "hunk {n}: found {count} matches and the hint '{hint}' is not in the file"
                    ));
                };
                let from = floor_boundary(&text, at.saturating_sub(500));
                let to = floor_boundary(&text, (at + hint.len() + 2000).min(text.len()));
                let window = &text[from..to];
                let r = fuzzy::find_and_replace(window, &old, &new, false)
                    .map_err(|e| format!("hunk {n}: {}", e.message()))?;
                text = format!("{}{}{}", &text[..from], r.content, &text[to..]);
            }
            Err(e) => return Err(format!("hunk {n}: {}", e.message())),
        }
    }
    Ok(text)
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_all_ops() {
        let p = "*** Begin Patch\n*** Update File: a.txt\n@@ fn main\n ctx\n-old\n+new\n*** Add File: b.txt\n+hello\n*** Delete File: c.txt\n*** Move File: d.txt -> e.txt\n*** End Patch\n";
        let ops = parse(p).unwrap();
        assert_eq!(ops.len(), 4);
        assert_eq!(
            ops[0],
            Op::Update {
                path: "a.txt".into(),
                move_to: None,
                hunks: vec![Hunk {
                    hint: Some("fn main".into()),
                    old: vec!["ctx".into(), "old".into()],
                    new: vec!["ctx".into(), "new".into()],
                }]
            }
        );
        assert_eq!(
            ops[1],
            Op::Add {
                path: "b.txt".into(),
                content: "hello\n".into()
            }
        );
        assert!(parse("*** Update File: ../x\n").is_err());
        assert!(parse("*** Frobnicate File: x\n").is_err());
    }

    #[test]
    fn padded_end_marker_is_never_content() {
        let p = "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n-b\n+B\n *** End Patch";
        let ops = parse(p).unwrap();
        let Op::Update { hunks, .. } = &ops[0] else {
            panic!("{ops:?}")
        };
        assert_eq!(hunks[0].new, ["a", "B"]);
        assert_eq!(apply_hunks("a\nb\nc\n", hunks).unwrap(), "a\nB\nc\n");
        let ops = parse("*** Add File: n.txt\n+x\n  *** End Patch  \n").unwrap();
        assert_eq!(
            ops[0],
            Op::Add {
                path: "n.txt".into(),
                content: "x\n".into()
            }
        );
        // nothing after the end marker is read
        let ops = parse("*** Add File: n.txt\n+x\n\t*** End Patch\ntrailing prose\n").unwrap();
        assert_eq!(ops.len(), 1);
    }

    #[test]
    fn padded_markers_are_accepted() {
        let p = " *** Begin Patch\n  *** Update File: a.txt\n@@\n-b\n+B\n  *** Move to: c.txt\n \t*** Add File: d.txt\n+d\n *** Delete File: e.txt\n   *** Move File: f -> g\n*** End Patch \n";
        let ops = parse(p).unwrap();
        assert_eq!(ops.len(), 4, "{ops:?}");
        assert!(
            matches!(&ops[0], Op::Update { path, move_to: Some(to), .. } if path == "a.txt" && to == "c.txt")
        );
        assert!(matches!(&ops[1], Op::Add { path, .. } if path == "d.txt"));
        assert!(matches!(&ops[2], Op::Delete { path } if path == "e.txt"));
        assert!(matches!(&ops[3], Op::Move { from, to } if from == "f" && to == "g"));
        // a padded line that is not a directive stays a context line
        let ops = parse("*** Update File: a\n *** not a marker\n-x\n+y\n").unwrap();
        let Op::Update { hunks, .. } = &ops[0] else {
            panic!()
        };
        assert_eq!(hunks[0].old, ["*** not a marker", "x"]);
    }

    #[test]
    fn hunks_apply() {
        let h = Hunk {
            hint: None,
            old: vec!["b".into()],
            new: vec!["B".into()],
        };
        assert_eq!(apply_hunks("a\nb\nc\n", &[h]).unwrap(), "a\nB\nc\n");
        let add = Hunk {
            hint: Some("a".into()),
            old: vec![],
            new: vec!["x".into()],
        };
        assert_eq!(apply_hunks("a\nb\n", &[add]).unwrap(), "a\nx\nb\n");
    }
}
