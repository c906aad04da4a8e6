//! A compiled subset of JSON Schema, made for tool arguments: compile once
//! (bad schemas are refused with the path of the problem), then repair and
//! validate each call quickly, with errors a model can fix.
//!
//! Why our own: the subset tools use (type, properties, required,
//! additionalProperties, items, enum, const, numeric bounds, length and
//! item counts, pattern, anyOf/oneOf/allOf/not, boolean schemas) is small,
//! and argument repair needs the same walk as validation. A general
//! validator would cost a second walk and give messages written for
//! people, not models.
//!
//! The node decides alone only where it decides exactly as the standard
//! does (drafts 2020-12 and 07, which read these keywords alike). A schema
//! that uses anything else (`$ref`, `if`, `patternProperties`, tuple
//! `items`, a pattern only a backtracking engine runs, an annotation of
//! the wrong type, another draft's `$schema`, ...) compiles with
//! [`Facts::exact`] false, and the `jsonschema` crate decides for it
//! (`params.rs`); the node then only guides repair. `tests/schema_differential.rs`
//! checks the claim on random schemas and instances.

use regex::Regex;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;

/// Most schema-node visits one argument repair makes (see `Node::coerce`).
pub const REPAIR_BUDGET: usize = 100_000;

thread_local! {
    /// Patterns the schema compiling on this thread may still use, with the limit.
    static PATTERNS_LEFT: std::cell::Cell<Option<(usize, usize)>> =
        const { std::cell::Cell::new(None) };
}

/// Compile schemas inside `f` with at most `max` regular expressions in all
/// (`limits.max_schema_patterns`): each one costs time and memory to build.
pub fn with_pattern_limit<T>(max: usize, f: impl FnOnce() -> T) -> T {
    let before = PATTERNS_LEFT.with(|c| c.replace(Some((max, max))));
    let out = f();
    PATTERNS_LEFT.with(|c| c.set(before));
    out
}

/// The JSON Schema draft a schema names with `$schema` at its root.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dialect {
    /// No `$schema`: draft 2020-12, with the OpenAPI 3.0 forms (`nullable`,
    /// boolean `exclusiveMinimum`/`exclusiveMaximum`) read as OpenAPI means them.
    #[default]
    Default,
    /// `$schema` names draft 2020-12 (or the version-less URI).
    Draft202012,
    /// `$schema` names draft-07.
    Draft7,
    /// Any other `$schema` (draft 2019-09, 6, 4, a custom meta-schema):
    /// the `jsonschema` crate decides alone.
    Other,
}

/// What compiling a schema found out besides the node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// The node decides exactly as the standard does. When false the schema
    /// uses something the node does not implement (`$ref`, `if`, tuple
    /// `items`, a pattern the `regex` crate cannot run, ...) or something it
    /// cannot prove valid against the draft's meta-schema, and the
    /// `jsonschema` crate must decide (the node then serves repair only).
    pub exact: bool,
    /// The `$schema` the root names.
    pub dialect: Dialect,
    /// The schema uses `format` somewhere (decided by the caller: exact
    /// when `format` is an annotation, see `params.rs`).
    pub format: bool,
    /// The schema uses an OpenAPI 3.0 form (`nullable: true`, a boolean
    /// exclusive bound), which only the default dialect reads.
    pub openapi: bool,
}

thread_local! {
    /// What the schema compiling on this thread has shown so far.
    static FACTS: std::cell::Cell<Facts> = const {
        std::cell::Cell::new(Facts {
            exact: true,
            dialect: Dialect::Default,
            format: false,
            openapi: false,
        })
    };
}

/// The schema compiling on this thread needs the full validator.
fn hand_off() {
    FACTS.with(|f| {
        let mut x = f.get();
        x.exact = false;
        f.set(x)
    });
}

fn note(change: impl FnOnce(&mut Facts)) {
    FACTS.with(|f| {
        let mut x = f.get();
        change(&mut x);
        f.set(x)
    });
}

/// Keywords of some JSON Schema draft that the node does not implement: a
/// schema using one is handed to the `jsonschema` crate. Annotations
/// (`title`, `description`, `default`, ...) are checked against the
/// meta-schema's type and otherwise ignored, as the standard does; any
/// other word is an unknown keyword, which every draft ignores.
fn beyond_node(k: &str) -> bool {
    jsonschema::Draft::Unknown.is_known_keyword(k)
        || matches!(k, "$vocabulary" | "$dynamicAnchor" | "$recursiveAnchor")
}

#[cfg(test)]
#[test]
fn the_keyword_lists_agree() {
    for k in [
        "$ref",
        "$defs",
        "definitions",
        "$id",
        "if",
        "prefixItems",
        "patternProperties",
        "additionalItems",
        "contains",
        "uniqueItems",
        "multipleOf",
        "dependencies",
        "unevaluatedProperties",
        "$dynamicRef",
        "$anchor",
        "contentMediaType",
    ] {
        assert!(beyond_node(k), "{k}");
    }
    for k in ["description", "title", "nullable", "x-foo", "example"] {
        assert!(!beyond_node(k), "{k}");
    }
}

/// The patterns limit in force on this thread, if any (kept by schemas
/// compiled later, on first use).
pub fn pattern_limit() -> Option<usize> {
    PATTERNS_LEFT.with(|c| c.get().map(|(_, max)| max))
}

fn take_pattern(path: &str) -> Result<(), String> {
    PATTERNS_LEFT.with(|c| match c.get() {
        None => Ok(()),
        Some((0, max)) => Err(format!(
            "{path}: the schema has more than {max} patterns (limits.max_schema_patterns)"
        )),
        Some((n, max)) => {
            c.set(Some((n - 1, max)));
            Ok(())
        }
    })
}

const T_NULL: u8 = 1;
const T_BOOL: u8 = 2;
const T_INT: u8 = 4;
const T_NUM: u8 = 8;
const T_STR: u8 = 16;
const T_ARR: u8 = 32;
const T_OBJ: u8 = 64;
/// The `false` schema: no value is valid (never combined with a type bit).
const T_NEVER: u8 = 128;

fn type_bit(name: &str) -> Option<u8> {
    Some(match name {
        "null" => T_NULL,
        "boolean" => T_BOOL,
        "integer" => T_INT,
        "number" => T_NUM,
        "string" => T_STR,
        "array" => T_ARR,
        "object" => T_OBJ,
        _ => return None,
    })
}

fn type_names(bits: u8) -> String {
    let names = [
        (T_NULL, "null"),
        (T_BOOL, "boolean"),
        (T_INT, "integer"),
        (T_NUM, "number"),
        (T_STR, "string"),
        (T_ARR, "array"),
        (T_OBJ, "object"),
    ];
    let v: Vec<&str> = names
        .iter()
        .filter(|(b, _)| bits & b != 0 && !(*b == T_INT && bits & T_NUM != 0))
        .map(|(_, n)| *n)
        .collect();
    v.join(" or ")
}

fn value_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn matches_type(bits: u8, v: &Value) -> bool {
    if bits == 0 {
        return true;
    }
    match v {
        Value::Null => bits & T_NULL != 0,
        Value::Bool(_) => bits & T_BOOL != 0,
        Value::Number(n) => {
            if bits & T_NUM != 0 {
                return true;
            }
            bits & T_INT != 0
                && (n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0))
        }
        Value::String(_) => bits & T_STR != 0,
        Value::Array(_) => bits & T_ARR != 0,
        Value::Object(_) => bits & T_OBJ != 0,
    }
}

#[derive(Debug, Default)]
enum Additional {
    #[default]
    Any,
    Deny,
    Schema(Box<Node>),
}

/// One compiled schema node. What most schemas use is inline; the rest
/// (bounds, enums, patterns, composition) is boxed, so a node is small:
/// a registry of 10 000 tools holds tens of thousands of them.
#[derive(Debug, Default)]
pub struct Node {
    types: u8,
    properties: Vec<(String, Node)>,
    required: Vec<String>,
    additional: Additional,
    items: Option<Box<Node>>,
    rare: Option<Box<Rare>>,
}

/// The keywords few schemas use.
#[derive(Debug, Default)]
struct Rare {
    enum_values: Option<Vec<Value>>,
    const_value: Option<Value>,
    minimum: Option<Number>,
    maximum: Option<Number>,
    exclusive_minimum: Option<Number>,
    exclusive_maximum: Option<Number>,
    min_length: Option<usize>,
    max_length: Option<usize>,
    min_items: Option<usize>,
    max_items: Option<usize>,
    pattern: Option<Regex>,
    any_of: Vec<Node>,
    one_of: Vec<Node>,
    all_of: Vec<Node>,
    not: Option<Box<Node>>,
}

static NO_RARE: Rare = Rare {
    enum_values: None,
    const_value: None,
    minimum: None,
    maximum: None,
    exclusive_minimum: None,
    exclusive_maximum: None,
    min_length: None,
    max_length: None,
    min_items: None,
    max_items: None,
    pattern: None,
    any_of: Vec::new(),
    one_of: Vec::new(),
    all_of: Vec::new(),
    not: None,
};

/// A non-negative integer as JSON Schema counts them: `2.0` is the integer 2.
fn as_count(v: &Value, path: &str, key: &str) -> Result<usize, String> {
    v.as_u64()
        .or_else(|| {
            v.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64)
        })
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
        .ok_or_else(|| format!("{path}.{key}: must be a non-negative integer"))
}

fn as_num(v: &Value, path: &str, key: &str) -> Result<Number, String> {
    match v {
        Value::Number(n) => Ok(n.clone()),
        _ => Err(format!("{path}.{key}: must be a number")),
    }
}

/// An exact integer view of a number, when it has one (integers, and floats
/// with no fractional part inside the i128 range).
fn as_int(n: &Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    let f = n.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 1.0e38).then_some(f as i128)
}

/// Compare two JSON numbers exactly where both are integral, else as floats.
fn cmp_num(a: &Number, b: &Number) -> std::cmp::Ordering {
    match (as_int(a), as_int(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
        }
    }
}

/// JSON equality as JSON Schema means it: 1 and 1.0 are the same number.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => cmp_num(x, y) == std::cmp::Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

impl Node {
    /// Compile a schema; `path` names where it sits in the tool spec.
    /// Compile a schema value (tests and callers that hold a `Value`).
    pub fn compile(schema: &Value, path: &str) -> Result<Node, String> {
        Node::compile_text(&schema.to_string(), path)
    }

    /// Compile a schema from its JSON text in one pass, without building a
    /// `Value` tree: keywords the validator does not use (descriptions,
    /// titles, defaults, examples) are skipped unread. Registering 10 000
    /// tools compiles 10 000 schemas, so this is the registration hot path.
    /// Errors name the keyword's path, e.g. `parameters.properties.n.type`.
    pub fn compile_text(text: &str, path: &str) -> Result<Node, String> {
        Node::compile_text_full(text, path).map(|(n, _)| n)
    }

    /// [`Node::compile_text`], also telling what the schema uses
    /// ([`Facts`]): whether the node decides alone, which draft, `format`.
    pub fn compile_text_full(text: &str, path: &str) -> Result<(Node, Facts), String> {
        FACTS.with(|f| {
            f.set(Facts {
                exact: true,
                ..Facts::default()
            })
        });
        let node = Node::compile_text_inner(text, path);
        let facts = FACTS.with(|f| f.replace(Facts::default()));
        Ok((node?, facts))
    }

    /// The `false` schema: nothing is valid.
    fn never() -> Node {
        Node {
            types: T_NEVER,
            ..Node::default()
        }
    }

    /// The node of a boolean schema.
    fn boolean(b: bool) -> Node {
        if b { Node::default() } else { Node::never() }
    }

    fn compile_text_inner(text: &str, path: &str) -> Result<Node, String> {
        let mut buf = String::with_capacity(path.len() + 32);
        buf.push_str(path);
        let mut de = serde_json::Deserializer::from_str(text);
        let out = NodeSeed(&mut buf, Pos::Root)
            .deserialize(&mut de)
            .and_then(|n| de.end().map(|()| n));
        match out {
            Ok(Parsed::Node(n)) => Ok(n),
            Ok(Parsed::Bool(b)) => Ok(Node::boolean(b)),
            Err(e) => Err(strip_position(e.to_string())),
        }
    }

    /// One keyword whose value the validator keeps (scalars and lists).
    fn keyword(&mut self, key: &str, v: Value, path: &str, st: &mut Pending) -> Result<(), String> {
        match key {
            "nullable" => st.nullable = v == Value::Bool(true),
            "required" => {
                let list = v
                    .as_array()
                    .ok_or_else(|| format!("{path}.required: must be an array of strings"))?;
                for item in list {
                    let s = item
                        .as_str()
                        .ok_or_else(|| format!("{path}.required: must be an array of strings"))?;
                    if self.required.iter().any(|r| r == s) {
                        // The meta-schema wants unique names: the crate judges.
                        hand_off();
                    }
                    self.required.push(s.to_string());
                }
            }
            "enum" => {
                let list = match v {
                    Value::Array(list) => list,
                    _ => return Err(format!("{path}.enum: must be an array")),
                };
                // An empty enum is a valid schema that no value satisfies.
                self.rare_mut().enum_values = Some(list);
            }
            "const" => self.rare_mut().const_value = Some(v),
            "minimum" => self.rare_mut().minimum = Some(as_num(&v, path, key)?),
            "maximum" => self.rare_mut().maximum = Some(as_num(&v, path, key)?),
            // Draft 6+: a number. Draft 4 / OpenAPI 3.0: a boolean that
            // makes minimum / maximum exclusive.
            "exclusiveMinimum" => st.excl_min = Some(v),
            "exclusiveMaximum" => st.excl_max = Some(v),
            "minLength" => self.rare_mut().min_length = Some(as_count(&v, path, key)?),
            "maxLength" => self.rare_mut().max_length = Some(as_count(&v, path, key)?),
            "minItems" => self.rare_mut().min_items = Some(as_count(&v, path, key)?),
            "maxItems" => self.rare_mut().max_items = Some(as_count(&v, path, key)?),
            "pattern" => {
                let s = v
                    .as_str()
                    .ok_or_else(|| format!("{path}.pattern: must be a string"))?;
                take_pattern(path)?;
                // ECMA-262 syntax, translated as the `jsonschema` crate does
                // (`\d` is ASCII digits, ...), so both run the same regex.
                let rust = jsonschema_regex::to_rust_regex(s).map_err(|()| {
                    format!("{path}.pattern: invalid regex: not an ECMA-262 regular expression")
                })?;
                match Regex::new(&rust) {
                    Ok(re) => self.rare_mut().pattern = Some(re),
                    // Look-around, back-references, ...: the crate's engine runs them.
                    Err(_) => hand_off(),
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// What needs every keyword seen first (`nullable`, boolean exclusive bounds).
    fn finish(mut self, path: &str, st: Pending) -> Result<Node, String> {
        if st.nullable && self.types != 0 {
            self.types |= T_NULL;
            note(|f| f.openapi = true);
        }
        if matches!(st.excl_min, Some(Value::Bool(_)))
            || matches!(st.excl_max, Some(Value::Bool(_)))
        {
            note(|f| f.openapi = true);
        }
        match st.excl_min {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => {
                let r = self.rare_mut();
                r.exclusive_minimum = r.minimum.take();
            }
            Some(v) => {
                self.rare_mut().exclusive_minimum = Some(as_num(&v, path, "exclusiveMinimum")?)
            }
        }
        match st.excl_max {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => {
                let r = self.rare_mut();
                r.exclusive_maximum = r.maximum.take();
            }
            Some(v) => {
                self.rare_mut().exclusive_maximum = Some(as_num(&v, path, "exclusiveMaximum")?)
            }
        }
        Ok(self)
    }

    fn rare(&self) -> &Rare {
        self.rare.as_deref().unwrap_or(&NO_RARE)
    }

    fn rare_mut(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Default::default)
    }

    /// `type` is `"object"` or absent (what tool parameters may be).
    pub fn is_object_or_untyped(&self) -> bool {
        self.types == 0 || self.types == T_OBJ
    }

    fn allows_null(&self) -> bool {
        self.types & T_NULL != 0
            || self.rare().any_of.iter().any(|s| s.allows_null())
            || self.rare().one_of.iter().any(|s| s.allows_null())
    }

    fn property(&self, name: &str) -> Option<&Node> {
        self.properties
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    /// Declared property names (for messages).
    pub fn property_names(&self) -> Vec<&str> {
        self.properties.iter().map(|(k, _)| k.as_str()).collect()
    }

    /// Repair `v` in place where the schema makes the intent unambiguous.
    /// Returns a description of each repair made. The walk visits each value
    /// once per schema branch it tries, never once per path through nested
    /// probes, and stops repairing after [`REPAIR_BUDGET`] node visits, so a
    /// deep or branchy schema costs bounded time (the validator then reports
    /// what is still wrong).
    pub fn coerce(&self, v: &mut Value, path: &str, notes: &mut Vec<String>) {
        let mut p = String::from(path);
        let mut budget = REPAIR_BUDGET;
        self.coerce_at(v, &mut p, notes, &mut budget);
    }

    /// `path` is a reusable buffer: children push onto it and truncate back,
    /// so the walk allocates nothing unless it has something to report.
    fn coerce_at(
        &self,
        v: &mut Value,
        path: &mut String,
        notes: &mut Vec<String>,
        budget: &mut usize,
    ) {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        // A union: if the value fails every branch, coerce it towards the first branch it then fits.
        let branches = if !self.rare().any_of.is_empty() {
            &self.rare().any_of
        } else {
            &self.rare().one_of
        };
        if !branches.is_empty() && !branches.iter().any(|b| b.is_valid(v)) {
            for b in branches {
                let mut candidate = v.clone();
                let mut n = Vec::new();
                b.coerce_at(&mut candidate, path, &mut n, budget);
                if b.is_valid(&candidate) {
                    *v = candidate;
                    notes.extend(n);
                    break;
                }
            }
        }
        let float_for_int = self.types & T_INT != 0
            && self.types & T_NUM == 0
            && matches!(v, Value::Number(n) if n.is_f64());
        if self.types != 0 && (float_for_int || !matches_type(self.types, v)) {
            if let Some(new) = self.coerce_scalar(v) {
                notes.push(format!(
                    "{path}: converted {} to {}",
                    value_kind(v),
                    value_kind(&new)
                ));
                *v = new;
            } else if let Some(item) = self.wrap_bare(v, path, notes, budget) {
                // Its item is repaired already: no second walk below.
                *v = Value::Array(vec![item]);
                return;
            }
        }
        match v {
            Value::Object(map) => {
                for (k, child) in map.iter_mut() {
                    let node = match (self.property(k), &self.additional) {
                        (Some(node), _) => node,
                        (None, Additional::Schema(node)) => node,
                        _ => continue,
                    };
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(k);
                    node.coerce_at(child, path, notes, budget);
                    path.truncate(len);
                }
            }
            Value::Array(items) => {
                if let Some(node) = &self.items {
                    for (i, child) in items.iter_mut().enumerate() {
                        let len = path.len();
                        let _ = std::fmt::Write::write_fmt(path, format_args!("[{i}]"));
                        node.coerce_at(child, path, notes, budget);
                        path.truncate(len);
                    }
                }
            }
            _ => {}
        }
    }

    /// A bare value where a list is expected: the repaired item of a one-item
    /// list, if the item then fits. The item is repaired once, here.
    fn wrap_bare(
        &self,
        v: &Value,
        path: &mut String,
        notes: &mut Vec<String>,
        budget: &mut usize,
    ) -> Option<Value> {
        if self.types & T_ARR == 0 || v.is_null() || v.is_array() {
            return None;
        }
        let mut item = v.clone();
        let mut n = Vec::new();
        if let Some(it) = &self.items {
            let len = path.len();
            path.push_str("[0]");
            it.coerce_at(&mut item, path, &mut n, budget);
            path.truncate(len);
            if !it.is_valid(&item) {
                return None;
            }
        }
        notes.push(format!("{path}: converted {} to array", value_kind(v)));
        notes.extend(n);
        Some(item)
    }

    fn coerce_scalar(&self, v: &Value) -> Option<Value> {
        let t = self.types;
        if let Value::String(s) = v {
            let trimmed = s.trim();
            if trimmed.eq_ignore_ascii_case("null") && t & T_NULL != 0 {
                return Some(Value::Null);
            }
            if t & (T_INT | T_NUM) != 0
                && let Ok(f) = trimmed.parse::<f64>()
            {
                // Never accept NaN or infinities, whatever their spelling.
                if f.is_finite() && !trimmed.is_empty() {
                    if f.fract() == 0.0 && f.abs() < 9.0e15 {
                        return Some(Value::from(f as i64));
                    }
                    if t & T_NUM != 0 {
                        return serde_json::Number::from_f64(f).map(Value::Number);
                    }
                }
            }
            if t & T_BOOL != 0 {
                if trimmed.eq_ignore_ascii_case("true") {
                    return Some(Value::Bool(true));
                }
                if trimmed.eq_ignore_ascii_case("false") {
                    return Some(Value::Bool(false));
                }
            }
            if t & (T_ARR | T_OBJ) != 0
                && (trimmed.starts_with('[') || trimmed.starts_with('{'))
                && let Ok(parsed) = serde_json::from_str::<Value>(trimmed)
                && ((parsed.is_array() && t & T_ARR != 0) || (parsed.is_object() && t & T_OBJ != 0))
            {
                return Some(parsed);
            }
        }
        if let Value::Number(n) = v {
            // 42.0 where an integer is expected.
            if t & T_INT != 0
                && t & T_NUM == 0
                && let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                return Some(Value::from(f as i64));
            }
        }
        None
    }

    pub fn is_valid(&self, v: &Value) -> bool {
        let mut errs = Vec::new();
        self.validate(v, "", &mut errs, 1);
        errs.is_empty()
    }

    /// Collect up to `limit` problems (each names its path).
    pub fn validate(&self, v: &Value, path: &str, errs: &mut Vec<String>, limit: usize) {
        let mut p = String::from(path);
        self.validate_at(v, &mut p, errs, limit);
    }

    fn validate_at(&self, v: &Value, path: &mut String, errs: &mut Vec<String>, limit: usize) {
        if errs.len() >= limit {
            return;
        }

        if self.types == T_NEVER {
            errs.push(format!(
                "{}: no value is allowed here (the schema is false)",
                at(path)
            ));
            return;
        }
        if self.types != 0 && !matches_type(self.types, v) {
            errs.push(format!(
                "{}: expected {}, got {} {}",
                at(path),
                type_names(self.types),
                value_kind(v),
                short(v)
            ));
            return;
        }
        if let Some(list) = &self.rare().enum_values
            && !list.iter().any(|e| json_eq(e, v))
        {
            errs.push(format!(
                "{}: must be one of {}, got {}",
                at(path),
                Value::Array(list.clone()),
                short(v)
            ));
        }
        if let Some(c) = &self.rare().const_value
            && !json_eq(c, v)
        {
            errs.push(format!("{}: must be {c}, got {}", at(path), short(v)));
        }
        match v {
            Value::Number(n) => {
                use std::cmp::Ordering::{Greater, Less};
                if let Some(m) = self
                    .rare()
                    .minimum
                    .as_ref()
                    .filter(|m| cmp_num(n, m) == Less)
                {
                    errs.push(format!("{}: must be >= {m}, got {n}", at(path)));
                }
                if let Some(m) = self
                    .rare()
                    .maximum
                    .as_ref()
                    .filter(|m| cmp_num(n, m) == Greater)
                {
                    errs.push(format!("{}: must be <= {m}, got {n}", at(path)));
                }
                if let Some(m) = self
                    .rare()
                    .exclusive_minimum
                    .as_ref()
                    .filter(|m| cmp_num(n, m) != Greater)
                {
                    errs.push(format!("{}: must be > {m}, got {n}", at(path)));
                }
                if let Some(m) = self
                    .rare()
                    .exclusive_maximum
                    .as_ref()
                    .filter(|m| cmp_num(n, m) != Less)
                {
                    errs.push(format!("{}: must be < {m}, got {n}", at(path)));
                }
            }
            Value::String(s) => {
                let needs_len =
                    self.rare().min_length.is_some() || self.rare().max_length.is_some();
                let len = if needs_len { s.chars().count() } else { 0 };
                if let Some(m) = self.rare().min_length.filter(|m| len < *m) {
                    errs.push(format!(
                        "{}: must be at least {m} characters long",
                        at(path)
                    ));
                }
                if let Some(m) = self.rare().max_length.filter(|m| len > *m) {
                    errs.push(format!(
                        "{}: must be at most {m} characters long, got {len}",
                        at(path)
                    ));
                }
                if let Some(re) = &self.rare().pattern
                    && !re.is_match(s)
                {
                    errs.push(format!(
                        "{}: must match the pattern {}",
                        at(path),
                        re.as_str()
                    ));
                }
            }
            Value::Array(items) => {
                if let Some(m) = self.rare().min_items.filter(|m| items.len() < *m) {
                    errs.push(format!(
                        "{}: must have at least {m} items, got {}",
                        at(path),
                        items.len()
                    ));
                }
                if let Some(m) = self.rare().max_items.filter(|m| items.len() > *m) {
                    errs.push(format!(
                        "{}: must have at most {m} items, got {}",
                        at(path),
                        items.len()
                    ));
                }
                if let Some(node) = &self.items {
                    for (i, item) in items.iter().enumerate() {
                        let len = path.len();
                        let _ = std::fmt::Write::write_fmt(path, format_args!("[{i}]"));
                        node.validate_at(item, path, errs, limit);
                        path.truncate(len);
                    }
                }
            }
            Value::Object(map) => self.validate_object(map, path, errs, limit),
            _ => {}
        }
        for s in &self.rare().all_of {
            s.validate_at(v, path, errs, limit);
        }
        if let Some(s) = &self.rare().not
            && s.is_valid(v)
        {
            errs.push(format!(
                "{}: must not match the schema under 'not'",
                at(path)
            ));
        }
        if !self.rare().any_of.is_empty() && !self.rare().any_of.iter().any(|s| s.is_valid(v)) {
            errs.push(format!(
                "{}: does not match any of the allowed forms",
                at(path)
            ));
        }
        if !self.rare().one_of.is_empty() {
            let n = self.rare().one_of.iter().filter(|s| s.is_valid(v)).count();
            if n != 1 {
                errs.push(format!(
                    "{}: must match exactly one of the allowed forms, matches {n}",
                    at(path)
                ));
            }
        }
    }

    fn validate_object(
        &self,
        map: &Map<String, Value>,
        path: &mut String,
        errs: &mut Vec<String>,
        limit: usize,
    ) {
        for r in &self.required {
            if !map.contains_key(r) {
                let at = if path.is_empty() {
                    String::new()
                } else {
                    format!(" in {}", at(path))
                };
                errs.push(format!("missing required property '{r}'{at}"));
            }
        }
        for (k, child) in map {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(k);
            if let Some(node) = self.property(k) {
                node.validate_at(child, path, errs, limit);
            } else {
                match &self.additional {
                    Additional::Any => {}
                    Additional::Deny => errs.push(format!(
                        "unexpected property '{}' (allowed: {})",
                        at(path),
                        allowed_list(&self.property_names())
                    )),
                    Additional::Schema(node) => node.validate_at(child, path, errs, limit),
                }
            }
            path.truncate(len);
        }
    }

    /// True when nothing can fail: no checks at all (lets dispatch skip the walk).
    pub fn is_trivial(&self) -> bool {
        self.types & !T_OBJ == 0
            && self.properties.is_empty()
            && self.required.is_empty()
            && matches!(self.additional, Additional::Any)
            && self.rare().any_of.is_empty()
            && self.rare().one_of.is_empty()
            && self.rare().all_of.is_empty()
            && self.rare().enum_values.is_none()
            && self.rare().const_value.is_none()
            && self.rare().not.is_none()
    }

    /// Whether the schema allows null anywhere at the top (used by repair of "null").
    pub fn nullable(&self) -> bool {
        self.allows_null()
    }
}

/// The path as errors show it: `arguments` for the root, and at most 120
/// bytes of a longer one (a model-written property name can be megabytes).
fn at(path: &str) -> &str {
    if path.is_empty() {
        "arguments"
    } else {
        let mut end = path.len().min(120);
        while !path.is_char_boundary(end) {
            end -= 1;
        }
        &path[..end]
    }
}

/// Allowed property names for an error: the first 20, then a count.
fn allowed_list(names: &[&str]) -> String {
    let mut out = names
        .iter()
        .take(20)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > 20 {
        out.push_str(&format!(", ... ({} in all)", names.len()));
    }
    out
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// Keywords that wait for the whole object ([`Node::finish`]).
#[derive(Default)]
struct Pending {
    nullable: bool,
    excl_min: Option<Value>,
    excl_max: Option<Value>,
}

/// A schema position: an object compiles to a node; `true`/`false` are the
/// boolean schemas (`additionalProperties: false`, `items: true`).
/// Returned once per position and moved into its parent: boxing the node
/// would cost an allocation per schema for nothing.
#[allow(clippy::large_enum_variant)]
enum Parsed {
    Node(Node),
    Bool(bool),
}

/// serde_json appends " at line L column C" to errors raised by a visitor,
/// and words a wrong type as "invalid type: X, expected <our message>"; ours
/// already name the schema path, so only that part is kept.
fn strip_position(mut msg: String) -> String {
    if let Some(i) = msg.rfind(" at line ") {
        msg.truncate(i);
    }
    if msg.starts_with("invalid type: ")
        && let Some(i) = msg.find(", expected ")
    {
        msg.drain(..i + ", expected ".len());
    }
    msg
}

/// Where a schema sits: the root (where `$schema` counts), `items` (where
/// draft-07's array form is a schema too), or anywhere else.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pos {
    Root,
    Items,
    Other,
}

/// Compiles the schema at one position; `.0` is its path (grown and cut
/// back as the walk goes down, so no path text is built unless an error is).
struct NodeSeed<'p>(&'p mut String, Pos);

impl<'de> DeserializeSeed<'de> for NodeSeed<'_> {
    type Value = Parsed;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Parsed, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_> {
    type Value = Parsed;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let path = &*self.0;
        if path.ends_with(".items") {
            write!(f, "{path}: must be a schema object")
        } else if path.ends_with(".additionalProperties") {
            write!(f, "{path}: must be a boolean or a schema")
        } else {
            write!(f, "{path}: a schema must be a JSON object")
        }
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Parsed, E> {
        Ok(Parsed::Bool(b))
    }

    /// `items` as an array (draft-07 tuples; refused by 2020-12): the crate
    /// decides, and repair leaves the items alone.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Parsed, A::Error> {
        if self.1 != Pos::Items {
            return Err(de::Error::invalid_type(de::Unexpected::Seq, &self));
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        hand_off();
        Ok(Parsed::Bool(true))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parsed, A::Error> {
        let (path, pos) = (self.0, self.1);
        let mut n = Node::default();
        let mut st = Pending::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let mark = path.len();
            match &*key {
                "properties" => {
                    path.push_str(".properties");
                    n.properties = map.next_value_seed(PropsSeed(path))?;
                }
                "additionalProperties" => {
                    path.push_str(".additionalProperties");
                    n.additional = match map.next_value_seed(NodeSeed(path, Pos::Other))? {
                        Parsed::Bool(true) => Additional::Any,
                        Parsed::Bool(false) => Additional::Deny,
                        Parsed::Node(c) => Additional::Schema(Box::new(c)),
                    };
                }
                "items" => {
                    path.push_str(".items");
                    n.items = Some(Box::new(
                        match map.next_value_seed(NodeSeed(path, Pos::Items))? {
                            Parsed::Node(c) => c,
                            Parsed::Bool(b) => Node::boolean(b),
                        },
                    ));
                }
                "not" => {
                    path.push_str(".not");
                    let c = match map.next_value_seed(NodeSeed(path, Pos::Other))? {
                        Parsed::Node(c) => c,
                        Parsed::Bool(b) => Node::boolean(b),
                    };
                    n.rare_mut().not = Some(Box::new(c));
                }
                "$schema" => {
                    let v = map.next_value::<Value>()?;
                    match (pos, v) {
                        (Pos::Root, Value::String(uri)) => {
                            let dialect = match jsonschema::Draft::from_schema_uri(&uri) {
                                jsonschema::Draft::Draft202012 => Dialect::Draft202012,
                                jsonschema::Draft::Draft7 => Dialect::Draft7,
                                _ => Dialect::Other,
                            };
                            note(|f| f.dialect = dialect);
                        }
                        // In a subschema (an embedded resource) or not a string.
                        _ => hand_off(),
                    }
                }
                "format" => {
                    if !matches!(map.next_value::<Kind>()?, Kind::Str) {
                        hand_off();
                    }
                    note(|f| f.format = true);
                }
                // Annotations: no effect on validity, but the meta-schema
                // gives their type; a wrong one makes the schema invalid,
                // which the crate reports.
                k @ ("title" | "description" | "$comment" | "examples" | "readOnly"
                | "writeOnly" | "deprecated") => {
                    let kind = map.next_value::<Kind>()?;
                    let fits = match k {
                        "examples" => matches!(kind, Kind::Array),
                        "readOnly" | "writeOnly" | "deprecated" => matches!(kind, Kind::Bool),
                        _ => matches!(kind, Kind::Str),
                    };
                    if !fits {
                        hand_off();
                    }
                }
                k @ ("anyOf" | "oneOf" | "allOf") => {
                    path.push('.');
                    path.push_str(k);
                    let nodes = map.next_value_seed(ListSeed(path))?;
                    if nodes.is_empty() {
                        // The meta-schema wants at least one: the crate reports it.
                        hand_off();
                    }
                    match k {
                        "anyOf" => n.rare_mut().any_of = nodes,
                        "oneOf" => n.rare_mut().one_of = nodes,
                        _ => n.rare_mut().all_of = nodes,
                    }
                }
                "type" => {
                    // Read in place: every property has one, so no `Value`.
                    n.types = match map.next_value::<TypeWord>()? {
                        TypeWord::Bits(b) => b,
                        TypeWord::Odd(b) => {
                            // `[]` or a repeated name: invalid for the meta-schema.
                            hand_off();
                            b
                        }
                        TypeWord::Unknown(t) => {
                            return Err(de::Error::custom(format!(
                                "{path}.type: unknown type '{t}'"
                            )));
                        }
                        TypeWord::NotStrings => {
                            return Err(de::Error::custom(format!(
                                "{path}.type: entries must be strings"
                            )));
                        }
                        TypeWord::Invalid => {
                            return Err(de::Error::custom(format!(
                                "{path}.type: must be a string or an array of strings"
                            )));
                        }
                    };
                }
                k @ ("nullable" | "required" | "enum" | "const" | "minimum" | "maximum"
                | "exclusiveMinimum" | "exclusiveMaximum" | "minLength" | "maxLength"
                | "minItems" | "maxItems" | "pattern") => {
                    let v: Value = map.next_value()?;
                    n.keyword(k, v, path, &mut st).map_err(de::Error::custom)?;
                }
                k => {
                    if beyond_node(k) {
                        hand_off();
                    }
                    map.next_value::<IgnoredAny>()?;
                }
            }
            path.truncate(mark);
        }
        n.finish(path, st)
            .map(Parsed::Node)
            .map_err(de::Error::custom)
    }
}

/// An annotation's JSON type, read without building a `Value` or copying
/// its text (descriptions are most of a schema's bytes).
enum Kind {
    Str,
    Array,
    Bool,
    Other,
}

impl<'de> serde::Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Kind;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Kind, E> {
                Ok(Kind::Str)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Kind, E> {
                Ok(Kind::Bool)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Kind::Array)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Kind, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Kind::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// A schema's `type`, read without building a `Value`.
enum TypeWord {
    Bits(u8),
    /// Valid names, but none or one repeated (the meta-schema refuses).
    Odd(u8),
    Unknown(String),
    NotStrings,
    Invalid,
}

impl<'de> serde::Deserialize<'de> for TypeWord {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TypeWord;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a type name or a list of them")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<TypeWord, E> {
                Ok(type_bit(s).map_or_else(|| TypeWord::Unknown(s.to_string()), TypeWord::Bits))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TypeWord, A::Error> {
                let (mut bits, mut odd, mut n) = (0u8, false, 0usize);
                let mut out = None;
                while let Some(item) = seq.next_element::<Value>()? {
                    n += 1;
                    if out.is_some() {
                        continue;
                    }
                    match item.as_str() {
                        Some(s) => match type_bit(s) {
                            Some(b) => {
                                odd |= bits & b != 0;
                                bits |= b;
                            }
                            None => out = Some(TypeWord::Unknown(s.to_string())),
                        },
                        None => out = Some(TypeWord::NotStrings),
                    }
                }
                Ok(out.unwrap_or(if odd || n == 0 {
                    TypeWord::Odd(bits)
                } else {
                    TypeWord::Bits(bits)
                }))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<TypeWord, E> {
                Ok(TypeWord::Invalid)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<TypeWord, E> {
                Ok(TypeWord::Invalid)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<TypeWord, E> {
                Ok(TypeWord::Invalid)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<TypeWord, E> {
                Ok(TypeWord::Invalid)
            }
            fn visit_unit<E: de::Error>(self) -> Result<TypeWord, E> {
                Ok(TypeWord::Invalid)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<TypeWord, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(TypeWord::Invalid)
            }
        }
        d.deserialize_any(V)
    }
}

/// `properties`: an object of schemas, kept in the order given.
struct PropsSeed<'p>(&'p mut String);

impl<'de> DeserializeSeed<'de> for PropsSeed<'_> {
    type Value = Vec<(String, Node)>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PropsSeed<'_> {
    type Value = Vec<(String, Node)>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}: must be an object", self.0)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let path = self.0;
        let mut out = Vec::with_capacity(map.size_hint().unwrap_or(4));
        while let Some(key) = map.next_key::<String>()? {
            let mark = path.len();
            path.push('.');
            path.push_str(&key);
            let node = match map.next_value_seed(NodeSeed(path, Pos::Other))? {
                Parsed::Node(c) => c,
                Parsed::Bool(b) => Node::boolean(b),
            };
            path.truncate(mark);
            out.push((key, node));
        }
        Ok(out)
    }
}

/// `anyOf` / `oneOf` / `allOf`: an array of schemas.
struct ListSeed<'p>(&'p mut String);

impl<'de> DeserializeSeed<'de> for ListSeed<'_> {
    type Value = Vec<Node>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = Vec<Node>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}: must be an array of schemas", self.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        use std::fmt::Write;
        let path = self.0;
        let mut out = Vec::new();
        loop {
            let mark = path.len();
            let _ = write!(path, "[{}]", out.len());
            let Some(p) = seq.next_element_seed(NodeSeed(path, Pos::Other))? else {
                path.truncate(mark);
                break;
            };
            path.truncate(mark);
            out.push(match p {
                Parsed::Node(c) => c,
                Parsed::Bool(b) => Node::boolean(b),
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(s: Value) -> Node {
        Node::compile(&s, "parameters").unwrap()
    }

    fn fix(n: &Node, mut v: Value) -> Value {
        n.coerce(&mut v, "", &mut Vec::new());
        v
    }

    #[test]
    fn repairs_unambiguous_types() {
        let n = node(json!({"type":"object","properties":{
            "i":{"type":"integer"},"f":{"type":"number"},"b":{"type":"boolean"},
            "a":{"type":"array","items":{"type":"string"}},"o":{"type":"object"},
            "n":{"type":["integer","null"]}}}));
        let v = fix(
            &n,
            json!({"i":"42","f":"1.5","b":"TRUE","a":"[\"x\"]","o":"{\"k\":1}","n":"null"}),
        );
        assert_eq!(
            v,
            json!({"i":42,"f":1.5,"b":true,"a":["x"],"o":{"k":1},"n":null})
        );
        let v = fix(&n, json!({"a":"solo","i":42.0}));
        assert_eq!(v, json!({"a":["solo"],"i":42}));
        assert!(n.is_valid(&v));
    }

    #[test]
    fn never_accepts_nan_or_infinity() {
        let n = node(json!({"type":"object","properties":{"x":{"type":"number"}}}));
        for bad in ["NaN", "nan", "inf", "-Infinity", "infinity", "1e999", ""] {
            let v = fix(&n, json!({ "x": bad }));
            assert_eq!(v["x"], json!(bad), "{bad} must stay a string");
            assert!(!n.is_valid(&v));
        }
    }

    #[test]
    fn fractional_integer_is_not_repaired() {
        let n = node(json!({"type":"object","properties":{"x":{"type":"integer"}}}));
        let v = fix(&n, json!({"x":"4.5"}));
        assert_eq!(v["x"], json!("4.5"));
        let mut errs = Vec::new();
        n.validate(&v, "", &mut errs, 10);
        assert_eq!(
            errs,
            vec!["x: expected integer, got string \"4.5\"".to_string()]
        );
    }

    #[test]
    fn reports_every_problem_with_paths() {
        let n = node(
            json!({"type":"object","additionalProperties":false,"required":["path"],
            "properties":{"path":{"type":"string"},"mode":{"enum":["r","w"]},
            "n":{"type":"integer","minimum":1},"tags":{"type":"array","items":{"type":"string"},"maxItems":2}}}),
        );
        let mut errs = Vec::new();
        n.validate(
            &json!({"mode":"x","n":0,"tags":["a",1,"c"],"extra":true}),
            "",
            &mut errs,
            20,
        );
        let text = errs.join("\n");
        assert!(text.contains("missing required property 'path'"), "{text}");
        assert!(
            text.contains("mode: must be one of [\"r\",\"w\"]"),
            "{text}"
        );
        assert!(text.contains("n: must be >= 1"), "{text}");
        assert!(text.contains("tags: must have at most 2 items"), "{text}");
        assert!(
            text.contains("tags[1]: expected string, got integer 1"),
            "{text}"
        );
        assert!(text.contains("unexpected property 'extra'"), "{text}");
    }

    #[test]
    fn nodes_stay_small() {
        // Tens of thousands live in a big registry; the rare keywords are boxed.
        assert!(
            std::mem::size_of::<Node>() <= 128,
            "{}",
            std::mem::size_of::<Node>()
        );
    }

    #[test]
    fn bad_schemas_name_the_field() {
        let e = Node::compile(
            &json!({"type":"object","properties":{"x":{"type":"strng"}}}),
            "schema.parameters",
        )
        .unwrap_err();
        assert_eq!(
            e,
            "schema.parameters.properties.x.type: unknown type 'strng'"
        );
        let e = Node::compile(&json!({"type":"object","required":"x"}), "p").unwrap_err();
        assert_eq!(e, "p.required: must be an array of strings");
        let e = Node::compile(&json!({"pattern":"("}), "p").unwrap_err();
        assert!(e.starts_with("p.pattern: invalid regex"), "{e}");
        // Wrong JSON types at structural keywords, deep in the tree.
        let cases = [
            (json!({"properties": []}), "p.properties: must be an object"),
            (json!({"items": 3}), "p.items: must be a schema object"),
            (json!({"anyOf": {}}), "p.anyOf: must be an array of schemas"),
            (
                json!({"additionalProperties": "no"}),
                "p.additionalProperties: must be a boolean or a schema",
            ),
            (
                json!({"properties": {"a": {"items": {"oneOf": [5]}}}}),
                "p.properties.a.items.oneOf[0]: a schema must be a JSON object",
            ),
            (json!(7), "p: a schema must be a JSON object"),
        ];
        for (schema, want) in cases {
            assert_eq!(Node::compile(&schema, "p").unwrap_err(), want, "{schema}");
        }
        // Annotations are skipped; one of the wrong type (an invalid
        // schema) goes to the full validator, which reports it.
        assert!(Node::compile(&json!({"description": {"x": [1]}, "examples": [[]]}), "p").is_ok());
    }

    fn facts(s: Value) -> Facts {
        Node::compile_text_full(&s.to_string(), "p").unwrap().1
    }

    #[test]
    fn facts_say_who_decides() {
        let plain = facts(json!({"type": "object", "title": "T", "description": "d",
            "properties": {"a": {"type": "string", "examples": ["x"], "x-vendor": 1}}}));
        assert!(plain.exact && !plain.format && !plain.openapi);
        assert_eq!(plain.dialect, Dialect::Default);
        for beyond in [
            json!({"properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": true}}),
            json!({"properties": {"a": {"items": [true]}}}),
            json!({"description": 5}),
            json!({"type": ["string", "string"]}),
            json!({"required": ["a", "a"]}),
            json!({"anyOf": []}),
            json!({"properties": {"a": {"pattern": "(?=a)"}}}),
            json!({"properties": {"a": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}}),
        ] {
            assert!(!facts(beyond.clone()).exact, "{beyond}");
        }
        let f = facts(json!({"$schema": "http://json-schema.org/draft-07/schema#",
            "properties": {"d": {"format": "date", "nullable": true, "type": "string"}}}));
        assert!(f.exact && f.format && f.openapi);
        assert_eq!(f.dialect, Dialect::Draft7);
        let f = facts(json!({"$schema": "https://json-schema.org/draft/2019-09/schema"}));
        assert_eq!(f.dialect, Dialect::Other);
    }

    #[test]
    fn false_schemas_refuse_every_value() {
        let n =
            node(json!({"type": "object", "properties": {"a": false}, "not": {"required": ["b"]}}));
        assert!(n.is_valid(&json!({})));
        let mut errs = Vec::new();
        n.validate(&json!({"a": 1, "b": 2}), "", &mut errs, 10);
        assert_eq!(
            errs,
            vec![
                "a: no value is allowed here (the schema is false)".to_string(),
                "arguments: must not match the schema under 'not'".to_string()
            ]
        );
    }

    #[test]
    fn union_branches_are_repaired() {
        let n = node(
            json!({"type":"object","properties":{"x":{"anyOf":[{"type":"integer"},{"type":"array"}]}}}),
        );
        assert_eq!(fix(&n, json!({"x":"7"})), json!({"x":7}));
    }
}
