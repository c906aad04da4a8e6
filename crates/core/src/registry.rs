//! The tool registry: specs, entries, toolset membership, aliases and the
//! generation counter that every change bumps (definitions are cached on it).

use once_cell::sync::OnceCell;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use crate::availability::Check;
use crate::error::{Error, ErrorKind, Result};
use crate::function::FunctionParts;
use crate::params::{Compiled, Formats, Params};
use crate::tool::Tool;

/// FNV-1a: tool names are short and not attacker-chosen keys of a
/// long-lived table the model can grow, so a fast hash beats SipHash here.
#[derive(Clone, Copy, Default)]
pub struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// Fast map for dispatch lookups (persistent: cloning is O(1)).
pub type ToolMap = imbl::GenericHashMap<
    Arc<str>,
    Arc<ToolEntry>,
    std::hash::BuildHasherDefault<NameHasher>,
    imbl::shared_ptr::DefaultSharedPtr,
>;

/// Description text that is only true when other tools are advertised too
/// (so schemas never mention a tool the model does not have).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionalText {
    /// Append `text` when at least one of these tools is in the same definitions.
    #[serde(default)]
    pub when_any_available: Vec<String>,
    /// Append `text` only when all of these tools are in the same definitions.
    #[serde(default)]
    pub when_all_available: Vec<String>,
    pub text: String,
}

/// The registration JSON (`ht_runtime_register_tool`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    pub name: String,
    pub toolset: String,
    /// The OpenAI function (or `{"type":"function","function":{..}}`),
    /// read in one pass; its parameters stay text (compiled, never turned
    /// into a `Value` tree).
    pub schema: FunctionParts,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub emoji: Option<String>,
    #[serde(default)]
    pub requires_env: Vec<String>,
    #[serde(default)]
    pub max_result_size_chars: Option<u64>,
    #[serde(default)]
    pub parallel_safe: bool,
    #[serde(default, rename = "override")]
    pub override_: bool,
    /// Per-call timeout in seconds (overrides the runtime default).
    #[serde(default)]
    pub timeout: Option<f64>,
    /// The host's agent loop handles this tool itself (todo, memory, ...).
    #[serde(default)]
    pub agent_loop: bool,
    #[serde(default)]
    pub conditional_description: Vec<ConditionalText>,
    /// The tool's result text is an MCP `CallToolResult`
    /// (`{"content":[...],"isError"?,"structuredContent"?}`), which an MCP
    /// server sends as it is (images, audio, resources); other consumers
    /// read the text. The host's declaration, never the result's: a tool's
    /// output cannot make itself content blocks.
    #[serde(default)]
    pub mcp_content: bool,
}

/// Output format of definitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    OpenAi = 0,
    Anthropic = 1,
    Mcp = 2,
}

pub struct ToolEntry {
    pub name: String,
    pub toolset: String,
    pub description: String,
    pub emoji: String,
    pub requires_env: Vec<String>,
    pub max_result_size_chars: Option<usize>,
    pub parallel_safe: bool,
    pub timeout: Option<Duration>,
    pub agent_loop: bool,
    /// The result text is an MCP `CallToolResult` ([`ToolSpec::mcp_content`]).
    pub mcp_content: bool,
    /// The parameters schema as the host wrote it (spliced into definitions).
    pub parameters: Box<RawValue>,
    /// The compiled parameters schema (now, or on first use after bulk registration).
    pub params: Params,
    pub conditional: Vec<ConditionalText>,
    pub tool: Arc<dyn Tool>,
    pub check: Option<Arc<dyn Check>>,
    /// The rendered definition per format (without conditional text).
    rendered: [OnceCell<Box<str>>; 3],
}

impl ToolEntry {
    /// The compiled parameters schema, compiling it on first use.
    pub fn compiled(&self) -> std::result::Result<&Compiled, &str> {
        self.params.get(self.parameters.get(), &self.name)
    }

    /// [`ToolEntry::compiled`] with `format` as `formats` says (`dispatch.formats`).
    pub fn compiled_for(&self, formats: Formats) -> std::result::Result<&Compiled, &str> {
        self.params
            .get_for(self.parameters.get(), &self.name, formats)
    }

    /// The definition JSON for `format`, with `extra` appended to the description.
    pub fn render(&self, format: Format, extra: &str) -> String {
        let name = serde_json::to_string(&self.name).unwrap_or_default();
        let description =
            serde_json::to_string(&format!("{}{}", self.description, extra)).unwrap_or_default();
        let p = self.parameters.get();
        match format {
            Format::OpenAi => format!(
                r#"{{"type":"function","function":{{"name":{name},"description":{description},"parameters":{p}}}}}"#
            ),
            Format::Anthropic => {
                format!(r#"{{"name":{name},"description":{description},"input_schema":{p}}}"#)
            }
            Format::Mcp => {
                format!(r#"{{"name":{name},"description":{description},"inputSchema":{p}}}"#)
            }
        }
    }

    /// Cached rendering without conditional text.
    pub fn rendered(&self, format: Format) -> &str {
        self.rendered[format as usize].get_or_init(|| self.render(format, "").into_boxed_str())
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Check a name against `^[A-Za-z0-9_-]{1,64}$`.
pub fn check_name(what: &str, name: &str) -> Result<()> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{what}: '{}' is not a valid name (1 to 64 of A-Z a-z 0-9 _ -)",
            name.chars().take(80).collect::<String>()
        )))
    }
}

/// Parse and check a spec; builds everything except the handler.
pub fn parse_spec(text: &str) -> Result<ToolSpec> {
    let spec: ToolSpec =
        serde_json::from_str(text).map_err(|e| Error::json(format!("tool spec: {e}")))?;
    check_name("tool spec: name", &spec.name)?;
    check_name("tool spec: toolset", &spec.toolset)?;
    Ok(spec)
}

/// Read a JSON array of specs (bulk registration) one at a time, checking
/// every name and handing each spec to `each` as soon as it is read (no
/// vector of specs: at 10 000 specs that is megabytes of fresh memory).
/// Stops at the first error, from the JSON or from `each`; returns the count.
pub fn parse_specs_each(
    text: &str,
    mut each: impl FnMut(usize, ToolSpec) -> Result<()>,
) -> Result<usize> {
    struct Seq<'f> {
        each: &'f mut dyn FnMut(usize, ToolSpec) -> Result<()>,
        failed: &'f mut Option<Error>,
    }
    impl<'de> serde::de::Visitor<'de> for Seq<'_> {
        type Value = usize;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array of tool specs")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> std::result::Result<usize, A::Error> {
            let mut i = 0;
            while let Some(spec) = seq.next_element::<ToolSpec>()? {
                let checked = if !valid_name(&spec.name) {
                    check_name(&format!("tool specs[{i}]: name"), &spec.name)
                } else if !valid_name(&spec.toolset) {
                    check_name(&format!("tool specs[{i}]: toolset"), &spec.toolset)
                } else {
                    Ok(())
                };
                if let Err(e) = checked.and_then(|()| (self.each)(i, spec)) {
                    *self.failed = Some(e);
                    return Err(serde::de::Error::custom("stopped"));
                }
                i += 1;
            }
            Ok(i)
        }
    }
    let mut failed = None;
    let mut de = serde_json::Deserializer::from_str(text);
    let out = serde::Deserializer::deserialize_seq(
        &mut de,
        Seq {
            each: &mut each,
            failed: &mut failed,
        },
    )
    .and_then(|n| de.end().map(|()| n));
    match (out, failed) {
        (_, Some(e)) => Err(e),
        (Ok(n), None) => Ok(n),
        (Err(e), None) => Err(Error::json(format!("tool specs: {e}"))),
    }
}

/// When a tool's parameters schema is compiled: the config's
/// `dispatch.compile_schemas` (see `params.rs`).
pub use crate::config::CompileSchemas as Compile;

/// Build an entry from a parsed spec (validates and compiles the schema).
pub fn build_entry(
    spec: ToolSpec,
    tool: Arc<dyn Tool>,
    check: Option<Arc<dyn Check>>,
) -> Result<ToolEntry> {
    build_entry_with(spec, tool, check, Compile::AtRegistration)
}

/// [`build_entry`], choosing when the schema compiles.
pub fn build_entry_with(
    spec: ToolSpec,
    tool: Arc<dyn Tool>,
    check: Option<Arc<dyn Check>>,
    compile: Compile,
) -> Result<ToolEntry> {
    let func = spec.schema;
    if let Some(p) = func.problem {
        return Err(Error::invalid(p));
    }
    if let Some(n) = &func.name
        && *n != spec.name
    {
        return Err(Error::invalid(format!(
            "tool spec: schema.name '{n}' differs from name '{}'",
            spec.name
        )));
    }
    let description = func.description.or(spec.description).unwrap_or_default();
    let parameters: Box<RawValue> = match func.parameters {
        Some(p) => p,
        None => RawValue::from_string(r#"{"type":"object","properties":{}}"#.to_string())
            .map_err(|e| Error::invalid(e.to_string()))?,
    };
    let params = match compile {
        Compile::AtRegistration => {
            Params::now(parameters.get(), "tool spec: schema.parameters").map_err(Error::invalid)?
        }
        Compile::OnFirstUse => {
            check_top_type(parameters.get())?;
            // The patterns limit bounds what compiling will cost, so it holds
            // here too: a fast count of the keyword (an over-count when a
            // property is named "pattern", never an under-count).
            // Each pattern takes at least 13 bytes (`"pattern":""`), so only
            // a schema that long can be over the limit.
            if let Some(max) = crate::schema::pattern_limit()
                && parameters.get().len() > max.saturating_mul(13)
                && parameters.get().matches("\"pattern\"").count() > max
            {
                return Err(Error::invalid(format!(
                    "tool spec: schema.parameters: the schema has more than {max} patterns (limits.max_schema_patterns)"
                )));
            }
            Params::later()
        }
    };
    for var in &spec.requires_env {
        if var.is_empty() || var.contains('=') || var.contains('\0') {
            return Err(Error::invalid(format!(
                "tool spec: requires_env: '{var}' is not an environment variable name"
            )));
        }
    }
    for c in &spec.conditional_description {
        for t in c.when_any_available.iter().chain(&c.when_all_available) {
            check_name("tool spec: conditional_description: tool", t)?;
        }
    }
    let timeout = spec
        .timeout
        .map(|t| crate::error::seconds("tool spec: timeout", t, false))
        .transpose()?;
    let max = match spec.max_result_size_chars {
        Some(0) => {
            return Err(Error::invalid(
                "tool spec: max_result_size_chars: must be positive",
            ));
        }
        m => m.map(|m| m as usize),
    };
    Ok(ToolEntry {
        name: spec.name,
        toolset: spec.toolset,
        description,
        emoji: spec.emoji.unwrap_or_default(),
        requires_env: spec.requires_env,
        max_result_size_chars: max,
        parallel_safe: spec.parallel_safe,
        timeout,
        agent_loop: spec.agent_loop,
        mcp_content: spec.mcp_content,
        parameters,
        params,
        conditional: spec.conditional_description,
        tool,
        check,
        rendered: Default::default(),
    })
}

/// A toolset defined by the host at run time.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsetDef {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub tools: Vec<String>,
    #[serde(default)]
    pub includes: Vec<String>,
}

/// Every tool, toolset and alias of one runtime. Tools live in persistent
/// maps (cloned in O(1) into dispatch snapshots); toolset membership is
/// indexed, so resolving a toolset never scans every tool.
#[derive(Default)]
pub struct Registry {
    pub tools: ToolMap,
    /// Registered tools by their toolset.
    pub members: HashMap<String, BTreeSet<Arc<str>>>,
    pub toolsets: BTreeMap<String, ToolsetDef>,
    pub aliases: BTreeMap<String, String>,
    pub generation: u64,
    /// Bumped when the set of names or toolsets changes (not when a tool is
    /// replaced in place): resolved toolset selections are cached on it.
    pub membership: u64,
    /// Bumped when toolset definitions or aliases change (what a query's
    /// toolsets resolve to, beyond which tools are registered).
    pub structure: u64,
    /// Names registered, replaced or removed, with the generation that
    /// published the change (the last [`CHANGE_LOG`] of them): definitions
    /// patch a cached, sorted selection with these instead of rebuilding
    /// and re-sorting it.
    changes: std::collections::VecDeque<(u64, Arc<str>)>,
    /// Changes at or below this generation are no longer in `changes`.
    changes_floor: u64,
}

/// How many name changes the registry remembers.
pub const CHANGE_LOG: usize = 512;

impl Registry {
    fn check_collision(&self, entry: &ToolEntry, override_: bool) -> Result<()> {
        if let Some(old) = self.tools.get(entry.name.as_str())
            && old.toolset != entry.toolset
            && !override_
        {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!(
                    "tool '{}' is already registered by toolset '{}'; set \"override\": true in the spec to replace it",
                    entry.name, old.toolset
                ),
            ));
        }
        Ok(())
    }

    /// Insert without the collision check. A tool that joins a toolset is
    /// added to `members` at once, or, with `joined` (bulk registration),
    /// collected there to be added in one sorted batch by [`Registry::join`].
    fn put(
        &mut self,
        entry: Arc<ToolEntry>,
        joined: Option<&mut HashMap<String, Vec<Arc<str>>>>,
    ) -> Option<Arc<ToolEntry>> {
        let key: Arc<str> = Arc::from(entry.name.as_str());
        let old = self.tools.insert(key.clone(), entry.clone());
        // Bulk registration (`joined`) forgets the log instead (see insert_many).
        if joined.is_none() {
            self.log_change(key.clone());
        }
        match &old {
            Some(o) if o.toolset == entry.toolset => {
                return old;
            }
            Some(o) => self.unlink(&o.toolset, &key),
            None => {}
        }
        self.membership += 1;
        match joined {
            Some(j) => match j.get_mut(entry.toolset.as_str()) {
                Some(list) => list.push(key),
                None => {
                    j.insert(entry.toolset.clone(), vec![key]);
                }
            },
            None => match self.members.get_mut(entry.toolset.as_str()) {
                // Look up before inserting: most tools join an existing toolset.
                Some(set) => {
                    set.insert(key);
                }
                None => {
                    self.members
                        .entry(entry.toolset.clone())
                        .or_default()
                        .insert(key);
                }
            },
        }
        old
    }

    /// Add collected toolset members: each toolset's names sorted once and
    /// built (or merged) as a whole, not inserted one by one.
    fn join(&mut self, joined: HashMap<String, Vec<Arc<str>>>) {
        for (toolset, mut names) in joined {
            names.sort_unstable();
            let mut add: BTreeSet<Arc<str>> = names.into_iter().collect();
            match self.members.get_mut(toolset.as_str()) {
                Some(set) => set.append(&mut add),
                None => {
                    self.members.insert(toolset, add);
                }
            }
        }
    }

    /// Remember that `name` changed in the generation about to be published.
    fn log_change(&mut self, name: Arc<str>) {
        if self.changes.len() >= CHANGE_LOG
            && let Some((g, _)) = self.changes.pop_front()
        {
            self.changes_floor = g;
        }
        // `generation + 1`: the generation this change is published under.
        self.changes.push_back((self.generation + 1, name));
    }

    fn unlink(&mut self, toolset: &str, name: &str) {
        if let Some(set) = self.members.get_mut(toolset) {
            set.remove(name);
            if set.is_empty() {
                self.members.remove(toolset);
            }
        }
    }

    /// Insert an entry under the collision rules; returns the replaced entry.
    pub fn insert(&mut self, entry: ToolEntry, override_: bool) -> Result<Option<Arc<ToolEntry>>> {
        self.check_collision(&entry, override_)?;
        let old = self.put(Arc::new(entry), None);
        self.generation += 1;
        Ok(old)
    }

    /// Insert many entries: all are checked first, so a conflict changes nothing.
    pub fn insert_many(
        &mut self,
        entries: Vec<Arc<ToolEntry>>,
        override_: bool,
    ) -> Result<Vec<Arc<ToolEntry>>> {
        let mut seen = std::collections::HashSet::with_capacity_and_hasher(
            entries.len(),
            std::hash::BuildHasherDefault::<NameHasher>::default(),
        );
        for e in &entries {
            self.check_collision(e, override_)?;
            if !seen.insert(e.name.as_str()) {
                return Err(Error::invalid(format!(
                    "tool specs: '{}' appears twice in one bulk registration",
                    e.name
                )));
            }
        }
        let mut joined = HashMap::new();
        let mut old = Vec::new();
        let names: Option<Vec<Arc<str>>> = (entries.len() < CHANGE_LOG)
            .then(|| entries.iter().map(|e| Arc::from(e.name.as_str())).collect());
        for e in entries {
            old.extend(self.put(e, Some(&mut joined)));
        }
        self.join(joined);
        match names {
            Some(names) => names.into_iter().for_each(|n| self.log_change(n)),
            None => {
                // More than the log holds: cached selections are rebuilt.
                self.changes.clear();
                self.changes_floor = self.generation + 1;
            }
        }
        self.generation += 1;
        Ok(old)
    }

    pub fn remove(&mut self, name: &str) -> Option<Arc<ToolEntry>> {
        let old = self.tools.remove(name)?;
        self.unlink(&old.toolset, name);
        self.log_change(Arc::from(name));
        // Aliases pointing at a toolset that no longer has tools go with it.
        if !self.members.contains_key(&old.toolset) && !self.toolsets.contains_key(&old.toolset) {
            let before = self.aliases.len();
            self.aliases.retain(|_, target| *target != old.toolset);
            if self.aliases.len() != before {
                self.structure += 1;
            }
        }
        self.generation += 1;
        self.membership += 1;
        Some(old)
    }

    /// Names registered, replaced or removed after generation `since` up to
    /// `until` (inclusive), or `None` when the log no longer reaches back
    /// that far.
    pub fn changed_between(&self, since: u64, until: u64) -> Option<Vec<Arc<str>>> {
        if since < self.changes_floor {
            return None;
        }
        Some(
            self.changes
                .iter()
                .filter(|(g, _)| *g > since && *g <= until)
                .map(|(_, n)| n.clone())
                .collect(),
        )
    }

    /// Whether any registered tool belongs to `toolset`.
    pub fn has_toolset_tools(&self, toolset: &str) -> bool {
        self.members.contains_key(toolset)
    }

    /// Names of the registered tools of `toolset`.
    pub fn members_of(&self, toolset: &str) -> impl Iterator<Item = &Arc<str>> {
        self.members.get(toolset).into_iter().flatten()
    }
}

/// The one check bulk registration makes inside a parameters schema: its
/// top-level `type`, when given, is `"object"` (or a list holding it). A
/// byte scan of the top level: the text is valid JSON already (it came out
/// of the spec's parser), so only strings and nesting need tracking.
fn check_top_type(text: &str) -> Result<()> {
    let bad = || {
        Error::invalid(
            "tool spec: schema.parameters.type: tool parameters must be of type \"object\"",
        )
    };
    match top_level_value(text, "type") {
        None | Some("\"object\"") => Ok(()),
        Some(t) if t.starts_with('[') => match serde_json::from_str::<Vec<String>>(t) {
            Ok(list)
                if list.iter().any(|x| x == "object")
                    && list.iter().all(|x| x == "object" || x == "null") =>
            {
                Ok(())
            }
            _ => Err(bad()),
        },
        Some(_) => Err(bad()),
    }
}

/// The raw text of `key`'s value in the JSON object `text` (valid JSON),
/// looking at the top level only. A key spelled with escapes is not found.
fn top_level_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    // At depth 1, whether the next string is a key.
    let mut expect_key = false;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if depth == 1 && expect_key {
                    expect_key = false;
                    if &b[start..i.min(b.len())] == key.as_bytes() {
                        // Skip to the ':' and the value after it.
                        let mut j = i + 1;
                        while j < b.len() && b[j] != b':' {
                            j += 1;
                        }
                        j += 1;
                        while j < b.len() && b[j].is_ascii_whitespace() {
                            j += 1;
                        }
                        let v0 = j;
                        let (mut d, mut in_str) = (0usize, false);
                        while j < b.len() {
                            let c = b[j];
                            if in_str {
                                if c == b'\\' {
                                    j += 1;
                                } else if c == b'"' {
                                    in_str = false;
                                }
                            } else {
                                match c {
                                    b'"' => in_str = true,
                                    b'[' | b'{' => d += 1,
                                    b']' | b'}' if d > 0 => d -= 1,
                                    b',' | b'}' if d == 0 => break,
                                    _ => {}
                                }
                            }
                            j += 1;
                        }
                        return text.get(v0..j).map(str::trim_end);
                    }
                }
            }
            b'{' => {
                depth += 1;
                expect_key = depth == 1;
            }
            b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => expect_key = true,
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod top_level_tests {
    use super::top_level_value;

    #[test]
    fn finds_only_top_level_keys() {
        let t =
            r#"{"properties":{"type":{"type":"string"}},"a":"type","type" : ["object","null"] }"#;
        assert_eq!(top_level_value(t, "type"), Some(r#"["object","null"]"#));
        assert_eq!(
            top_level_value(r#"{"x":"\"type\"","type":"object"}"#, "type"),
            Some(r#""object""#)
        );
        assert_eq!(
            top_level_value(r#"{"properties":{"type":"string"}}"#, "type"),
            None
        );
        assert_eq!(
            top_level_value(r#"{"type":"string"}"#, "type"),
            Some(r#""string""#)
        );
        assert_eq!(top_level_value(r#"{}"#, "type"), None);
    }
}
