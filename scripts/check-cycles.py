#!/usr/bin/env python3
"""Fail when the modules of a Rust crate import each other in a circle.

    scripts/check-cycles.py [--include-tests] [--all] [SRC_DIR ...]

With no SRC_DIR it checks the root crate's src/ and every crates/*/src of the
repository this script lives in. Crate boundaries already forbid circles
between crates (cargo refuses them); inside a crate nothing does, so this
check keeps the layering of issue 9 ("inside each crate, no import circles
either") from eroding one `use` at a time.

The graph: one node per module file (src/a.rs and src/a/mod.rs are `a`,
src/a/b.rs is `a::b`, lib.rs/main.rs the crate root). Inline `mod x { }`
blocks belong to their file. An edge A -> B means code in A names something
that lives in B through
  * `use` trees: `use crate::a::{b, c::D}`, `use super::x`, `use self::y`, and
    2018-style relative paths that start with a child module's name;
  * paths in code: `crate::a::f()`, `super::T`, `child::g()`.
A path is resolved to the deepest module it names (`crate::a::T` -> `a`), and
a name that a module only re-exports (`pub use b::T;` in a facade) is followed
to the module that defines it, so a facade is not a false hub. Neither `mod`
declarations nor `pub use` re-exports are edges themselves (declaring or
forwarding a child's item is wiring, not use of its code) unless the
module's own code also uses the re-exported name; a private `use` always
is. Self-edges are ignored.

Code under `#[cfg(test)]` (inline test modules and test-only module files) is
left out unless --include-tests is given: tests may reach across layers.

Prints every circle found (one per strongly connected component, as a
shortest cycle, plus every import inside the component with --all) and exits 1;
exits 0 with a one-line summary otherwise. Standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections import deque
from pathlib import Path

KEYWORD_ITEMS = {"fn", "struct", "enum", "trait", "type", "const", "static", "union"}

# ---------------------------------------------------------------- lexing


def strip_code(text: str) -> str:
    """Blank out comments, string/char literals (keeping newlines), so paths
    inside them are not read as code. Lifetimes ('a) are kept as code."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 260]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "b" and i + 1 < n and text[i + 1] in "\"'" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            out.append(" ")
            i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # A char literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
            m = re.match(r"'(\\(u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", text[i:i + 12])
            if m:
                out.append(" " * m.end())
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


TOKEN = re.compile(r"\$?[A-Za-z_][A-Za-z0-9_]*|::|#!?\[|[{}\[\]();,*<>=!#]|\S")


def tokenize(code: str) -> list[str]:
    return TOKEN.findall(code)


# ---------------------------------------------------------------- parsing


class Module:
    """One module (a file or an inline `mod x { }`), by its path from the crate root."""

    def __init__(self, path: tuple[str, ...], file_node: tuple[str, ...]):
        self.path = path
        self.file_node = file_node
        self.children: set[str] = set()  # declared child modules (mod x; / mod x {})
        self.items: set[str] = set()  # names defined here (fn, struct, ...)
        self.reexports: dict[str, list[str]] = {}  # pub use: name -> absolute-ish path
        self.glob_reexports: list[list[str]] = []
        self.refs: list[list[str]] = []  # every path this module names (raw segments)
        self.names: set[str] = set()  # identifiers in code outside `use` items
        self.test_only = False


def parse_use_tree(toks: list[str], i: int, prefix: list[str], out: list[tuple[list[str], str | None]]) -> int:
    """Parse one use tree at toks[i]; append (path, alias) pairs ('*' last for globs).
    Returns the index after the tree."""
    path = list(prefix)
    while i < len(toks):
        t = toks[i]
        if t == "{":
            i += 1
            while i < len(toks) and toks[i] != "}":
                if toks[i] == ",":
                    i += 1
                    continue
                i = parse_use_tree(toks, i, path, out)
            return i + 1
        if t == "*":
            out.append((path + ["*"], None))
            return i + 1
        if t == "::":
            i += 1
            continue
        if re.match(r"[A-Za-z_]", t):
            path.append(t)
            i += 1
            if i < len(toks) and toks[i] == "as":
                out.append((path, toks[i + 1] if i + 1 < len(toks) else None))
                return i + 2
            if i < len(toks) and toks[i] == "::":
                continue
            out.append((path, None))
            return i
        return i + 1
    return i


def is_cfg_test(attr_toks: list[str]) -> bool:
    """#[cfg(test)] or #[cfg(all(test, ...))]: code that only test builds compile.
    Not #[cfg(not(test))] nor #[cfg(any(test, ...))], which normal builds may keep."""
    if len(attr_toks) < 3 or attr_toks[1] != "cfg":
        return False
    return "test" in attr_toks and "not" not in attr_toks and "any" not in attr_toks


def parse_file(path: Path, mod_path: tuple[str, ...], modules: dict, include_tests: bool, file_test_only: bool):
    """Parse one file into Module objects (the file's and its inline modules')."""
    code = strip_code(path.read_text(encoding="utf-8", errors="replace"))
    toks = tokenize(code)
    root = modules.setdefault(mod_path, Module(mod_path, mod_path))
    root.test_only = file_test_only
    # Stack of (module, brace depth at which it closes).
    stack: list[tuple[Module, int]] = [(root, -1)]
    depth = 0
    pending_test_attr = False
    skip_until_depth = None  # inside a #[cfg(test)] block we leave out
    declared_test_files: set[str] = set()
    i = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        cur = stack[-1][0]
        if t in ("#[", "#!["):
            j, d = i + 1, 1
            while j < n and d:
                if toks[j] == "[":
                    d += 1
                elif toks[j] == "]":
                    d -= 1
                j += 1
            if is_cfg_test(toks[i:j]) and not include_tests:
                pending_test_attr = True
            i = j
            continue
        if t == "{":
            depth += 1
            i += 1
            continue
        if t == "}":
            depth -= 1
            if skip_until_depth is not None and depth == skip_until_depth:
                skip_until_depth = None
            while len(stack) > 1 and stack[-1][1] == depth:
                stack.pop()
            i += 1
            continue
        if skip_until_depth is not None:
            i += 1
            continue
        if pending_test_attr and t not in ("pub", "(", ")", "crate", "super", "in", "self"):
            # The attribute applies to this item: skip the whole item.
            pending_test_attr = False
            if t == "mod" and i + 2 < n and toks[i + 2] == ";":
                declared_test_files.add(toks[i + 1])
                cur.children.add(toks[i + 1])
                i += 3
                continue
            # Skip to the end of the item: a `;` at this depth or a balanced `{}`.
            j, d = i, 0
            while j < n:
                if toks[j] == "{":
                    d += 1
                elif toks[j] == "}":
                    d -= 1
                    if d == 0:
                        j += 1
                        break
                elif toks[j] == ";" and d == 0:
                    j += 1
                    break
                j += 1
            if t == "mod" and i + 1 < n:
                cur.children.add(toks[i + 1])
            i = j
            continue
        if t == "mod" and i + 2 < n and re.match(r"[A-Za-z_]", toks[i + 1]):
            name = toks[i + 1]
            cur.children.add(name)
            if toks[i + 2] == "{":
                child_path = cur.path + (name,)
                child = modules.setdefault(child_path, Module(child_path, mod_path))
                child.test_only = cur.test_only
                depth += 1
                stack.append((child, depth - 1))
                i += 3
                continue
            i += 3
            continue
        if t == "use":
            is_pub = i > 0 and (toks[i - 1] == "pub" or (toks[i - 1] == ")" and "pub" in toks[max(0, i - 6):i]))
            out: list[tuple[list[str], str | None]] = []
            start = i + 1
            if start < n and toks[start] == "::":
                start += 1  # `use ::extern_crate::x` - never ours
                j = parse_use_tree(toks, start, [], [])
                i = j
                continue
            j = parse_use_tree(toks, start, [], out)
            for p, alias in out:
                if p and p[-1] == "self":
                    p = p[:-1]
                if not p:
                    continue
                if not is_pub:
                    cur.refs.append(p)
                else:
                    if p[-1] == "*":
                        cur.glob_reexports.append(p[:-1])
                    else:
                        cur.reexports[alias or p[-1]] = p
            i = j
            continue
        if re.match(r"[A-Za-z_]", t):
            cur.names.add(t)
        if t in KEYWORD_ITEMS and i + 1 < n and re.match(r"[A-Za-z_]", toks[i + 1]) and len(stack) and depth == stack[-1][1] + 1:
            cur.items.add(toks[i + 1])
        elif t == "macro_rules" and i + 2 < n:
            cur.items.add(toks[i + 2])
        # A path in code: crate::x, super::x, self::x, child::x (not after `::`, not $crate).
        if i + 1 < n and toks[i + 1] == "::" and re.match(r"[A-Za-z_]", t) and (i == 0 or toks[i - 1] != "::"):
            seg = [t]
            j = i + 1
            while j + 1 < n and toks[j] == "::" and re.match(r"[A-Za-z_]", toks[j + 1]):
                seg.append(toks[j + 1])
                j += 2
            cur.refs.append(seg)
            i = j
            continue
        i += 1
    return declared_test_files


def file_module_path(src: Path, f: Path) -> tuple[str, ...]:
    rel = f.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts in (["lib"], ["main"]):
        return ()
    if parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts)


def load_crate(src: Path, include_tests: bool) -> dict[tuple[str, ...], Module]:
    modules: dict[tuple[str, ...], Module] = {}
    files = sorted(p for p in src.rglob("*.rs") if "bin" not in p.relative_to(src).parts[:1])
    # Parents first, so a test-only `mod x;` is known before x's file is read.
    files.sort(key=lambda p: (len(file_module_path(src, p)), str(p)))
    test_files: set[tuple[str, ...]] = set()
    for f in files:
        mp = file_module_path(src, f)
        test_only = any(mp[:k] in test_files for k in range(1, len(mp) + 1))
        declared = parse_file(f, mp, modules, include_tests, test_only)
        for name in declared:
            test_files.add(mp + (name,))
    if not include_tests:
        for mp in list(modules):
            if modules[mp].test_only or any(mp[:k] in test_files for k in range(1, len(mp) + 1)):
                del modules[mp]
    return modules


# ---------------------------------------------------------------- resolving


def resolve(modules, cur: tuple[str, ...], seg: list[str], seen=None) -> tuple[str, ...] | None:
    """The module a path names, from module `cur`; None when it is not ours."""
    seen = seen or set()
    seg = [s for s in seg if s != "*"] if seg and seg[-1] == "*" else list(seg)
    if not seg:
        return None
    head = seg[0]
    if head == "crate":
        base, rest = (), seg[1:]
    elif head in ("super", "self"):
        base = cur
        k = 0
        while k < len(seg) and seg[k] in ("super", "self"):
            if seg[k] == "super":
                base = base[:-1]
            k += 1
        rest = seg[k:]
    elif cur in modules and head in modules[cur].children:
        base, rest = cur, seg
    else:
        return None  # std, another crate, a type (Self::, Vec::) or a local name
    m = base
    for idx, s in enumerate(rest):
        if m + (s,) in modules:
            m = m + (s,)
            continue
        mod = modules.get(m)
        if mod is None:
            break
        key = (m, s)
        if s not in mod.items and s in mod.reexports and key not in seen:
            seen.add(key)
            # None: the name re-exports another crate's item (not an edge).
            return resolve(modules, m, mod.reexports[s] + rest[idx + 1:], seen)
        if s not in mod.items and mod.glob_reexports and key not in seen:
            seen.add(key)
            for g in mod.glob_reexports:
                gm = resolve(modules, m, g, seen)
                gmod = modules.get(gm) if gm is not None else None
                if gmod and (s in gmod.items or s in gmod.reexports or gm + (s,) in modules):
                    return resolve(modules, m, g + [s] + rest[idx + 1:], seen)
        break
    return m


def file_node(modules, m: tuple[str, ...]) -> tuple[str, ...]:
    mod = modules.get(m)
    return mod.file_node if mod else m


def build_graph(modules) -> dict[tuple[str, ...], dict[tuple[str, ...], list[str]]]:
    """node -> {target node -> example path}."""
    graph: dict = {}
    for mp, mod in modules.items():
        src = mod.file_node
        graph.setdefault(src, {})
        refs = list(mod.refs)
        # A re-exported name that the module's own code also uses is an import
        # too (`pub(crate) use crate::b::B;` then `B::new()`).
        refs += [path for name, path in mod.reexports.items() if name in mod.names]
        for seg in refs:
            t = resolve(modules, mp, seg)
            if t is None:
                continue
            dst = file_node(modules, t)
            if dst == src or dst not in modules:
                continue
            graph[src].setdefault(dst, "::".join(seg))
    return graph


def sccs(graph) -> list[list]:
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for v0 in sorted(graph):
        if v0 in index:
            continue
        work = [(v0, iter(sorted(graph.get(v0, {}))))]
        index[v0] = low[v0] = counter[0]
        counter[0] += 1
        stack.append(v0)
        on.add(v0)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, {})))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def shortest_cycle(graph, comp) -> list:
    """A shortest cycle inside one component (BFS from each node)."""
    members = set(comp)
    best = None
    for s in comp:
        prev = {s: None}
        q = deque([s])
        found = None
        while q and found is None:
            v = q.popleft()
            for w in sorted(graph.get(v, {})):
                if w not in members:
                    continue
                if w == s:
                    found = v
                    break
                if w not in prev:
                    prev[w] = v
                    q.append(w)
        if found is not None:
            path = [found]
            while prev[path[-1]] is not None:
                path.append(prev[path[-1]])
            cyc = list(reversed(path))
            if best is None or len(cyc) < len(best):
                best = cyc
    return best or comp


def name(crate: str, m: tuple[str, ...]) -> str:
    return "::".join((crate,) + m) if m else crate


def crate_name(src: Path) -> str:
    manifest = src.parent / "Cargo.toml"
    if manifest.is_file():
        m = re.search(r'^\[package\][^\[]*?^name\s*=\s*"([^"]+)"', manifest.read_text(), re.M | re.S)
        if m:
            return m.group(1)
    return src.parent.name if src.name == "src" else src.name


def check(src: Path, include_tests: bool, show_all: bool) -> tuple[int, int, list[str]]:
    crate = crate_name(src)
    modules = load_crate(src, include_tests)
    graph = build_graph(modules)
    lines = []
    comps = sccs(graph)
    for comp in comps:
        cyc = shortest_cycle(graph, comp)
        loop = cyc + [cyc[0]]
        lines.append(f"{crate}: import circle of {len(comp)} modules; a shortest one:")
        for a, b in zip(loop, loop[1:]):
            lines.append(f"    {name('crate', a)} -> {name('crate', b)}    (names `{graph[a][b]}`)")
        if show_all:
            members = set(comp)
            lines.append("    every import inside it:")
            for a in comp:
                for b in sorted(graph.get(a, {})):
                    if b in members:
                        lines.append(f"      {name('crate', a)} -> {name('crate', b)}    (`{graph[a][b]}`)")
    files = len({m.file_node for m in modules.values()})
    return files, len(comps), lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", nargs="*", type=Path, help="crate src/ folders (default: src/ and crates/*/src)")
    ap.add_argument("--include-tests", action="store_true", help="also count #[cfg(test)] code")
    ap.add_argument("--all", action="store_true", help="also list every import inside each circle")
    args = ap.parse_args()
    top = Path(__file__).resolve().parent.parent
    srcs = args.src or ([top / "src"] if (top / "src").is_dir() else []) + sorted((top / "crates").glob("*/src"))
    total_files, total_cycles, out = 0, 0, []
    for src in srcs:
        if not src.is_dir():
            print(f"check-cycles: {src}: not a folder", file=sys.stderr)
            return 2
        files, ncyc, lines = check(src, args.include_tests, args.all)
        total_files += files
        total_cycles += ncyc
        out += lines
    if total_cycles:
        print("\n".join(out))
        print(f"check-cycles: FAIL: {total_cycles} import circle(s) in {len(srcs)} crate(s); "
              "break each by moving the shared item down a layer (or into its own module)")
        return 1
    print(f"check-cycles: ok: no import circle in {len(srcs)} crate(s), {total_files} module files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
