//! Core speed targets (issue 2), measured in one run:
//! - full `ht_runtime_dispatch` of a trivial tool with a C-ABI handler that answers inline;
//! - definitions for 1 000 tools (half with a check callback) right after a registry change, and from cache;
//! - dispatch throughput from 2 threads against 1 thread.
//!
//! Run: `cargo bench --bench core` (release profile). Prints medians.

use hermes_tools::Status;
use hermes_tools::ffi::api::*;
use hermes_tools::host::ht_call;
use std::ffi::{c_char, c_void};
use std::time::{Duration, Instant};

struct Rt(*mut ht_runtime);
unsafe impl Send for Rt {}
unsafe impl Sync for Rt {}

unsafe extern "C" fn answer_inline(_: *mut c_void, call: *mut ht_call) {
    let r = b"{\"ok\":true}";
    unsafe { ht_call_respond(call, false, r.as_ptr() as *const c_char, r.len()) };
}
unsafe extern "C" fn always(_: *mut c_void) -> bool {
    true
}

fn new_rt() -> Rt {
    let mut rt = std::ptr::null_mut();
    let cfg = "{}";
    assert_eq!(
        unsafe {
            ht_runtime_new(
                cfg.as_ptr() as *const c_char,
                cfg.len(),
                &mut rt,
                std::ptr::null_mut(),
            )
        },
        Status::Ok
    );
    Rt(rt)
}

fn register(rt: &Rt, spec: &str, check: bool, ud: usize) {
    let st = unsafe {
        ht_runtime_register_tool(
            rt.0,
            spec.as_ptr() as *const c_char,
            spec.len(),
            Some(answer_inline),
            if check { Some(always) } else { None },
            ud as *mut c_void,
            None,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(st, Status::Ok);
}

fn dispatch_once(rt: &Rt) {
    let (name, args) = ("trivial", "{\"x\":1}");
    let mut out = std::ptr::null_mut();
    let mut n = 0;
    let st = unsafe {
        ht_runtime_dispatch(
            rt.0,
            name.as_ptr() as *const c_char,
            name.len(),
            args.as_ptr() as *const c_char,
            args.len(),
            std::ptr::null(),
            0,
            &mut out,
            &mut n,
            std::ptr::null_mut(),
        )
    };
    debug_assert_eq!(st, Status::Ok);
    unsafe { ht_string_free(out) };
}

fn definitions(rt: &Rt) -> usize {
    definitions_q(rt, "")
}

fn definitions_q(rt: &Rt, q: &str) -> usize {
    let mut out = std::ptr::null_mut();
    let mut n = 0;
    let st = unsafe {
        ht_runtime_definitions_json(
            rt.0,
            q.as_ptr() as *const c_char,
            q.len(),
            &mut out,
            &mut n,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(st, Status::Ok);
    unsafe { ht_string_free(out) };
    n
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Median time per op in ns over `rounds` batches of `per` ops.
fn time_ns(rounds: usize, per: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..per {
        f();
    }
    let samples = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..per {
                f();
            }
            t.elapsed().as_nanos() as f64 / per as f64
        })
        .collect();
    median(samples)
}

const TRIVIAL: &str = r#"{"name":"trivial","toolset":"bench","schema":{"description":"Trivial tool","parameters":{"type":"object","properties":{"x":{"type":"integer"}}}}}"#;

fn spec_n(i: usize) -> String {
    format!(
        r#"{{"name":"tool_{i:04}","toolset":"set_{}","schema":{{"description":"Benchmark tool number {i}: does a small, well-described thing.","parameters":{{"type":"object","properties":{{"path":{{"type":"string","description":"Path to use"}},"limit":{{"type":"integer","minimum":1}}}},"required":["path"]}}}}}}"#,
        i % 20
    )
}

fn throughput(rt: &Rt, threads: usize, dur: Duration) -> f64 {
    let total: usize = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let end = Instant::now() + dur;
                    let mut n = 0usize;
                    while Instant::now() < end {
                        for _ in 0..256 {
                            dispatch_once(rt);
                        }
                        n += 256;
                    }
                    n
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    });
    total as f64 / dur.as_secs_f64()
}

/// Register the JSON array `array` of `n` specs in one call; its duration.
fn register_bulk(rt: &Rt, array: &str, n: usize) -> Duration {
    let t = Instant::now();
    let mut count = 0usize;
    // SAFETY: a live runtime, a valid buffer of `array.len()` bytes, out pointers to locals.
    let st = unsafe {
        ht_runtime_register_tools(
            rt.0,
            array.as_ptr() as *const c_char,
            array.len(),
            Some(answer_inline),
            None,
            std::ptr::null_mut(),
            None,
            &mut count,
            std::ptr::null_mut(),
        )
    };
    let took = t.elapsed();
    assert_eq!((st, count), (Status::Ok, n));
    took
}

/// The toolset filter hosts use: every toolset of the registry named.
fn all_sets_query() -> String {
    let sets: Vec<String> = (0..20).map(|i| format!("\"set_{i}\"")).collect();
    format!(r#"{{"enabled_toolsets":[{}]}}"#, sets.join(","))
}

/// Registration one by one and in bulk, toolset-filtered definitions right
/// after one tool changes, and dispatch, with `n` tools registered.
fn scale(n: usize) {
    let specs: Vec<String> = (0..n).map(spec_n).collect();
    let one = new_rt();
    let t = Instant::now();
    for (i, s) in specs.iter().enumerate() {
        register(&one, s, i % 2 == 0, i % 50 + 1);
    }
    let one_by_one = t.elapsed();
    let bulk_rt = new_rt();
    let array = format!("[{}]", specs.join(","));
    let bulk = register_bulk(&bulk_rt, &array, n);
    println!(
        "register {n} tools: one by one {:.1} ms, bulk {:.2} ms",
        one_by_one.as_secs_f64() * 1e3,
        bulk.as_secs_f64() * 1e3
    );
    unsafe { ht_runtime_free(bulk_rt.0) };
    let q = all_sets_query();
    let bytes = definitions_q(&one, &q);
    let mut k = 0usize;
    let rounds = if n > 5000 { 600 } else { 200 };
    let samples: Vec<f64> = (0..rounds)
        .map(|_| {
            k += 1;
            let i = k % n;
            register(&one, &specs[i], i.is_multiple_of(2), i % 50 + 1);
            let t = Instant::now();
            definitions_q(&one, &q);
            t.elapsed().as_nanos() as f64
        })
        .collect();
    let mut sorted = samples.clone();
    sorted.sort_by(|a, b| a.total_cmp(b));
    eprintln!(
        "  (p10 {:.0} us, p90 {:.0} us)",
        sorted[rounds / 10] / 1000.0,
        sorted[rounds * 9 / 10] / 1000.0
    );
    let filtered = median(samples);
    println!(
        "definitions filtered by toolset, {n} tools ({bytes} bytes), right after one tool changes: median {:.1} us",
        filtered / 1000.0
    );
    register(&one, TRIVIAL, false, 0);
    let d = time_ns(100, 2000, || dispatch_once(&one));
    println!("dispatch trivial tool with {n} tools registered: median {d:.0} ns/call");
    unsafe { ht_runtime_free(one.0) };
}

/// Argument repair and validation alone (`Compiled::check`), per call, for
/// the schemas tools use: the registry's typical tool, a richer one (enum,
/// nested objects in an array, anyOf, bounds, a pattern), and a call whose
/// arguments need a repair.
fn validation() {
    use hermes_core::params::Compiled;
    use serde_json::json;
    let typical = Compiled::new(
        r#"{"type":"object","properties":{"path":{"type":"string","description":"Path to use"},"limit":{"type":"integer","minimum":1}},"required":["path"]}"#,
        "p",
    )
    .unwrap();
    let rich = Compiled::new(
        r#"{"type":"object","additionalProperties":false,"required":["mode","items"],"properties":{
            "mode":{"type":"string","enum":["read","write","append"]},
            "items":{"type":"array","maxItems":50,"items":{"type":"object","required":["id"],"properties":{
                "id":{"type":"string","pattern":"^[a-z0-9_-]+$","minLength":1,"maxLength":64},
                "weight":{"type":"number","minimum":0,"exclusiveMaximum":100},
                "tags":{"type":"array","items":{"type":"string"}}}}},
            "target":{"anyOf":[{"type":"string"},{"type":"integer"}]},
            "flag":{"type":["boolean","null"]}}}"#,
        "p",
    )
    .unwrap();
    let cases = [
        (
            "typical tool",
            &typical,
            json!({"path":"src/main.rs","limit":20}),
        ),
        (
            "typical tool, repaired \"20\"",
            &typical,
            json!({"path":"src/main.rs","limit":"20"}),
        ),
        (
            "rich schema",
            &rich,
            json!({"mode":"write","target":7,"flag":null,"items":[
                {"id":"a_1","weight":1.5,"tags":["x","y"]},{"id":"b-2","weight":99},{"id":"c3"}]}),
        ),
    ];
    for (what, c, args) in cases {
        let ns = time_ns(200, 2000, || {
            let mut v = args.clone();
            let (mut notes, mut errs) = (Vec::new(), Vec::new());
            c.check(&mut v, true, &mut notes, &mut errs, 20);
            assert!(errs.is_empty(), "{errs:?}");
            std::hint::black_box(&v);
        });
        println!("argument repair + validation, {what}: median {ns:.0} ns/call");
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    // `-- validation`: only the argument repair + validation figures.
    if std::env::args().any(|a| a == "validation") {
        validation();
        return;
    }
    // `cargo bench --bench core -- scale`: only the 10 000-tool figures (for profiling).
    if std::env::args().any(|a| a == "register") {
        let specs: Vec<String> = (0..10_000).map(spec_n).collect();
        for _ in 0..10 {
            let one = new_rt();
            for (i, s) in specs.iter().enumerate() {
                register(&one, s, i % 2 == 0, i % 50 + 1);
            }
            unsafe { ht_runtime_free(one.0) };
        }
        return;
    }
    // `-- filtered1k`: filtered definitions at 1 000 tools right after one
    // tool changes, 20 000 times (for profiling); `-- filtered10k`: the same
    // at 10 000 tools, 2 000 times.
    let filtered = std::env::args().find(|a| a == "filtered1k" || a == "filtered10k");
    if let Some(which) = filtered {
        let (n, rounds) = if which == "filtered1k" {
            (1000, 20_000usize)
        } else {
            (10_000, 2_000)
        };
        let rt = new_rt();
        let specs: Vec<String> = (0..n).map(spec_n).collect();
        for (i, s) in specs.iter().enumerate() {
            register(&rt, s, i % 2 == 0, i % 50 + 1);
        }
        let q = all_sets_query();
        let t = Instant::now();
        for k in 0..rounds {
            let i = k % n;
            register(&rt, &specs[i], i.is_multiple_of(2), i % 50 + 1);
            definitions_q(&rt, &q);
        }
        println!(
            "{which}: {:.1} us per change + definitions",
            t.elapsed().as_secs_f64() * 1e6 / rounds as f64
        );
        return;
    }
    // `-- bulk`: only bulk registration of 10 000 tools, 20 times (for profiling).
    if std::env::args().any(|a| a == "bulk") {
        let specs: Vec<String> = (0..10_000).map(spec_n).collect();
        let array = format!("[{}]", specs.join(","));
        for _ in 0..20 {
            let rt = new_rt();
            let took = register_bulk(&rt, &array, 10_000);
            println!("bulk 10000: {:.2} ms", took.as_secs_f64() * 1e3);
            unsafe { ht_runtime_free(rt.0) };
        }
        return;
    }
    if std::env::args().any(|a| a == "scale") {
        scale(10_000);
        return;
    }
    validation();
    let rt = new_rt();
    register(&rt, TRIVIAL, false, 0);
    let d = time_ns(200, 2000, || dispatch_once(&rt));
    println!(
        "dispatch trivial tool (inline C handler): median {:.0} ns/call",
        d
    );

    let big = new_rt();
    for i in 0..1000 {
        register(&big, &spec_n(i), i % 2 == 0, i % 50 + 1);
    }
    let bytes = definitions(&big); // warm the availability cache (checks TTL 30 s)
    let mut k = 0usize;
    let fresh = median(
        (0..200)
            .map(|_| {
                // A registry change: re-register one tool (bumps the generation).
                k += 1;
                register(
                    &big,
                    &spec_n(k % 1000),
                    (k % 1000).is_multiple_of(2),
                    (k % 1000) % 50 + 1,
                );
                let t = Instant::now();
                definitions(&big);
                t.elapsed().as_nanos() as f64
            })
            .collect(),
    );
    let cached = time_ns(200, 200, || {
        definitions(&big);
    });
    println!(
        "definitions 1000 tools (500 checked), {bytes} bytes, after a registry change: median {:.1} us",
        fresh / 1000.0
    );
    println!("definitions 1000 tools from cache: median {:.0} ns", cached);

    scale(1000);
    scale(10_000);

    let dur = Duration::from_millis(1500);
    let one = throughput(&rt, 1, dur);
    let two = throughput(&rt, 2, dur);
    println!(
        "dispatch throughput: 1 thread {:.0}/s, 2 threads {:.0}/s, ratio {:.2}x",
        one,
        two,
        two / one
    );
    unsafe {
        ht_runtime_free(rt.0);
        ht_runtime_free(big.0);
    }
}
