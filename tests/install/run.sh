#!/usr/bin/env bash
# Installed-copy test (make test-install). Installs the release build into a
# scratch prefix outside the repository, then builds and runs fresh projects
# the way a user of each ecosystem would, none of them with LD_LIBRARY_PATH
# or HERMES_TOOLS_LIB:
#   1. C and C++ with `pkg-config --cflags --libs hermes_tools` (its rpath)
#   2. a CMake project with find_package(hermes_tools): shared C and C++,
#      static C; then `cmake --install` of it, run from its install folder
#   3. Go: a new module that `go get`s github.com/hermes-tools/hermes-tools/bindings/go
#      from a local module proxy holding exactly what the repository tag
#      bindings/go/vX.Y.Z would hold, built with -tags hermes_pkgconfig
#   4. Node: `npm pack` (scripts/npm-pack.sh: the library bundled) installed
#      into a new npm project
#   5. Python: `pip install bindings/python` (a wheel with the library
#      bundled) into a new virtual environment
# The only locators given are build-time ones any user of a non-standard
# prefix gives: PKG_CONFIG_PATH and CMAKE_PREFIX_PATH.
#   tests/install/run.sh [SCRATCH_DIR]   (default: a new folder under $TMPDIR)
# The scratch folder is removed on success and kept (and named) on failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
if [ $# -gt 0 ]; then
  root=$1; rm -rf "$root"; mkdir -p "$root"; root=$(cd "$root" && pwd)
else
  root=$(mktemp -d "${TMPDIR:-/tmp}/hermes-tools-install.XXXXXX")
fi
case "$root/" in "$top"/*) echo "install test: $root is inside the repository; use a folder outside it" >&2; exit 2 ;; esac
prefix="$root/prefix"
trap 'rc=$?; if [ $rc = 0 ]; then rm -rf "$root"; else echo "install test: FAILED (exit $rc); files kept in $root" >&2; fi' EXIT
unset LD_LIBRARY_PATH HERMES_TOOLS_LIB HERMES_TOOLS_BUNDLE_LIB PYTHONPATH NODE_PATH
passed=0
ok() { passed=$((passed + 1)); echo "  ok: $*"; }
fail() { echo "install test: FAIL: $*" >&2; exit 1; }

version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$top/Cargo.toml" | head -n1)
${MAKE:-make} -C "$top" --no-print-directory install PREFIX="$prefix" >"$root/install.log" 2>&1 ||
  { cat "$root/install.log" >&2; fail "make install"; }
soname=$(readelf -d "$prefix/lib/libhermes_tools.so.$version" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
echo "installed hermes-tools $version into $prefix (SONAME $soname)"

# --- layout: real file, SONAME link, development link ------------------------
[ -f "$prefix/lib/libhermes_tools.so.$version" ] && [ ! -L "$prefix/lib/libhermes_tools.so.$version" ] ||
  fail "libhermes_tools.so.$version is not a regular file"
[ -n "$soname" ] || fail "the installed library has no SONAME"
[ "$(readlink "$prefix/lib/$soname")" = "libhermes_tools.so.$version" ] || fail "$soname does not point to libhermes_tools.so.$version"
[ "$(readlink "$prefix/lib/libhermes_tools.so")" = "$soname" ] || fail "libhermes_tools.so does not point to $soname"
# The command line is installed and runs (exit 4: the command is blocked).
set +e; "$prefix/bin/hermes-tools" check "rm -rf /" >/dev/null; cli_status=$?; set -e
[ "$cli_status" = 4 ] || fail "installed hermes-tools check: exit $cli_status, expected 4"
echo "ok: $prefix/bin/hermes-tools"
ok "layout: libhermes_tools.so -> $soname -> libhermes_tools.so.$version"
# Stripped, with the debug info beside it and a debuglink to it.
sections=$(readelf -S "$prefix/lib/libhermes_tools.so.$version")
if grep -q '\.debug_' <<<"$sections"; then fail "the installed library still carries debug sections"; fi
grep -q '\.gnu_debuglink' <<<"$sections" || fail "the installed library has no .gnu_debuglink"
grep -q '\.debug_line' <<<"$(readelf -S "$prefix/lib/.debug/libhermes_tools.so.$version.debug")" ||
  fail "lib/.debug/libhermes_tools.so.$version.debug holds no line tables"
ok "stripped: $(stat -c %s "$prefix/lib/libhermes_tools.so.$version") bytes, debug info in lib/.debug/"
# The features header says what ht_features() says.
grep -q '^#define HT_HAVE_MCP_CLIENT [01]$' "$prefix/include/hermes_tools_features.h" ||
  fail "include/hermes_tools_features.h lacks HT_HAVE_MCP_CLIENT"

# A program must record the SONAME, carry an rpath to the prefix and load the
# installed copy with a clean environment.
# (Outputs go through variables, not `cmd | grep -q`: with pipefail, grep's
# early exit can kill the writer with SIGPIPE and fail a passing check.)
check_binary() { # check_binary PROGRAM LABEL
  local dyn libs
  dyn=$(readelf -d "$1"); libs=$(ldd "$1")
  grep -q "NEEDED.*\[$soname\]" <<<"$dyn" || fail "$2: does not record $soname as NEEDED"
  grep -Eq "(RUNPATH|RPATH).*$prefix/lib" <<<"$dyn" || fail "$2: no rpath to $prefix/lib"
  grep -q "$soname => $prefix/lib/$soname" <<<"$libs" || { echo "$libs" >&2; fail "$2: does not load the installed library"; }
  local rc=0
  "$1" >"$root/run.log" 2>&1 || rc=$?
  [ $rc = 0 ] || { cat "$root/run.log" >&2; fail "$2: exit status $rc"; }
  grep -q ": ok" "$root/run.log" || { cat "$root/run.log" >&2; fail "$2: no ok line"; }
  ok "$2: $(cat "$root/run.log")"
}

# --- 1. pkg-config -----------------------------------------------------------
cp "$here/main.c" "$here/main.cpp" "$here/CMakeLists.txt" "$root/"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg-config --exists --print-errors hermes_tools
echo "  pkg-config $(pkg-config --modversion hermes_tools): $(pkg-config --cflags --libs hermes_tools)"
cc -std=c11 -Wall -Wextra -Werror "$root/main.c" -o "$root/pc_c" $(pkg-config --cflags --libs hermes_tools)
check_binary "$root/pc_c" "C (pkg-config)"
c++ -std=c++17 -Wall -Wextra -Werror "$root/main.cpp" -o "$root/pc_cpp" $(pkg-config --cflags --libs hermes_tools) -pthread
check_binary "$root/pc_cpp" "C++ (pkg-config)"

# --- 2. CMake ----------------------------------------------------------------
cmake -S "$root" -B "$root/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$root/cmake-app" >"$root/cmake.log" 2>&1 || { cat "$root/cmake.log" >&2; fail "cmake configure"; }
cmake --build "$root/cmake-build" -j2 >>"$root/cmake.log" 2>&1 || { cat "$root/cmake.log" >&2; fail "cmake build"; }
check_binary "$root/cmake-build/cmake_c" "CMake C"
check_binary "$root/cmake-build/cmake_cpp" "CMake C++"
if grep -q libhermes_tools <<<"$(readelf -d "$root/cmake-build/cmake_static")"; then fail "cmake_static is not statically linked"; fi
grep -q ": ok" <<<"$("$root/cmake-build/cmake_static")" || fail "CMake static C"
ok "CMake static C"
cmake --install "$root/cmake-build" >>"$root/cmake.log" 2>&1 || { cat "$root/cmake.log" >&2; fail "cmake --install"; }
check_binary "$root/cmake-app/bin/cmake_c" "CMake C after cmake --install"

# --- 3. Go -------------------------------------------------------------------
# A module proxy folder (the GOPROXY protocol over file://) holding the module
# as the tag bindings/go/v$version would publish it: bindings/go's tracked
# files only, none of the repository around it.
gomod=github.com/hermes-tools/hermes-tools/bindings/go
grep -q "^module $gomod\$" "$top/bindings/go/go.mod" || fail "bindings/go/go.mod does not declare module $gomod"
proxy="$root/goproxy"
mkdir -p "$proxy/$gomod/@v"
(cd "$top/bindings/go" && { git ls-files . 2>/dev/null || find . -type f; } | sed 's|^\./||') >"$root/go-files"
[ -s "$root/go-files" ] || find "$top/bindings/go" -type f -printf '%P\n' >"$root/go-files"
python3 - "$top/bindings/go" "$proxy/$gomod/@v/v$version.zip" "$gomod@v$version" "$root/go-files" <<'EOF'
import sys, zipfile
src, out, prefix, listing = sys.argv[1:]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for rel in open(listing).read().split():
        z.write(f"{src}/{rel}", f"{prefix}/{rel}")
EOF
cp "$top/bindings/go/go.mod" "$proxy/$gomod/@v/v$version.mod"
printf '{"Version":"v%s","Time":"2025-01-01T00:00:00Z"}\n' "$version" >"$proxy/$gomod/@v/v$version.info"
echo "v$version" >"$proxy/$gomod/@v/list"
mkdir -p "$root/go-app"
cat >"$root/go-app/main.go" <<'EOF'
package main

import (
	"fmt"

	ht "github.com/hermes-tools/hermes-tools/bindings/go"
)

func main() {
	rt, err := ht.New(`{}`)
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	fmt.Printf("go_app: ok (%s, Go)\n", ht.Version())
}
EOF
(
  cd "$root/go-app"
  # A build cache of its own: go does not key cached cgo packages on the
  # pkg-config output, so a cache from an earlier run would link the rpath of
  # that run's (deleted) prefix.
  export GOCACHE="$root/gocache" GOPATH="$root/gopath"
  export GOPROXY="file://$proxy" GOSUMDB=off GOWORK=off GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=1
  go mod init example.com/go-app >/dev/null 2>&1
  go get "$gomod@v$version" >"$root/go.log" 2>&1 || { cat "$root/go.log" >&2; exit 1; }
  go build -tags hermes_pkgconfig -o go_app . >>"$root/go.log" 2>&1 || { cat "$root/go.log" >&2; exit 1; }
) || fail "Go: go get $gomod@v$version / go build -tags hermes_pkgconfig"
check_binary "$root/go-app/go_app" "Go (go get, pkg-config)"

# --- 4. Node -----------------------------------------------------------------
"$top/scripts/npm-pack.sh" "$root/npm" >"$root/npm.log" 2>&1 || { cat "$root/npm.log" >&2; fail "npm pack"; }
tgz=$(ls "$root"/npm/hermes-tools-*.tgz)
mkdir -p "$root/node-app"
cat >"$root/node-app/main.js" <<'EOF'
const ht = require('hermes-tools');
const rt = new ht.Runtime({});
rt.close().then(() => console.log(`node_app: ok (${ht.version()}, Node, ${ht.libraryPath})`));
EOF
(
  cd "$root/node-app"
  npm init -y >/dev/null
  npm install --no-audit --no-fund --loglevel=error "$tgz" >>"$root/npm.log" 2>&1 || { cat "$root/npm.log" >&2; exit 1; }
) || fail "Node: npm install $tgz"
(cd "$root/node-app" && node main.js) >"$root/run.log" 2>&1 ||
  { cat "$root/run.log" >&2; fail "Node: the packed binding did not load its bundled native/libhermes_tools.so (bindings/node/index.js must try path.join(__dirname, 'native', 'libhermes_tools.so'); packaging/README.md)"; }
grep -q "node_modules/hermes-tools/native/libhermes_tools.so" "$root/run.log" || { cat "$root/run.log" >&2; fail "Node: loaded a library other than the bundled one"; }
ok "Node (npm pack + install): $(cat "$root/run.log")"

# --- 5. Python ---------------------------------------------------------------
python3 -m venv "$root/venv"
# Without the PKG_CONFIG_PATH exported for sections 1-3: openssl-sys's build
# script watches it, so a changed value made the wheel's `cargo build
# --release` rebuild openssl-sys and everything above it (reqwest, rmcp,
# every crate of ours) a second time, which also filled CI's disk.
env -u PKG_CONFIG_PATH "$root/venv/bin/pip" install -v --disable-pip-version-check "$top/bindings/python" >"$root/pip.log" 2>&1 ||
  { cat "$root/pip.log" >&2; fail "Python: pip install bindings/python"; }
# One release build serves the wheel too: cargo, run by the wheel's build
# hook after `make install`, must find everything current.
if grep -E '^\s*Compiling ' "$root/pip.log" >&2; then fail "Python: the wheel's cargo build recompiled what make install had built"; fi
cat >"$root/py_app.py" <<'EOF'
import hermes_tools
with hermes_tools.Runtime() as rt:
    print(f"py_app: ok ({hermes_tools.version()}, Python, {hermes_tools._ffi.lib._name})")
EOF
(cd "$root" && "$root/venv/bin/python" py_app.py) >"$root/run.log" 2>&1 || { cat "$root/run.log" >&2; fail "Python: the wheel's binding"; }
grep -q "site-packages/hermes_tools/libhermes_tools.so" "$root/run.log" || { cat "$root/run.log" >&2; fail "Python: loaded a library other than the bundled one"; }
ok "Python (pip install bindings/python): $(cat "$root/run.log")"

echo "install: $passed passed, 0 failed"
