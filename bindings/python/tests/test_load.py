import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)


def _import_with(lib_path):
    env = dict(os.environ, HERMES_TOOLS_LIB=lib_path, PYTHONPATH=PKG)
    return subprocess.run(
        [sys.executable, "-c", "import hermes_tools"], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_abi_mismatch_is_refused(tmp_path):
    src = tmp_path / "fake.c"
    src.write_text("unsigned int ht_abi_version(void) { return 999; }\n")
    so = tmp_path / "libfake.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(so)], check=True)
    r = _import_with(str(so))
    assert r.returncode != 0
    assert "ABI mismatch" in r.stderr and "999" in r.stderr


def test_missing_library_is_a_clear_error(tmp_path):
    r = _import_with(str(tmp_path / "nope.so"))
    assert r.returncode != 0
    assert "cannot load libhermes_tools.so" in r.stderr


def test_interpreter_exit_with_open_runtime_is_clean():
    """A runtime left open (with a parked call) and a log handler still
    installed are cleaned up by atexit; the process exits normally."""
    script = (
        "import hermes_tools as h\n"
        "h.set_log_handler(lambda l, m: None, level=5)\n"
        "rt = h.Runtime()\n"
        "rt.register_tool({'name':'never','toolset':'t','schema':{'description':'x'}}, lambda c: c.defer())\n"
        "f = rt.dispatch_future('never', {}, context={'timeout': 100})\n"
        "print(rt.dispatch('never', {}, context={'timeout': 0.05})[:20])\n"
        "print('bye')\n"
    )
    env = dict(os.environ, PYTHONPATH=PKG)
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("bye")
