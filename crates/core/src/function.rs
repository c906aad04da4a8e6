//! The `schema` of a tool spec (an OpenAI function, bare or wrapped in
//! `{"type":"function","function":{..}}`), read in the same pass as the
//! rest of the spec.
//!
//! Why its own reader: bulk registration of 10 000 tools must cost about
//! what reading their JSON costs. Reading the function as a raw value and
//! parsing it again (and then its parameters again) scanned each schema
//! three times; this visitor keeps only the parameters' raw text, once.
//! Problems in the function's shape are recorded, not raised, so that the
//! registration reports them as invalid specs (not as malformed JSON) with
//! the same messages as before.

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;

/// The parts of a spec's `schema` the registry keeps.
#[derive(Debug, Default)]
pub struct FunctionParts {
    pub name: Option<String>,
    pub description: Option<String>,
    /// The parameters schema as written (`None`: absent or null).
    pub parameters: Option<Box<RawValue>>,
    /// Bytes of the function's text the registry keeps (for
    /// `limits.max_schema_bytes`): the parameters and the description.
    pub bytes: usize,
    /// The first problem in the function's shape, as a registration error.
    pub problem: Option<String>,
}

impl FunctionParts {
    fn flag(&mut self, msg: impl Into<String>) {
        if self.problem.is_none() {
            self.problem = Some(msg.into());
        }
    }
}

impl<'de> Deserialize<'de> for FunctionParts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PartsVisitor { nested: false })
    }
}

/// `nested`: reading the `function` of a wrapper.
struct PartsVisitor {
    nested: bool,
}

const NOT_OBJECT: &str = "tool spec: schema: must be an object (an OpenAI function)";
const FUNCTION_NOT_OBJECT: &str = "tool spec: schema.function: must be an object";

impl PartsVisitor {
    fn not_object(&self) -> FunctionParts {
        let mut p = FunctionParts::default();
        p.flag(if self.nested {
            FUNCTION_NOT_OBJECT
        } else {
            NOT_OBJECT
        });
        p
    }
}

/// A string (`Ok(Some)`), null (`Ok(None)`) or, for any other JSON value
/// (consumed), `Err(())`.
struct MaybeStr<'de>(Result<Option<Cow<'de, str>>, ()>);

impl<'de> Deserialize<'de> for MaybeStr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MaybeStr<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(MaybeStr(Ok(Some(Cow::Borrowed(s)))))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(MaybeStr(Ok(Some(Cow::Owned(s.to_owned())))))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(MaybeStr(Err(())))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(MaybeStr(Err(())))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(MaybeStr(Err(())))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(MaybeStr(Err(())))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(MaybeStr(Ok(None)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MaybeStr(Err(())))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(MaybeStr(Err(())))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Visitor<'de> for PartsVisitor {
    type Value = FunctionParts;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an OpenAI function object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FunctionParts, A::Error> {
        let mut p = FunctionParts::default();
        let mut type_function = false;
        let mut inner: Option<FunctionParts> = None;
        // The first key that is not a function field: an error unless this
        // turns out to be a wrapper.
        let mut unknown: Option<String> = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match &*key {
                "name" => match map.next_value::<MaybeStr<'de>>()?.0 {
                    Ok(Some(s)) => p.name = Some(s.into_owned()),
                    _ => p.flag("tool spec: schema.name: must be a string"),
                },
                "description" => match map.next_value::<MaybeStr<'de>>()?.0 {
                    Ok(d) => {
                        p.bytes += d.as_ref().map_or(0, |d| d.len());
                        p.description = d.map(Cow::into_owned);
                    }
                    Err(()) => p.flag("tool spec: schema.description: must be a string"),
                },
                "parameters" => {
                    let raw: Box<RawValue> = map.next_value()?;
                    let text = raw.get();
                    p.bytes += text.len();
                    if text == "null" {
                        p.parameters = None;
                    } else if text.starts_with('{') {
                        p.parameters = Some(raw);
                    } else {
                        p.flag("tool spec: schema.parameters: must be a JSON Schema object");
                    }
                }
                "strict" => {
                    map.next_value::<IgnoredAny>()?;
                }
                "function" if !self.nested => {
                    inner = Some(map.next_value_seed(Nested)?);
                }
                "type" if !self.nested => {
                    let t = map.next_value::<MaybeStr<'de>>()?.0;
                    type_function = matches!(t, Ok(Some(ref t)) if t == "function");
                    if !type_function && unknown.is_none() {
                        unknown = Some("type".into());
                    }
                }
                other => {
                    if unknown.is_none() {
                        unknown = Some(other.to_owned());
                    }
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        match inner {
            // A wrapper: the function inside is what counts.
            Some(f) if type_function => Ok(f),
            _ => {
                if let Some(k) = unknown.or_else(|| type_function.then(|| "type".into())) {
                    p.flag(format!(
                        "tool spec: schema.{k}: unknown field (expected name, description, parameters)"
                    ));
                } else if inner.is_some() {
                    p.flag("tool spec: schema.function: unknown field (expected name, description, parameters)");
                }
                Ok(p)
            }
        }
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<FunctionParts, E> {
        Ok(self.not_object())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<FunctionParts, E> {
        Ok(self.not_object())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<FunctionParts, E> {
        Ok(self.not_object())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<FunctionParts, E> {
        Ok(self.not_object())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<FunctionParts, E> {
        Ok(self.not_object())
    }
    fn visit_unit<E: de::Error>(self) -> Result<FunctionParts, E> {
        Ok(self.not_object())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<FunctionParts, A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(self.not_object())
    }
}

/// The `function` of a wrapper.
struct Nested;

impl<'de> de::DeserializeSeed<'de> for Nested {
    type Value = FunctionParts;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<FunctionParts, D::Error> {
        d.deserialize_any(PartsVisitor { nested: true })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(s: &str) -> FunctionParts {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn bare_and_wrapped_functions_read_the_same() {
        let bare = parts(r#"{"name":"t","description":"d","parameters":{"type":"object"}}"#);
        let wrapped = parts(
            r#"{"type":"function","function":{"name":"t","description":"d","parameters":{"type":"object"}}}"#,
        );
        for p in [bare, wrapped] {
            assert_eq!(p.name.as_deref(), Some("t"));
            assert_eq!(p.description.as_deref(), Some("d"));
            assert_eq!(p.parameters.unwrap().get(), r#"{"type":"object"}"#);
            assert!(p.problem.is_none());
        }
    }

    #[test]
    fn shape_problems_are_recorded_with_their_field() {
        let cases = [
            ("5", NOT_OBJECT.to_string()),
            (
                r#"{"type":"function","function":5}"#,
                FUNCTION_NOT_OBJECT.to_string(),
            ),
            (
                r#"{"name":5}"#,
                "tool spec: schema.name: must be a string".into(),
            ),
            (
                r#"{"description":[1]}"#,
                "tool spec: schema.description: must be a string".into(),
            ),
            (
                r#"{"parameters":"x"}"#,
                "tool spec: schema.parameters: must be a JSON Schema object".into(),
            ),
            (
                r#"{"name":"t","extra":1}"#,
                "tool spec: schema.extra: unknown field (expected name, description, parameters)"
                    .into(),
            ),
            (
                r#"{"type":"object"}"#,
                "tool spec: schema.type: unknown field (expected name, description, parameters)"
                    .into(),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(
                parts(text).problem.as_deref(),
                Some(want.as_str()),
                "{text}"
            );
        }
        assert!(
            parts(r#"{"parameters":null,"strict":true}"#)
                .problem
                .is_none()
        );
    }
}
