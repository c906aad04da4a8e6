//! `dispatch.repair` and `dispatch.formats` as dispatch applies them
//! (issue 30, item 11): the core's config decides, for every tool,
//! whichever way it was registered.

use hermes_core::config::{AvailabilityConfig, DispatchConfig, Formats, LimitsConfig};
use hermes_core::dispatch::{CallContext, dispatch_sync};
use hermes_core::registry::{Compile, build_entry_with, parse_spec};
use hermes_core::{Blocking, BlockingTool, Core, RunCtx, ToolOutput};
use serde_json::{Value, json};
use std::sync::Arc;

struct Echo;

impl BlockingTool for Echo {
    fn run(&self, args: Value, _: &RunCtx) -> ToolOutput {
        ToolOutput::json(&args)
    }
}

fn core_with(dispatch: DispatchConfig, compile: Compile, params: &Value) -> Arc<Core> {
    let core = Core::new(
        dispatch,
        &AvailabilityConfig::default(),
        LimitsConfig::default(),
    )
    .unwrap();
    let spec =
        json!({"name": "t", "toolset": "s", "schema": {"description": "t", "parameters": params}});
    let entry = build_entry_with(
        parse_spec(&spec.to_string()).unwrap(),
        Arc::new(Blocking(Arc::new(Echo))),
        None,
        compile,
    )
    .unwrap();
    core.register(entry, false).unwrap();
    core
}

fn call(core: &Core, args: &str) -> Value {
    serde_json::from_str(&dispatch_sync(core, "t", args, CallContext::default()).unwrap()).unwrap()
}

#[test]
fn repair_false_validates_arguments_as_written() {
    let params = json!({"type": "object", "properties": {
        "n": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}});
    for compile in [Compile::OnFirstUse, Compile::AtRegistration] {
        let on = core_with(DispatchConfig::default(), compile, &params);
        assert_eq!(
            call(&on, r#"{"n":"5","tags":"x"}"#),
            json!({"n": 5, "tags": ["x"]})
        );
        assert_eq!(call(&on, r#""{\"n\":5}""#), json!({"n": 5}));
        let off = core_with(
            DispatchConfig {
                repair: false,
                ..DispatchConfig::default()
            },
            compile,
            &params,
        );
        let e = call(&off, r#"{"n":"5"}"#);
        assert!(
            e["error"]
                .as_str()
                .is_some_and(|m| m.contains("n: expected integer")),
            "{e}"
        );
        let e = call(&off, r#"{"tags":"x"}"#);
        assert!(
            e["error"].as_str().is_some_and(|m| m.contains("tags: ")),
            "{e}"
        );
        let e = call(&off, r#""{\"n\":5}""#);
        assert!(
            e["error"].is_string(),
            "double-encoded arguments are not unwrapped: {e}"
        );
        assert_eq!(
            call(&off, r#"{"n":5,"tags":["x"]}"#),
            json!({"n": 5, "tags": ["x"]})
        );
    }
}

#[test]
fn formats_follow_the_config_whenever_the_schema_compiled() {
    let params =
        json!({"type": "object", "properties": {"d": {"type": "string", "format": "date"}}});
    for compile in [Compile::OnFirstUse, Compile::AtRegistration] {
        let plain = core_with(DispatchConfig::default(), compile, &params);
        assert_eq!(
            call(&plain, r#"{"d":"tomorrow"}"#),
            json!({"d": "tomorrow"})
        );
        let strict = core_with(
            DispatchConfig {
                formats: Formats::Assert,
                ..DispatchConfig::default()
            },
            compile,
            &params,
        );
        let e = call(&strict, r#"{"d":"tomorrow"}"#);
        assert!(
            e["error"].as_str().is_some_and(|m| m.contains("d: ")),
            "{e}"
        );
        assert_eq!(
            call(&strict, r#"{"d":"2026-11-23"}"#),
            json!({"d": "2026-11-23"})
        );
    }
}

#[test]
fn the_config_keys_parse() {
    let c: DispatchConfig =
        serde_json::from_str(r#"{"repair": false, "formats": "annotate"}"#).unwrap();
    assert!(!c.repair);
    assert_eq!(c.formats, Formats::Annotate);
    let d = DispatchConfig::default();
    assert!(d.repair);
    assert_eq!(d.formats, Formats::Draft);
    assert!(serde_json::from_str::<DispatchConfig>(r#"{"formats": "sometimes"}"#).is_err());
}
