//! The tool registry: specs, entries, toolset membership, aliases and the
//! generation counter that every change bumps (definitions are cached on it).

use once_cell::sync::OnceCell;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use crate::availability::Check;
use crate::error::{Error, ErrorKind, Result};
use crate::schema::Node;
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
/// The same tools in name order (definitions order).
pub type SortedTools = imbl::OrdMap<Arc<str>, Arc<ToolEntry>>;

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
    /// kept as text: it is compiled, never turned into a `Value` tree.
    pub schema: Box<RawValue>,
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
    /// The parameters schema as the host wrote it (spliced into definitions).
    pub parameters: Box<RawValue>,
    pub params: Node,
    pub params_trivial: bool,
    pub conditional: Vec<ConditionalText>,
    pub tool: Arc<dyn Tool>,
    pub check: Option<Arc<dyn Check>>,
    /// The rendered definition per format (without conditional text).
    rendered: [OnceCell<Box<str>>; 3],
}

impl ToolEntry {
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

/// Parse a JSON array of specs (bulk registration), checking every name.
pub fn parse_specs(text: &str) -> Result<Vec<ToolSpec>> {
    let specs: Vec<ToolSpec> =
        serde_json::from_str(text).map_err(|e| Error::json(format!("tool specs: {e}")))?;
    for (i, spec) in specs.iter().enumerate() {
        check_name(&format!("tool specs[{i}]: name"), &spec.name)?;
        check_name(&format!("tool specs[{i}]: toolset"), &spec.toolset)?;
    }
    Ok(specs)
}

/// The keys of a JSON object, each with its raw value, in order.
fn object_entries(text: &str) -> std::result::Result<Vec<(Cow<'_, str>, &RawValue)>, ()> {
    let map: Vec<(Cow<'_, str>, &RawValue)> = serde_json::from_str::<EntriesOf>(text)
        .map(|e| e.0)
        .map_err(|_| ())?;
    Ok(map)
}

/// Deserializes an object into its entries without building values.
struct EntriesOf<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for EntriesOf<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = EntriesOf<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = map.next_key::<Cow<'de, str>>()? {
                    let v: &'de RawValue = map.next_value()?;
                    out.push((k, v));
                }
                Ok(EntriesOf(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// Build an entry from a parsed spec (validates and compiles the schema).
pub fn build_entry(
    spec: ToolSpec,
    tool: Arc<dyn Tool>,
    check: Option<Arc<dyn Check>>,
) -> Result<ToolEntry> {
    let not_object = || Error::invalid("tool spec: schema: must be an object (an OpenAI function)");
    let outer = object_entries(spec.schema.get()).map_err(|_| not_object())?;
    let is_wrapper = outer
        .iter()
        .any(|(k, v)| k == "type" && v.get() == "\"function\"")
        && outer.iter().any(|(k, _)| k == "function");
    let inner;
    let func: &[(Cow<'_, str>, &RawValue)] = if is_wrapper {
        let f = outer.iter().find(|(k, _)| k == "function").map(|(_, v)| *v);
        inner = f
            .and_then(|f| object_entries(f.get()).ok())
            .ok_or_else(|| Error::invalid("tool spec: schema.function: must be an object"))?;
        &inner
    } else {
        &outer
    };
    let mut description = None;
    let mut parameters: Option<&RawValue> = None;
    for (key, v) in func {
        match &**key {
            "name" => match serde_json::from_str::<Cow<'_, str>>(v.get()) {
                Ok(s) if s == spec.name => {}
                Ok(s) => {
                    return Err(Error::invalid(format!(
                        "tool spec: schema.name '{s}' differs from name '{}'",
                        spec.name
                    )));
                }
                Err(_) => return Err(Error::invalid("tool spec: schema.name: must be a string")),
            },
            "description" => match serde_json::from_str::<Option<String>>(v.get()) {
                Ok(d) => description = d,
                Err(_) => {
                    return Err(Error::invalid(
                        "tool spec: schema.description: must be a string",
                    ));
                }
            },
            "parameters" => parameters = (v.get() != "null").then_some(*v),
            "strict" => {}
            other => {
                return Err(Error::invalid(format!(
                    "tool spec: schema.{other}: unknown field (expected name, description, parameters)"
                )));
            }
        }
    }
    let description = description.or(spec.description.clone()).unwrap_or_default();
    let parameters: Box<RawValue> = match parameters {
        None => RawValue::from_string(r#"{"type":"object","properties":{}}"#.to_string())
            .map_err(|e| Error::invalid(e.to_string()))?,
        Some(p) if p.get().starts_with('{') => p.to_owned(),
        Some(_) => {
            return Err(Error::invalid(
                "tool spec: schema.parameters: must be a JSON Schema object",
            ));
        }
    };
    let params = Node::compile_text(parameters.get(), "tool spec: schema.parameters")
        .map_err(Error::invalid)?;
    if !params.is_object_or_untyped() {
        return Err(Error::invalid(
            "tool spec: schema.parameters.type: tool parameters must be of type \"object\"",
        ));
    }
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
        params_trivial: params.is_trivial(),
        name: spec.name,
        toolset: spec.toolset,
        description,
        emoji: spec.emoji.unwrap_or_default(),
        requires_env: spec.requires_env,
        max_result_size_chars: max,
        parallel_safe: spec.parallel_safe,
        timeout,
        agent_loop: spec.agent_loop,
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
    pub sorted: SortedTools,
    /// Registered tools by their toolset.
    pub members: HashMap<String, BTreeSet<Arc<str>>>,
    pub toolsets: BTreeMap<String, ToolsetDef>,
    pub aliases: BTreeMap<String, String>,
    pub generation: u64,
    /// Bumped when the set of names or toolsets changes (not when a tool is
    /// replaced in place): resolved toolset selections are cached on it.
    pub membership: u64,
    /// Tools replaced in place, with the generation that replaced them (the
    /// last [`CHANGE_LOG`] of them): definitions patch a cached selection
    /// with these instead of rebuilding it.
    changes: std::collections::VecDeque<(u64, Arc<str>)>,
    /// Changes at or below this generation are no longer in `changes`.
    changes_floor: u64,
}

/// How many in-place replacements the registry remembers.
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

    fn put(&mut self, entry: ToolEntry) -> Option<Arc<ToolEntry>> {
        let key: Arc<str> = Arc::from(entry.name.as_str());
        let entry = Arc::new(entry);
        let old = self.tools.insert(key.clone(), entry.clone());
        self.sorted.insert(key.clone(), entry.clone());
        match &old {
            Some(o) if o.toolset == entry.toolset => {
                if self.changes.len() >= CHANGE_LOG
                    && let Some((g, _)) = self.changes.pop_front()
                {
                    self.changes_floor = g;
                }
                // `generation + 1`: the generation this change is published under.
                self.changes.push_back((self.generation + 1, key));
            }
            Some(o) => {
                self.unlink(&o.toolset, &key);
                self.members
                    .entry(entry.toolset.clone())
                    .or_default()
                    .insert(key);
                self.membership += 1;
            }
            None => {
                self.members
                    .entry(entry.toolset.clone())
                    .or_default()
                    .insert(key);
                self.membership += 1;
            }
        }
        old
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
        let old = self.put(entry);
        self.generation += 1;
        Ok(old)
    }

    /// Insert many entries: all are checked first, so a conflict changes nothing.
    pub fn insert_many(
        &mut self,
        entries: Vec<ToolEntry>,
        override_: bool,
    ) -> Result<Vec<Arc<ToolEntry>>> {
        let mut seen = std::collections::HashSet::new();
        for e in &entries {
            self.check_collision(e, override_)?;
            if !seen.insert(e.name.as_str()) {
                return Err(Error::invalid(format!(
                    "tool specs: '{}' appears twice in one bulk registration",
                    e.name
                )));
            }
        }
        let old = entries.into_iter().filter_map(|e| self.put(e)).collect();
        self.generation += 1;
        Ok(old)
    }

    pub fn remove(&mut self, name: &str) -> Option<Arc<ToolEntry>> {
        let old = self.tools.remove(name)?;
        self.sorted.remove(name);
        self.unlink(&old.toolset, name);
        // Aliases pointing at a toolset that no longer has tools go with it.
        if !self.members.contains_key(&old.toolset) && !self.toolsets.contains_key(&old.toolset) {
            self.aliases.retain(|_, target| *target != old.toolset);
        }
        self.generation += 1;
        self.membership += 1;
        Some(old)
    }

    /// Names replaced in place after generation `since` up to `until`
    /// (inclusive), or `None` when the log no longer reaches back that far.
    pub fn replaced_between(&self, since: u64, until: u64) -> Option<Vec<Arc<str>>> {
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
