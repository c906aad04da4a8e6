//! Registry, toolsets, availability and definitions, driven through the C API.

use crate::common::*;
use hermes_tools::Status;
use hermes_tools::ffi::api::*;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

const P0: &str = r#"{"type":"object","properties":{}}"#;

const AT_REGISTRATION: &str = r#"{"dispatch":{"compile_schemas":"at_registration"}}"#;

#[test]
fn names_and_specs_are_validated_with_the_field_named() {
    let rt = new_rt(AT_REGISTRATION);
    let bad = [
        (
            r#"{"name":"has space","toolset":"t","schema":{}}"#,
            Status::InvalidArgument,
            "not a valid name",
        ),
        (
            &*format!(
                r#"{{"name":"{}","toolset":"t","schema":{{}}}}"#,
                "x".repeat(65)
            ),
            Status::InvalidArgument,
            "not a valid name",
        ),
        (
            r#"{"name":"ok","toolset":"t","schema":{"parameters":{"type":"array"}}}"#,
            Status::InvalidArgument,
            "schema.parameters.type",
        ),
        (
            r#"{"name":"ok","toolset":"t","schema":{"parameters":{"properties":{"a":{"type":"strng"}}}}}"#,
            Status::InvalidArgument,
            "schema.parameters.properties.a.type",
        ),
        (
            r#"{"name":"ok","toolset":"t","schema":{"name":"other"}}"#,
            Status::InvalidArgument,
            "schema.name",
        ),
        (
            r#"{"name":"ok","toolset":"t","schema":{},"colour":1}"#,
            Status::InvalidJson,
            "colour",
        ),
        (
            r#"{"name":"ok","toolset":"t"}"#,
            Status::InvalidJson,
            "schema",
        ),
        (
            r#"{"name":"ok","toolset":"t","schema":{},"max_result_size_chars":0}"#,
            Status::InvalidArgument,
            "max_result_size_chars",
        ),
        ("not json", Status::InvalidJson, "line 1"),
    ];
    for (s, status, needle) in bad {
        let (st, msg) = register(&rt, s, echo, None, std::ptr::null_mut()).unwrap_err();
        assert_eq!(st, status, "{s}: {msg}");
        assert!(
            msg.contains(needle),
            "{s}: message {msg:?} should mention {needle}"
        );
    }
    // The wrapped OpenAI form is accepted.
    add(
        &rt,
        r#"{"name":"w","toolset":"t","schema":{"type":"function","function":{"name":"w","description":"d","parameters":{"type":"object"}}}}"#,
        echo,
    );
    assert_eq!(def_names(&rt, ""), vec!["w"]);
}

#[test]
fn conflicts_override_replace_and_generation() {
    let rt = new_rt("{}");
    let g0 = unsafe { ht_runtime_generation(rt.0) };
    add(&rt, &spec("a", "one", P0), echo);
    let g1 = unsafe { ht_runtime_generation(rt.0) };
    assert!(g1 > g0);
    let (st, msg) =
        register(&rt, &spec("a", "two", P0), echo, None, std::ptr::null_mut()).unwrap_err();
    assert_eq!(st, Status::Conflict);
    assert!(
        msg.contains("toolset 'one'") && msg.contains("override"),
        "{msg}"
    );
    assert_eq!(
        unsafe { ht_runtime_generation(rt.0) },
        g1,
        "a refused registration changes nothing"
    );
    add(&rt, &spec("a", "one", P0), echo);
    let g2 = unsafe { ht_runtime_generation(rt.0) };
    assert!(g2 > g1, "same-toolset re-registration replaces");
    let ov = r#"{"name":"a","toolset":"two","override":true,"schema":{"description":"new"}}"#;
    register(&rt, ov, echo, None, std::ptr::null_mut()).unwrap();
    let d = json(&definitions(&rt, "").unwrap());
    assert_eq!(d[0]["function"]["description"], "new");
    let name = "a";
    let mut err = std::ptr::null_mut();
    assert_eq!(
        unsafe { ht_runtime_deregister_tool(rt.0, name.as_ptr() as *const c_char, 1, &mut err) },
        Status::Ok
    );
    assert_eq!(
        unsafe { ht_runtime_deregister_tool(rt.0, name.as_ptr() as *const c_char, 1, &mut err) },
        Status::NotFound
    );
    assert!(err_text(err).contains("no tool named 'a'"));
    assert!(def_names(&rt, "").is_empty());
}

static FREED: AtomicUsize = AtomicUsize::new(0);
unsafe extern "C" fn count_free(_: *mut c_void) {
    FREED.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn free_functions_run_exactly_once_and_only_after_success() {
    let rt = new_rt("{}");
    let reg = |s: &str| {
        let mut err = std::ptr::null_mut();
        let st = unsafe {
            ht_runtime_register_tool(
                rt.0,
                s.as_ptr() as *const c_char,
                s.len(),
                Some(echo),
                None,
                std::ptr::null_mut(),
                Some(count_free),
                &mut err,
            )
        };
        err_text(err);
        st
    };
    assert_eq!(reg(&spec("f1", "x", P0)), Status::Ok);
    assert_eq!(reg(&spec("f1", "y", P0)), Status::Conflict);
    assert_eq!(reg("{bad"), Status::InvalidJson);
    assert_eq!(reg(&spec("f2", "x", P0)), Status::Ok);
    assert_eq!(reg(&spec("f2", "x", P0)), Status::Ok); // replaces: old user_data freed
    let name = "f1";
    unsafe {
        ht_runtime_deregister_tool(
            rt.0,
            name.as_ptr() as *const c_char,
            2,
            std::ptr::null_mut(),
        )
    };
    drop(rt); // ht_runtime_free: everything left is freed before it returns
    assert_eq!(FREED.load(Ordering::SeqCst), 3);
}

#[test]
fn toolsets_resolve_includes_presets_legacy_aliases_and_report_cycles() {
    let rt = new_rt("{}");
    for (n, ts) in [
        ("terminal", "terminal"),
        ("process", "terminal"),
        ("read_file", "file"),
        ("write_file", "file"),
        ("patch", "file"),
        ("search_files", "file"),
        ("web_search", "web"),
        ("web_extract", "web"),
        ("discord", "discord"),
        ("mine", "custom"),
    ] {
        add(&rt, &spec(n, ts, P0), echo);
    }
    assert_eq!(
        def_names(&rt, r#"{"enabled_toolsets":["debugging"]}"#),
        vec![
            "patch",
            "process",
            "read_file",
            "search_files",
            "terminal",
            "web_extract",
            "web_search",
            "write_file"
        ]
    );
    assert_eq!(
        def_names(&rt, r#"{"enabled_toolsets":["file_tools"]}"#),
        vec!["patch", "read_file", "search_files", "write_file"]
    );
    assert_eq!(
        def_names(&rt, r#"{"enabled_toolsets":["custom"]}"#),
        vec!["mine"]
    );
    assert_eq!(
        def_names(&rt, r#"{"enabled_toolsets":[]}"#),
        Vec::<String>::new()
    );
    // The original's documented semantics.
    assert_eq!(
        def_names(
            &rt,
            r#"{"enabled_toolsets":["terminal","file"],"disabled_toolsets":["coding"]}"#
        )
        .len(),
        6
    );
    assert_eq!(
        def_names(
            &rt,
            r#"{"enabled_toolsets":["hermes-cli"],"disabled_toolsets":["terminal"]}"#
        ),
        vec![
            "patch",
            "read_file",
            "search_files",
            "web_extract",
            "web_search",
            "write_file"
        ]
    );
    // Disabling a platform preset removes its non-core tools (and keeps the core ones).
    let names = def_names(
        &rt,
        r#"{"enabled_toolsets":["hermes-discord"],"disabled_toolsets":["hermes-discord"]}"#,
    );
    assert!(!names.contains(&"discord".to_string()));
    assert!(names.contains(&"terminal".to_string()));
    // Host toolsets with nested includes, and cycles refused with the path.
    let def = |j: &str| {
        let mut err = std::ptr::null_mut();
        let st = unsafe {
            ht_runtime_define_toolset(rt.0, j.as_ptr() as *const c_char, j.len(), &mut err)
        };
        (st, err_text(err))
    };
    assert_eq!(def(r#"{"name":"inner","tools":["mine"]}"#).0, Status::Ok);
    assert_eq!(
        def(r#"{"name":"outer","includes":["inner","web"]}"#).0,
        Status::Ok
    );
    assert_eq!(
        def_names(&rt, r#"{"enabled_toolsets":["outer"]}"#),
        vec!["mine", "web_extract", "web_search"]
    );
    let (st, msg) = def(r#"{"name":"inner","tools":["mine"],"includes":["outer"]}"#);
    assert_eq!(st, Status::InvalidArgument);
    assert!(
        msg.contains("toolset cycle: inner -> outer -> inner"),
        "{msg}"
    );
    assert_eq!(
        def_names(&rt, r#"{"enabled_toolsets":["outer"]}"#).len(),
        3,
        "a refused definition changes nothing"
    );
    let (st, msg) = def(r#"{"name":"x","includes":["nope"]}"#);
    assert_eq!(st, Status::NotFound);
    assert!(msg.contains("unknown toolset 'nope'"));
    // Aliases.
    let (a, t) = ("srv", "custom");
    assert_eq!(
        unsafe {
            ht_runtime_alias_toolset(
                rt.0,
                a.as_ptr() as *const c_char,
                a.len(),
                t.as_ptr() as *const c_char,
                t.len(),
                std::ptr::null_mut(),
            )
        },
        Status::Ok
    );
    assert_eq!(
        def_names(&rt, r#"{"enabled_toolsets":["srv"]}"#),
        vec!["mine"]
    );
    // Unknown names are errors with a suggestion, not silently ignored.
    let (st, msg) = definitions(&rt, r#"{"enabled_toolsets":["termnal"]}"#).unwrap_err();
    assert_eq!(st, Status::NotFound);
    assert!(msg.contains("did you mean 'terminal'"), "{msg}");
    // The toolsets query lists resolution and availability.
    let mut out = std::ptr::null_mut();
    let mut n = 0;
    assert_eq!(
        unsafe { ht_runtime_toolsets_json(rt.0, &mut out, &mut n, std::ptr::null_mut()) },
        Status::Ok
    );
    let all = json(&take(out, n));
    let outer = all
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "outer")
        .unwrap();
    assert_eq!(outer["source"], "host");
    assert_eq!(
        outer["available_tools"],
        serde_json::json!(["mine", "web_extract", "web_search"])
    );
    let safe = all
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "safe")
        .unwrap();
    assert_eq!(safe["source"], "builtin");
}

#[test]
fn disabling_never_silently_leaves_zero_tools() {
    let rt = new_rt("{}");
    add(&rt, &spec("terminal", "terminal", P0), echo);
    add(&rt, &spec("read_file", "file", P0), echo);
    let (st, msg) = definitions(
        &rt,
        r#"{"enabled_toolsets":["terminal"],"disabled_toolsets":["debugging"]}"#,
    )
    .unwrap_err();
    assert_eq!(st, Status::InvalidArgument);
    assert!(msg.contains("remove every one"), "{msg}");
    // Selecting nothing registered is not an error (nothing was asked for).
    assert!(def_names(&rt, r#"{"enabled_toolsets":["web"]}"#).is_empty());
}

static CHECK_CALLS: AtomicUsize = AtomicUsize::new(0);
static CHECK_ANSWER: AtomicUsize = AtomicUsize::new(1);
unsafe extern "C" fn counted_check(_: *mut c_void) -> bool {
    CHECK_CALLS.fetch_add(1, Ordering::SeqCst);
    CHECK_ANSWER.load(Ordering::SeqCst) == 1
}
unsafe extern "C" fn slow_check(_: *mut c_void) -> bool {
    std::thread::sleep(std::time::Duration::from_secs(10));
    true
}

#[test]
fn availability_checks_are_shared_cached_bounded_and_graceful() {
    // Windows wide enough for a loaded machine: a check has 1 s to answer
    // (the slow one takes 10 s), and the cache lasts 3 s.
    let rt = new_rt(r#"{"availability":{"ttl":3,"failure_grace":60,"check_timeout_ms":1000}}"#);
    let shared_ud = 7usize as *mut c_void;
    for n in ["c1", "c2", "c3"] {
        register(
            &rt,
            &spec(n, "checked", P0),
            echo,
            Some(counted_check),
            shared_ud,
        )
        .unwrap();
    }
    register(
        &rt,
        &spec("slow", "checked", P0),
        echo,
        Some(slow_check),
        std::ptr::null_mut(),
    )
    .unwrap();
    add(
        &rt,
        r#"{"name":"needs_env","toolset":"checked","requires_env":["HT_TEST_SURELY_UNSET_VAR"],"schema":{}}"#,
        echo,
    );
    // One evaluation: the shared check runs once; the slow one makes only its tool unavailable.
    assert_eq!(def_names(&rt, ""), vec!["c1", "c2", "c3"]);
    assert_eq!(CHECK_CALLS.load(Ordering::SeqCst), 1);
    // Cached within the TTL.
    def_names(&rt, r#"{"format":"mcp"}"#);
    assert_eq!(CHECK_CALLS.load(Ordering::SeqCst), 1);
    // After the TTL a failure right after a success is forgiven (grace), without caching it.
    std::thread::sleep(std::time::Duration::from_millis(3200));
    CHECK_ANSWER.store(0, Ordering::SeqCst);
    assert_eq!(def_names(&rt, "").len(), 3);
    assert_eq!(CHECK_CALLS.load(Ordering::SeqCst), 2);
    def_names(&rt, "");
    assert_eq!(
        CHECK_CALLS.load(Ordering::SeqCst),
        3,
        "a forgiven failure is probed again"
    );
    // Explicit invalidation with grace disabled makes it unavailable.
    let rt2 = new_rt(r#"{"availability":{"failure_grace":0}}"#);
    register(
        &rt2,
        &spec("c9", "checked", P0),
        echo,
        Some(counted_check),
        shared_ud,
    )
    .unwrap();
    assert!(def_names(&rt2, "").is_empty());
    CHECK_ANSWER.store(1, Ordering::SeqCst);
    assert!(
        def_names(&rt2, "").is_empty(),
        "cached false within the TTL"
    );
    unsafe { ht_runtime_invalidate_availability(rt2.0) };
    assert_eq!(def_names(&rt2, ""), vec!["c9"]);
}

#[test]
fn definitions_are_sorted_formatted_conditional_and_cached() {
    let rt = new_rt("{}");
    add(&rt, &spec("zeta", "a", P0), echo);
    add(
        &rt,
        r#"{"name":"browser_navigate","toolset":"browser","schema":{"description":"Open a page."},"conditional_description":[{"when_any_available":["web_search","web_extract"],"text":" For simple lookups prefer web_search."}]}"#,
        echo,
    );
    add(&rt, &spec("alpha", "a", P0), echo);
    let d = json(&definitions(&rt, "").unwrap());
    let names: Vec<&str> = d
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["alpha", "browser_navigate", "zeta"]);
    assert_eq!(
        d[1]["function"]["description"], "Open a page.",
        "never mention an absent tool"
    );
    add(&rt, &spec("web_search", "web", P0), echo);
    let d = json(&definitions(&rt, "").unwrap());
    assert_eq!(
        d[1]["function"]["description"],
        "Open a page. For simple lookups prefer web_search."
    );
    let a = json(&definitions(&rt, r#"{"format":"anthropic"}"#).unwrap());
    assert!(a[0]["input_schema"].is_object() && a[0]["name"] == "alpha");
    let m = json(&definitions(&rt, r#"{"format":"mcp"}"#).unwrap());
    assert!(m[0]["inputSchema"].is_object());
    let (st, msg) = definitions(&rt, r#"{"format":"gemini"}"#).unwrap_err();
    assert_eq!(st, Status::InvalidArgument);
    assert!(msg.contains("format"));
    let (st, _) = definitions(&rt, r#"{"enabled":["a"]}"#).unwrap_err();
    assert_eq!(st, Status::InvalidJson);
    // An unchanged registry answers from cache: the very same block comes back.
    let q = r#"{"format":"openai"}"#;
    let get = || {
        let mut out = std::ptr::null_mut();
        let mut n = 0;
        assert_eq!(
            unsafe {
                ht_runtime_definitions_json(
                    rt.0,
                    q.as_ptr() as *const c_char,
                    q.len(),
                    &mut out,
                    &mut n,
                    std::ptr::null_mut(),
                )
            },
            Status::Ok
        );
        out
    };
    let (p1, p2) = (get(), get());
    assert_eq!(p1, p2, "cache hit shares the block");
    unsafe { ht_string_free(p1) };
    unsafe { ht_string_free(p2) };
    add(&rt, &spec("beta", "a", P0), echo);
    let p3 = get();
    let text = unsafe { std::ffi::CStr::from_ptr(p3) }
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        text.contains("\"beta\""),
        "a registry change invalidates the cache"
    );
    unsafe { ht_string_free(p3) };
}

#[test]
fn null_and_bad_utf8_arguments_are_clean_errors() {
    let rt = new_rt("{}");
    let mut err = std::ptr::null_mut();
    let mut out = std::ptr::null_mut();
    let mut n = 0;
    unsafe {
        assert_eq!(
            ht_runtime_definitions_json(
                std::ptr::null_mut(),
                std::ptr::null(),
                0,
                &mut out,
                &mut n,
                &mut err
            ),
            Status::InvalidArgument
        );
        assert!(err_text(err).contains("runtime is NULL"));
        let bad = [b'{', 0xff, b'}'];
        assert_eq!(
            ht_runtime_definitions_json(
                rt.0,
                bad.as_ptr() as *const c_char,
                3,
                &mut out,
                &mut n,
                &mut err
            ),
            Status::InvalidUtf8
        );
        assert!(err_text(err).contains("offset 1"));
        assert_eq!(
            ht_runtime_definitions_json(rt.0, std::ptr::null(), 5, &mut out, &mut n, &mut err),
            Status::InvalidArgument
        );
        err_text(err);
        assert_eq!(
            ht_runtime_register_tool(
                rt.0,
                std::ptr::null(),
                0,
                Some(echo),
                None,
                std::ptr::null_mut(),
                None,
                &mut err
            ),
            Status::InvalidJson
        );
        err_text(err);
        // out_err may be NULL.
        assert_eq!(
            ht_runtime_deregister_tool(
                rt.0,
                b"x".as_ptr() as *const c_char,
                1,
                std::ptr::null_mut()
            ),
            Status::NotFound
        );
        assert!(ht_call_args_json(std::ptr::null(), &mut n).is_null());
        assert_eq!(n, 0);
        assert_eq!(
            ht_call_respond(std::ptr::null_mut(), false, std::ptr::null(), 0),
            Status::InvalidArgument
        );
        assert_eq!(
            ht_call_respond(12345usize as *mut _, false, std::ptr::null(), 0),
            Status::NotFound
        );
        assert_eq!(ht_error_code(std::ptr::null()), Status::InvalidArgument);
    }
    let (st, msg) = try_new_rt(r#"{"terminal":{"backend":"docker"}}"#)
        .err()
        .unwrap();
    assert_eq!(st, Status::InvalidArgument);
    assert!(msg.contains("terminal.backend"), "{msg}");
    let (st, msg) = try_new_rt(r#"{"unknown_key":1}"#).err().unwrap();
    assert_eq!(st, Status::InvalidJson);
    assert!(msg.contains("unknown_key"), "{msg}");
}

/// Filtered definitions patch a cached selection with the tools replaced in
/// place since (the registry's change log); past the log's reach they
/// rebuild. Either way every replaced description shows and nothing else moves.
#[test]
fn filtered_definitions_follow_in_place_replacements_and_log_overflow() {
    let rt = new_rt("{}");
    let with = |i: usize, word: &str| {
        format!(
            r#"{{"name":"t_{i:04}","toolset":"s_{}","schema":{{"description":"{word} {i}","parameters":{P0}}}}}"#,
            i % 3
        )
    };
    for i in 0..700 {
        add(&rt, &with(i, "old"), echo);
    }
    let q = r#"{"enabled_toolsets":["s_0","s_1"]}"#;
    let descriptions = |rt: &Rt| -> Vec<String> {
        json(&definitions(rt, q).unwrap())
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["description"].as_str().unwrap().to_string())
            .collect()
    };
    let before = descriptions(&rt);
    assert_eq!(before.len(), 467);
    // A few replacements: the cached selection is patched.
    add(&rt, &with(3, "new"), echo);
    add(&rt, &with(2, "new"), echo); // s_2: not selected, must not appear
    add(&rt, &with(4, "new"), echo);
    let after = descriptions(&rt);
    assert_eq!(after.len(), 467);
    assert!(after.contains(&"new 3".to_string()) && after.contains(&"new 4".to_string()));
    assert!(
        !after
            .iter()
            .any(|d| d == "new 2" || d == "old 3" || d == "old 4")
    );
    assert_eq!(after.iter().filter(|d| d.starts_with("new")).count(), 2);
    // More replacements than the change log holds: the selection is rebuilt.
    for i in 0..700 {
        add(&rt, &with(i, "newer"), echo);
    }
    let last = descriptions(&rt);
    assert_eq!(last.len(), 467);
    assert!(last.iter().all(|d| d.starts_with("newer ")), "{last:?}");
    // And the unfiltered query sees all of them, sorted.
    let all = def_names(&rt, "");
    assert_eq!(all.len(), 700);
    assert!(all.windows(2).all(|w| w[0] < w[1]));
}

/// Bulk registration checks the JSON and each schema's top-level shape and
/// compiles a schema when its tool is first called: a bad nested schema
/// fails that tool's calls with a message naming the fault, and leaves the
/// other tools of the batch working.
#[test]
fn bulk_registration_compiles_schemas_on_first_use() {
    let rt = new_rt("{}");
    let good = spec(
        "good",
        "b",
        r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#,
    );
    let bad = spec(
        "bad",
        "b",
        r#"{"type":"object","properties":{"a":{"type":"strng"}}}"#,
    );
    assert_eq!(register_bulk(&rt, &format!("[{good},{bad}]")), Ok(2));
    // The good tool validates and repairs as if compiled at registration.
    assert_eq!(
        json(&dispatch(&rt, "good", r#"{"n":"4"}"#)),
        json(r#"{"n":4}"#)
    );
    let e = json(&dispatch(&rt, "good", r#"{}"#));
    assert!(e["error"].as_str().unwrap().contains("n"), "{e}");
    // The bad one answers every call with the schema's fault.
    for _ in 0..2 {
        let e = json(&dispatch(&rt, "bad", r#"{"a":"x"}"#));
        let msg = e["error"].as_str().unwrap();
        assert!(
            msg.contains("parameters schema is invalid") && msg.contains("unknown type 'strng'"),
            "{msg}"
        );
    }
    // Definitions carry both: the model sees what the host registered.
    let names = def_names(&rt, "{}");
    assert!(names.contains(&"good".to_string()) && names.contains(&"bad".to_string()));
    // The top-level shape is still checked at registration, naming the spec.
    let (st, msg) = register_bulk(
        &rt,
        &format!("[{}]", spec("arr", "b", r#"{"type":"array"}"#)),
    )
    .unwrap_err();
    assert_eq!(st, Status::InvalidArgument, "{msg}");
    assert!(
        msg.contains("tool specs[0]") && msg.contains("schema.parameters.type"),
        "{msg}"
    );
    let (st, msg) = register_bulk(
        &rt,
        r#"[{"name":"x","toolset":"b","schema":{"parameters":5}}]"#,
    )
    .unwrap_err();
    assert_eq!(st, Status::InvalidArgument, "{msg}");
    assert!(msg.contains("must be a JSON Schema object"), "{msg}");
}

/// Issue 11 item 5: `$ref`/`$defs`, `format` and the other keywords beyond
/// the compiled subset are enforced (before, `{"a":5}` reached a handler
/// whose `$ref` said string), whether registered one by one or in bulk.
/// `format` is asserted with `dispatch.formats: "assert"`; by default it is
/// what draft 2020-12 makes it, an annotation (issue 30, item 11).
#[test]
fn full_json_schema_keywords_are_enforced() {
    let rt = new_rt(r#"{"dispatch":{"formats":"assert"}}"#);
    let params = r##"{"type":"object","$defs":{"Name":{"type":"string","minLength":2}},
        "properties":{"a":{"$ref":"#/$defs/Name"},"day":{"type":"string","format":"date"},
        "mode":{"not":{"const":"unsafe"}}},"required":["a"]}"##
        .replace('\n', "");
    add(&rt, &spec("one", "s", &params), echo);
    register_bulk(&rt, &format!("[{}]", spec("many", "s", &params))).unwrap();
    for tool in ["one", "many"] {
        let e = json(&dispatch(&rt, tool, r#"{"a":5}"#));
        let msg = e["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{tool}: ran with a=5: {e}"));
        assert!(
            msg.contains("Invalid arguments") && msg.contains("a: "),
            "{msg}"
        );
        let e = json(&dispatch(&rt, tool, r#"{"a":"ok","day":"tomorrow"}"#));
        assert!(e["error"].as_str().unwrap().contains("day: "), "{e}");
        let e = json(&dispatch(&rt, tool, r#"{"a":"ok","mode":"unsafe"}"#));
        assert!(e["error"].as_str().unwrap().contains("mode: "), "{e}");
        let ok = json(&dispatch(
            &rt,
            tool,
            r#"{"a":"ok","day":"2026-11-23","mode":"safe"}"#,
        ));
        assert_eq!(ok["a"], "ok", "{tool}: {ok}");
    }
    let plain = new_rt("{}");
    add(&plain, &spec("one", "s", &params), echo);
    let ok = json(&dispatch(&plain, "one", r#"{"a":"ok","day":"tomorrow"}"#));
    assert_eq!(
        ok["day"], "tomorrow",
        "format is an annotation by default: {ok}"
    );
    // A `$ref` that points nowhere: refused where the tool is registered
    // when schemas compile there; by default its calls answer the fault.
    let bad = r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/Missing"}}}"##;
    add(&rt, &spec("dangling", "s", bad), echo);
    let e = json(&dispatch(&rt, "dangling", r#"{"a":1}"#));
    assert!(
        e["error"]
            .as_str()
            .is_some_and(|m| m.contains("parameters schema is invalid")),
        "{e}"
    );
    let rt = new_rt(AT_REGISTRATION);
    let (st, msg) = register(
        &rt,
        &spec(
            "dangling",
            "s",
            r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/Missing"}}}"##,
        ),
        echo,
        None,
        std::ptr::null_mut(),
    )
    .unwrap_err();
    assert_eq!(st, Status::InvalidArgument, "{msg}");
    assert!(
        msg.starts_with("tool spec: schema.parameters") && !msg.contains('\n'),
        "{msg}"
    );
}

/// Found by the JSON fuzzer (crates/runtime/examples/fuzz_json.rs): a
/// model-written property name of 5 000 characters was echoed whole in the
/// validation error, which the tool's `max_result_size_chars` then cut in
/// the middle, handing the model broken JSON. Our own error results are
/// bounded and never cut; long paths and allowed-name lists are shortened.
/// Issue 30, item 11: `dispatch.repair: false` validates arguments as the
/// model wrote them: no `"5"` for an integer, no double-encoded arguments.
#[test]
fn repair_can_be_turned_off() {
    let params = r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#;
    let on = new_rt("{}");
    add(&on, &spec("t", "s", params), echo);
    assert_eq!(json(&dispatch(&on, "t", r#"{"n":"5"}"#))["n"], 5);
    assert_eq!(json(&dispatch(&on, "t", r#""{\"n\":5}""#))["n"], 5);
    let off = new_rt(r#"{"dispatch":{"repair":false}}"#);
    add(&off, &spec("t", "s", params), echo);
    let e = json(&dispatch(&off, "t", r#"{"n":"5"}"#));
    assert!(
        e["error"]
            .as_str()
            .is_some_and(|m| m.contains("n: expected integer")),
        "{e}"
    );
    let e = json(&dispatch(&off, "t", r#""{\"n\":5}""#));
    assert!(
        e["error"]
            .as_str()
            .is_some_and(|m| m.contains("expected a JSON object")),
        "{e}"
    );
    assert_eq!(json(&dispatch(&off, "t", r#"{"n":5}"#))["n"], 5);
}

#[test]
fn validation_errors_stay_short_and_whole_json() {
    let rt = new_rt("{}");
    let props: Vec<String> = (0..40)
        .map(|i| format!(r#""p{i}":{{"type":"string"}}"#))
        .collect();
    let spec = format!(
        r#"{{"name":"strict","toolset":"s","max_result_size_chars":200,"schema":{{"parameters":{{"type":"object","additionalProperties":false,"properties":{{{}}}}}}}}}"#,
        props.join(",")
    );
    add(&rt, &spec, echo);
    let long = "a".repeat(5000);
    let out = dispatch(&rt, "strict", &format!(r#"{{"{long}":1}}"#));
    let v: serde_json::Value = serde_json::from_str(&out).expect("error result is JSON");
    let msg = v["error"].as_str().unwrap();
    assert!(msg.contains("unexpected property 'aaaa"), "{msg}");
    assert!(msg.len() < 1000, "{} bytes: {msg}", msg.len());
    assert!(msg.contains("(40 in all)"), "{msg}");
}

/// `dispatch.compile_schemas`: one-by-one registration compiles on the
/// tool's first call by default (a bad nested schema registers and every
/// call answers its fault; the top-level shape is still refused at once),
/// and at registration when configured (refused there).
#[test]
fn one_by_one_registration_compiles_on_first_use_unless_configured() {
    let nested_bad = spec(
        "bad",
        "s",
        r#"{"type":"object","properties":{"a":{"type":"strng"}}}"#,
    );
    let good = spec(
        "good",
        "s",
        r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#,
    );
    let rt = new_rt("{}");
    add(&rt, &good, echo);
    add(&rt, &nested_bad, echo);
    // The good tool validates and repairs as if compiled at registration.
    assert_eq!(
        json(&dispatch(&rt, "good", r#"{"n":"4"}"#)),
        json(r#"{"n":4}"#)
    );
    let e = json(&dispatch(&rt, "good", "{}"));
    assert!(e["error"].as_str().unwrap().contains("n"), "{e}");
    for _ in 0..2 {
        let e = json(&dispatch(&rt, "bad", r#"{"a":"x"}"#));
        let msg = e["error"].as_str().unwrap_or_default();
        assert!(
            msg.contains("parameters schema is invalid")
                && msg.contains("schema.parameters.properties.a.type: unknown type 'strng'"),
            "{e}"
        );
    }
    let (st, msg) = register(
        &rt,
        &spec("arr", "s", r#"{"type":"array"}"#),
        echo,
        None,
        std::ptr::null_mut(),
    )
    .unwrap_err();
    assert_eq!(st, Status::InvalidArgument, "{msg}");
    assert!(msg.contains("schema.parameters.type"), "{msg}");

    let rt = new_rt(AT_REGISTRATION);
    add(&rt, &good, echo);
    let (st, msg) = register(&rt, &nested_bad, echo, None, std::ptr::null_mut()).unwrap_err();
    assert_eq!(st, Status::InvalidArgument, "{msg}");
    assert!(
        msg.contains("schema.parameters.properties.a.type: unknown type 'strng'"),
        "{msg}"
    );
    // Bulk registration follows the same setting.
    let (st, msg) = register_bulk(&rt, &format!("[{nested_bad}]")).unwrap_err();
    assert_eq!(st, Status::InvalidArgument, "{msg}");
    assert!(
        msg.contains("tool specs[0]") && msg.contains("unknown type 'strng'"),
        "{msg}"
    );

    let Err((st, msg)) = try_new_rt(r#"{"dispatch":{"compile_schemas":"later"}}"#) else {
        panic!("an unknown compile_schemas value was accepted");
    };
    assert_eq!(st, Status::InvalidJson, "{msg}");
    assert!(
        msg.contains("compile_schemas") || msg.contains("on_first_use"),
        "{msg}"
    );
}
