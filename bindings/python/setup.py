"""Build hook of the hermes_tools wheel: bundle libhermes_tools.so.

The wheel carries the C library next to the binding (hermes_tools/
libhermes_tools.so), so `pip install bindings/python` gives a package that
works without HERMES_TOOLS_LIB or a system-wide install. Where the library
comes from, first match wins:

1. HERMES_TOOLS_BUNDLE_LIB=/path/to/libhermes_tools.so (packagers, CI);
2. inside the repository checkout: `cargo build --release` in the repository
   root (a no-op when target/release is current), then
   target/release/libhermes_tools.so. When cargo is not installed, an
   existing target/release build is taken as it is.

Building outside the repository without (1) stops with one line saying so.
The library is copied into the build folder only, never into the source
tree, so in-repository tests keep loading target/debug.

The binding is ctypes only (no CPython extension), so the wheel is tagged
py3-none-<platform>: any Python 3, this platform's native library.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 ships bdist_wheel itself
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # older setuptools: the wheel package's
    from wheel.bdist_wheel import bdist_wheel

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
LIB_NAME = "libhermes_tools.so"


def fail(msg: str) -> "NoReturn":  # noqa: F821
    sys.exit(f"hermes_tools wheel: {msg}")


def find_library() -> Path:
    env = os.environ.get("HERMES_TOOLS_BUNDLE_LIB")
    if env:
        p = Path(env)
        if not p.is_file():
            fail(f"HERMES_TOOLS_BUNDLE_LIB={env} is not a file")
        return p
    if not (REPO / "Cargo.toml").is_file():
        fail("not inside the hermes-tools repository: set HERMES_TOOLS_BUNDLE_LIB to a built "
             f"{LIB_NAME}, or run pip install on bindings/python of a checkout")
    built = REPO / "target" / "release" / LIB_NAME
    cargo = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    if Path(cargo).is_file():
        print(f"hermes_tools wheel: cargo build --release in {REPO} (a first build takes "
              "several minutes; its progress is cargo's, on standard error)", file=sys.stderr)
        # The same command as `make release`: one build serves the
        # library, the CLI and this wheel (no second build with other features).
        r = subprocess.run(
            [cargo, "build", "--release", "-p", "hermes-tools", "-p", "hermes-tools-cli"],
            cwd=REPO,
        )
        if r.returncode != 0:
            fail(f"cargo build --release failed (exit {r.returncode})")
    elif not built.is_file():
        fail(f"cargo not found and {built} missing: install Rust or build the library first")
    if not built.is_file():
        fail(f"{built} missing after cargo build")
    return built


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        dest = Path(self.build_lib) / "hermes_tools" / LIB_NAME
        src = find_library()
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
        os.chmod(dest, 0o755)
        # DWARF line tables (release profile debug = 1) triple the size; symbols stay.
        if shutil.which("strip"):
            subprocess.run(["strip", "--strip-debug", str(dest)], check=True)
        print(f"hermes_tools wheel: bundled {src}", file=sys.stderr)


class PlatformWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False  # it carries a native library

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


setup(cmdclass={"build_py": BuildPyWithLibrary, "bdist_wheel": PlatformWheel})
