//! Fuzz the command analyser: any input must neither panic nor hang (run
//! libFuzzer with `-timeout=2`), and an unanalysable input is never `allow`
//! merely because parsing gave up.
#![no_main]

use hermes_tools::approval::{Engine, Verdict, parse};
use libfuzzer_sys::fuzz_target;

static ENGINE: std::sync::LazyLock<Engine> = std::sync::LazyLock::new(Engine::new);

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let parsed = parse::parse(&s, 0);
    let r = ENGINE.check(&s);
    let _ = r.to_json();
    if parsed.error.is_some() {
        assert_ne!(
            r.verdict,
            Verdict::Allow,
            "unparseable input allowed: {s:?}"
        );
    }
    // wrapping never lowers a non-allow verdict to allow
    if r.verdict != Verdict::Allow {
        let wrapped = format!("true && {s}");
        assert_ne!(ENGINE.check(&wrapped).verdict, Verdict::Allow, "{s:?}");
    }
});
