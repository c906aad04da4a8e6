//! The foreground guard: refuse what would keep running after a foreground
//! command returns (a trailing `&`, `nohup`, dev servers, watchers), with
//! guidance to use `background=true`.

use once_cell::sync::Lazy;
use regex::Regex;

static SERVERS: Lazy<Regex> = Lazy::new(|| {
    Regex::new(
        r"(?x)
        (^|[;&|(\n]\s*)
        (?:(?:sudo|env|exec|time|nice)\s+|[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*
        (
            (npm|pnpm|yarn|bun)\s+(run\s+)?(dev|start|serve|watch)\b
          | npx\s+(vite|next\s+dev|nodemon|http-server|serve)\b
          | next\s+dev\b
          | vite(\s+(dev|serve|preview))?\s*$
          | vite\s+--
          | nodemon\b
          | uvicorn\b
          | gunicorn\b
          | hypercorn\b
          | flask\s+run\b
          | python[0-9.]*\s+-m\s+(http\.server|flask\s+run|uvicorn)\b
          | python[0-9.]*\s+manage\.py\s+runserver\b
          | php\s+-S\b
          | rails\s+(s|server)\b
          | jekyll\s+serve\b
          | hugo\s+server\b
          | ng\s+serve\b
          | webpack(-dev-server|\s+serve|\s+--watch)\b
          | tail\s+-[a-zA-Z]*f
          | watch\s+
          | cargo\s+watch\b
        )",
    )
    .expect("server regex")
});

static COMPOSE_UP: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"docker[\s-]+compose\s+up\b").expect("compose regex"));

static DETACH_START: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"(^|[;&|(]\s*|\n\s*)(nohup|disown|setsid)\b").expect("detach regex"));

/// Replace the contents of quoted strings so `echo "a & b"` does not count.
fn strip_quotes(cmd: &str) -> String {
    let mut out = String::with_capacity(cmd.len());
    let mut q: Option<char> = None;
    let mut esc = false;
    for c in cmd.chars() {
        if esc {
            esc = false;
            out.push('_');
            continue;
        }
        match q {
            Some(open) => {
                if c == '\\' && open == '"' {
                    esc = true;
                } else if c == open {
                    q = None;
                    out.push(c);
                }
            }
            None => {
                if c == '\\' {
                    esc = true;
                    out.push('_');
                } else {
                    if c == '\'' || c == '"' {
                        q = Some(c);
                    }
                    out.push(c);
                }
            }
        }
    }
    out
}

/// True when the text has a backgrounding `&` (not `&&`, `>&`, `&>`, `|&`).
fn has_background_amp(s: &str) -> bool {
    let b = s.as_bytes();
    for i in 0..b.len() {
        if b[i] != b'&' {
            continue;
        }
        let prev = if i > 0 { b[i - 1] } else { b' ' };
        let next = b.get(i + 1).copied().unwrap_or(b' ');
        if next == b'&'
            || prev == b'&'
            || prev == b'>'
            || prev == b'<'
            || next == b'>'
            || prev == b'|'
        {
            continue;
        }
        return true;
    }
    false
}

/// Why a foreground command would hang the call, if it would.
pub fn foreground_hazard(command: &str) -> Option<String> {
    let s = strip_quotes(command);
    let t = s.trim();
    if t.contains(" --help") || t.ends_with(" -h") || t.contains(" --version") || t.ends_with(" -v")
    {
        return None;
    }
    let what = if DETACH_START.is_match(t) {
        "it detaches a process (nohup/disown/setsid)"
    } else if has_background_amp(t) {
        "it starts a process in the background with '&'"
    } else if SERVERS.is_match(t)
        || (COMPOSE_UP.is_match(t) && !t.contains(" -d") && !t.contains("--detach"))
    {
        "it starts a long-running server or watcher"
    } else {
        return None;
    };
    Some(format!(
        "This command would not finish in the foreground ({what}). Run it with background=true \
         (add notify_on_complete=true or watch_patterns to be told about progress), then use the \
         process tool to poll, read its log or kill it."
    ))
}

#[cfg(test)]
mod tests {
    use super::foreground_hazard as h;

    #[test]
    fn refuses_what_would_hang() {
        for c in [
            "sleep 100 &",
            "sleep 100 & sleep 100",
            "nohup ./server",
            "cd app && npm run dev",
            "python -m http.server 8000",
            "python3 -m http.server",
            "vite",
            "flask run --port 5000",
            "uvicorn main:app --reload",
            "tail -f log.txt",
            "FLASK_APP=app.py flask run",
            "cd web; sudo npm start",
        ] {
            assert!(h(c).is_some(), "{c}");
        }
    }

    #[test]
    fn allows_normal_commands() {
        for c in [
            "echo hi",
            "make && make test",
            "ls 2>&1 | grep x",
            "cmd &> out.txt",
            "echo 'a & b'",
            "echo \"npm run dev\"",
            "npm run build",
            "vite --help",
            "git log | head",
            "npm test",
            "docker compose up -d",
            "git log | grep watch -c",
            "echo tail -f is how you follow logs",
        ] {
            assert!(h(c).is_none(), "{c}");
        }
    }
}
