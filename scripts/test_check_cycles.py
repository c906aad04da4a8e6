#!/usr/bin/env python3
"""Tests of scripts/check-cycles.py on small synthetic crates (stdlib unittest).

    python3 scripts/test_check_cycles.py      (run by `make lint`)
"""

import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "check-cycles.py"


def run(files: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "demo" / "src"
        for rel, body in files.items():
            p = src / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(textwrap.dedent(body))
        (src.parent / "Cargo.toml").write_text('[package]\nname = "demo"\nversion = "0.1.0"\n')
        return subprocess.run([sys.executable, str(SCRIPT), *extra, str(src)],
                              capture_output=True, text=True)


class CheckCycles(unittest.TestCase):
    def assertCircle(self, r, *edges):
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        for a, b in edges:
            self.assertRegex(r.stdout, rf"{a} -> {b}\s")
        self.assertIn("check-cycles: FAIL: 1 import circle", r.stdout)

    def assertClean(self, r):
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("check-cycles: ok", r.stdout)

    def test_two_files_importing_each_other(self):
        r = run({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b::B;\npub struct A;\n",
            "b.rs": "pub struct B;\npub fn f() -> crate::a::A { crate::a::A }\n",
        })
        self.assertCircle(r, ("crate::a", "crate::b"), ("crate::b", "crate::a"))

    def test_three_file_circle_through_use_tree_and_super(self):
        r = run({
            "lib.rs": "mod core;\n",
            "core/mod.rs": "mod x;\nmod y;\nmod z;\n",
            "core/x.rs": "use crate::core::{y::Y, z};\npub struct X;\n",
            "core/y.rs": "pub struct Y;\nfn g() { let _ = super::z::Z; }\n",
            "core/z.rs": "pub struct Z;\nuse super::super::core::x::X as Renamed;\n",
        })
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("import circle of 3 modules", r.stdout)

    def test_layered_crate_is_clean(self):
        r = run({
            "lib.rs": "pub mod low;\npub mod high;\npub use high::run;\n",
            "low.rs": "pub struct L;\n",
            "high.rs": "use crate::low::L;\npub fn run() -> L { L }\n",
        })
        self.assertClean(r)

    def test_facade_reexport_is_followed_not_a_hub(self):
        # lib.rs re-exports a::A; b names crate::A, which lives in a: no circle
        # although lib.rs also re-exports b's item.
        r = run({
            "lib.rs": "mod a;\nmod b;\npub use a::A;\npub use b::B;\n",
            "a.rs": "pub struct A;\n",
            "b.rs": "use crate::A;\npub struct B(A);\n",
        })
        self.assertClean(r)

    def test_reexport_used_by_the_module_itself_is_an_edge(self):
        r = run({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "pub(crate) use crate::b::B;\npub struct A;\nfn f() -> B { B }\n",
            "b.rs": "pub struct B;\nfn g() { let _ = crate::a::A; }\n",
        })
        self.assertCircle(r, ("crate::a", "crate::b"), ("crate::b", "crate::a"))

    def test_root_code_and_child_using_root_is_a_circle(self):
        r = run({
            "lib.rs": "mod rules;\npub enum Verdict { Ok }\nfn rows() { rules::table(); }\n",
            "rules.rs": "use super::Verdict;\npub fn table() -> Verdict { Verdict::Ok }\n",
        })
        self.assertCircle(r, ("crate", "crate::rules"), ("crate::rules", "crate"))

    def test_test_modules_comments_and_strings_do_not_count(self):
        r = run({
            "lib.rs": "mod a;\nmod b;\n#[cfg(test)]\nmod tests_only;\n",
            "a.rs": "use crate::b::B;\npub struct A;\n",
            "b.rs": textwrap.dedent("""\
                pub struct B;
                // use crate::a::A;
                /* crate::a::A /* nested */ crate::a::A */
                const S: &str = "crate::a::A";
                const R: &str = r#"use crate::a::A;"#;
                fn lt<'a>(x: &'a str) -> char { let _ = x; 'c' }
                #[cfg(test)]
                mod tests {
                    use super::*;
                    use crate::a::A;
                }
                """),
            "tests_only.rs": "use crate::a::A;\nuse crate::b::B;\n",
        })
        self.assertClean(r)
        r = run({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b::B;\npub struct A;\n",
            "b.rs": "pub struct B;\n#[cfg(test)]\nmod tests { use crate::a::A; }\n",
        }, "--include-tests")
        self.assertCircle(r, ("crate::a", "crate::b"))

    def test_relative_child_path_and_inline_module_super(self):
        # `inner` is an inline module of a.rs: its super is a, not the root.
        r = run({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "mod inner { use super::b_user; }\nfn b_user() {}\n",
            "b.rs": "pub fn f() {}\n",
        })
        self.assertClean(r)
        r = run({
            "lib.rs": "mod p;\n",
            "p/mod.rs": "mod child;\npub struct Shared;\nfn go() { child::run(); }\n",
            "p/child.rs": "pub fn run() { let _ = super::Shared; }\n",
        })
        self.assertCircle(r, ("crate::p", "crate::p::child"), ("crate::p::child", "crate::p"))

    def test_paths_to_other_crates_are_ignored(self):
        r = run({
            "lib.rs": "mod a;\npub use other_crate as approval;\n",
            "a.rs": "use crate::approval::Thing;\nuse std::sync::Arc;\n",
        })
        self.assertClean(r)


if __name__ == "__main__":
    unittest.main(verbosity=1)
