//! The client side of a run's channel, generated per run: a Python module
//! `hermes_tools` and a JavaScript ES module `hermes_tools`, one function
//! per tool the run may call, each a thin MCP client (newline-delimited
//! JSON-RPC, MCP's stdio framing) over the Unix socket named by
//! `HERMES_TOOLS_SOCKET`. Shell scripts use `hermes-tools call`, which
//! speaks the same protocol.

use serde_json::Value;

/// The environment variable naming the run's socket.
pub const SOCKET_VAR: &str = "HERMES_TOOLS_SOCKET";

/// Python's reserved words: such a parameter is reachable through `**extra` only.
const PY_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield", "extra",
];

fn identifier(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// One tool as the stubs see it: its name, description and parameters
/// (an MCP definition: `name`, `description`, `inputSchema`).
pub struct StubTool<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub schema: &'a Value,
}

impl<'a> StubTool<'a> {
    pub fn from_mcp(def: &'a Value) -> Option<StubTool<'a>> {
        Some(StubTool {
            name: def.get("name")?.as_str()?,
            description: def.get("description").and_then(Value::as_str).unwrap_or(""),
            schema: def.get("inputSchema").unwrap_or(&Value::Null),
        })
    }

    /// The parameters as the stub shows them, in order: each name with its
    /// default (`None`: none, the caller passes it). The original's tools
    /// keep the original's order (`patch(path, old_string, new_string, ...)`)
    /// and its default where our schema requires the parameter (`mode`
    /// `"replace"`); others: the schema's required parameters, then the
    /// rest defaulting to `None` (the tool's own default applies). Names
    /// that are not identifiers (or are Python keywords) are left to `**extra`.
    fn params(&self) -> Vec<(&'a str, Option<&'static str>)> {
        let required: Vec<&str> = self
            .schema
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(props) = self.schema.get("properties").and_then(Value::as_object) else {
            return Vec::new();
        };
        let usable = |k: &str| identifier(k) && !PY_KEYWORDS.contains(&k);
        let mut names: Vec<&'a str> = Vec::new();
        if let Some((_, order)) = ORIGINAL_ORDER.iter().find(|(n, _)| *n == self.name) {
            for k in order.iter() {
                if let Some((name, _)) = props.get_key_value(*k) {
                    names.push(name.as_str());
                }
            }
        } else {
            names.extend(
                props
                    .keys()
                    .map(String::as_str)
                    .filter(|k| required.contains(k)),
            );
        }
        let rest: Vec<&'a str> = props
            .keys()
            .map(String::as_str)
            .filter(|k| !names.contains(k))
            .collect();
        names.extend(rest);
        names.retain(|k| usable(k));
        // A parameter without a default may not follow one with a default.
        let mut defaulted = false;
        names
            .into_iter()
            .map(|k| {
                let given = ORIGINAL_DEFAULTS
                    .iter()
                    .find(|(t, p, _)| *t == self.name && *p == k)
                    .map(|(_, _, d)| *d);
                let default = match given {
                    Some(d) => Some(d),
                    None if required.contains(&k) && !defaulted => None,
                    None => Some("None"),
                };
                defaulted |= default.is_some();
                (k, default)
            })
            .collect()
    }

    /// The first paragraph of the description, at most 600 characters.
    fn summary(&self) -> String {
        let first = self.description.split("\n\n").next().unwrap_or("");
        let s: String = first.chars().take(600).collect();
        s.replace('\\', "\\\\").replace("\"\"\"", "'''")
    }
}

/// The original's parameter order of its tools.
const ORIGINAL_ORDER: &[(&str, &[&str])] = &[
    ("web_search", &["query", "limit"]),
    ("web_extract", &["urls", "char_limit"]),
    ("read_file", &["path", "offset", "limit"]),
    ("write_file", &["path", "content"]),
    (
        "search_files",
        &[
            "pattern",
            "target",
            "path",
            "file_glob",
            "limit",
            "offset",
            "output_mode",
            "context",
        ],
    ),
    (
        "patch",
        &[
            "path",
            "old_string",
            "new_string",
            "replace_all",
            "mode",
            "patch",
        ],
    ),
    ("terminal", &["command", "timeout", "workdir"]),
];

/// Defaults the stubs fill in (a Python literal that is also JSON): where
/// our schema requires what the original defaulted.
const ORIGINAL_DEFAULTS: &[(&str, &str, &str)] = &[("patch", "mode", "\"replace\"")];

const PY_HEADER: &str = r#""""hermes_tools: the tools of this execute_code run (generated).

Each function calls one tool through the runtime (argument checks, hooks,
approval, limits) and returns its parsed result: a dict, as the tool's JSON
result reads (an error is a dict with an "error" key, not an exception).
"""
import json, os, shlex, socket, threading, time

__all__ = ["json_parse", "shell_quote", "retry"]
_sock = None
_buf = b""
_next = 0
_lock = threading.Lock()


def _send(msg):
    _sock.sendall((json.dumps(msg) + "\n").encode())


def _rpc(method, params):
    global _next, _buf
    _next += 1
    _send({"jsonrpc": "2.0", "id": _next, "method": method, "params": params})
    while True:
        while b"\n" not in _buf:
            chunk = _sock.recv(1 << 16)
            if not chunk:
                raise RuntimeError("the hermes-tools runtime closed the channel (the run ended)")
            _buf += chunk
        line, _, _buf = _buf.partition(b"\n")
        if not line.strip():
            continue
        msg = json.loads(line)
        if msg.get("id") != _next:
            continue
        if msg.get("error"):
            raise RuntimeError(msg["error"].get("message", "tool call failed"))
        return msg.get("result") or {}


def _connect():
    global _sock
    if _sock is None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(os.environ["HERMES_TOOLS_SOCKET"])
        _sock = s
        _rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "hermes_tools.py", "version": "1"}})
        _send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def _call(name, args):
    args = {k: v for k, v in args.items() if v is not None}
    with _lock:
        _connect()
        r = _rpc("tools/call", {"name": name, "arguments": args})
    s = r.get("structuredContent")
    if isinstance(s, dict):
        return s
    text = "".join(c.get("text", "") for c in r.get("content", []) if c.get("type") == "text")
    try:
        return json.loads(text)
    except ValueError:
        return text


def json_parse(text):
    """json.loads tolerant of control characters and a UTF-8 BOM (terminal output)."""
    if isinstance(text, str) and text.startswith("\ufeff"):
        text = text[1:]
    return json.loads(text, strict=False)


def shell_quote(s):
    """shlex.quote: a string made safe to put into a terminal() command."""
    return shlex.quote(s)


def retry(fn, max_attempts=3, delay=2):
    """Call fn() up to max_attempts times with exponential backoff."""
    last = None
    for attempt in range(max_attempts):
        try:
            return fn()
        except Exception as e:  # noqa: BLE001
            last = e
            if attempt < max_attempts - 1:
                time.sleep(delay * (2 ** attempt))
    raise last

"#;

/// The Python module `hermes_tools` for `tools`.
pub fn python_module(tools: &[StubTool<'_>]) -> String {
    let mut out = String::from(PY_HEADER);
    for t in tools {
        if !identifier(t.name) || PY_KEYWORDS.contains(&t.name) {
            continue;
        }
        let params = t.params();
        let mut sig: Vec<String> = params
            .iter()
            .map(|(p, d)| match d {
                Some(d) => format!("{p}={d}"),
                None => p.to_string(),
            })
            .collect();
        sig.push("**extra".into());
        let mut dict: Vec<String> = params.iter().map(|(p, _)| format!("{p:?}: {p}")).collect();
        dict.push("**extra".into());
        out.push_str(&format!(
            "\ndef {name}({sig}):\n    \"\"\"{doc}\"\"\"\n    return _call({name:?}, {{{dict}}})\n\n__all__.append({name:?})\n",
            name = t.name,
            sig = sig.join(", "),
            doc = t.summary(),
            dict = dict.join(", "),
        ));
    }
    out
}

const JS_HEADER: &str = r#"// hermes_tools: the tools of this execute_code run (generated).
// Each function takes one object of arguments and returns a Promise of the
// tool's parsed result (an error is an object with an "error" key).
import net from "node:net";

let conn = null;
let ready = null;
let buf = "";
let next = 0;
const waiting = new Map();

function settle(msg) {
  const w = waiting.get(msg.id);
  if (!w) return;
  waiting.delete(msg.id);
  if (waiting.size === 0) conn.unref();
  if (msg.error) w.reject(new Error(msg.error.message || "tool call failed"));
  else w.resolve(msg.result || {});
}

function rpc(method, params) {
  const id = ++next;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    conn.ref();
    conn.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  });
}

function connect() {
  if (ready) return ready;
  conn = net.createConnection(process.env.HERMES_TOOLS_SOCKET);
  conn.setEncoding("utf8");
  conn.on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.trim()) settle(JSON.parse(line));
    }
  });
  const fail = (e) => {
    for (const w of waiting.values()) w.reject(e);
    waiting.clear();
  };
  conn.on("error", fail);
  conn.on("close", () => fail(new Error("the hermes-tools runtime closed the channel (the run ended)")));
  ready = rpc("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "hermes_tools.mjs", version: "1" },
  }).then(() => {
    conn.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  });
  return ready;
}

export async function call(name, args = {}) {
  await connect();
  const clean = {};
  for (const [k, v] of Object.entries(args || {})) if (v !== undefined && v !== null) clean[k] = v;
  const r = await rpc("tools/call", { name, arguments: clean });
  if (r.structuredContent && typeof r.structuredContent === "object") return r.structuredContent;
  const text = (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("");
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

"#;

/// The JavaScript ES module `hermes_tools` for `tools`.
pub fn js_module(tools: &[StubTool<'_>]) -> String {
    let mut out = String::from(JS_HEADER);
    let mut exported = Vec::new();
    for t in tools {
        if !identifier(t.name) {
            continue;
        }
        let params = t.params();
        let names: Vec<&str> = params.iter().map(|(p, _)| *p).collect();
        let defaults: Vec<String> = params
            .iter()
            .filter(|(_, d)| d.is_some_and(|d| d != "None"))
            .map(|(p, d)| format!("{p}: {}", d.unwrap_or("null")))
            .collect();
        let doc = t.summary().replace("*/", "* /");
        out.push_str(&format!(
            "/** {doc}\n * Arguments: {{ {params} }} */\nexport function {name}(args = {{}}) {{\n  return call({name:?}, {{ {defaults}...args }});\n}}\n\n",
            name = t.name,
            params = names.join(", "),
            defaults = defaults.iter().map(|d| format!("{d}, ")).collect::<String>(),
        ));
        exported.push(t.name);
    }
    out.push_str(&format!(
        "export default {{ call, {} }};\n",
        exported.join(", ")
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn signatures_follow_the_schema() {
        let def = json!({"name": "read_file", "description": "Read a file.\n\nMore.",
            "inputSchema": {"type": "object", "required": ["path"],
                "properties": {"path": {"type": "string"}, "offset": {"type": "integer"},
                    "from": {"type": "string"}, "bad-name": {"type": "string"}}}});
        let t = StubTool::from_mcp(&def).unwrap();
        let py = python_module(&[t]);
        assert!(
            py.contains("def read_file(path, offset=None, **extra):"),
            "{py}"
        );
        assert!(py.contains("\"\"\"Read a file.\"\"\""));
        let t = StubTool::from_mcp(&def).unwrap();
        let js = js_module(&[t]);
        assert!(js.contains("export function read_file(args = {})"), "{js}");
        assert!(js.contains("export default { call, read_file };"));
        let def = json!({"name": "patch", "inputSchema": {"type": "object", "required": ["mode"],
            "properties": {"mode": {}, "path": {}, "old_string": {}, "new_string": {}}}});
        let py = python_module(&[StubTool::from_mcp(&def).unwrap()]);
        assert!(
            py.contains(
                "def patch(path=None, old_string=None, new_string=None, mode=\"replace\", **extra):"
            ),
            "{py}"
        );
        let js = js_module(&[StubTool::from_mcp(&def).unwrap()]);
        assert!(
            js.contains("call(\"patch\", { mode: \"replace\", ...args })"),
            "{js}"
        );
    }
}
