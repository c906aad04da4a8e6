#!/bin/sh
# Installed-copy test (make test-install): install into a temporary prefix,
# then build and run programs against that copy only (no source-tree paths):
#   1. C with `pkg-config --cflags --libs hermes_tools`
#   2. C++ (hermes_tools.hpp) with pkg-config
#   3. a tiny CMake project with find_package(hermes_tools): shared C, C++ and static C
set -eu
root=${1:?usage: run.sh <scratch dir>}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
prefix="$root/prefix"
rm -rf "$root"
mkdir -p "$root"

${MAKE:-make} -C "$top" --no-print-directory install PREFIX="$prefix" >"$root/install.log"
echo "installed into $prefix:"
(cd "$prefix" && find . -type f | sort | sed 's/^/  /')

# Sources are copied out so nothing can include from the source tree.
cp "$here/main.c" "$here/main.cpp" "$here/CMakeLists.txt" "$root/"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg-config --exists --print-errors hermes_tools
echo "pkg-config: $(pkg-config --modversion hermes_tools): $(pkg-config --cflags --libs hermes_tools)"
libdir=$(pkg-config --variable=libdir hermes_tools)

check_links_installed() {
  if ! ldd "$1" | grep -q "$prefix/lib/libhermes_tools.so"; then
    echo "FAIL: $1 does not load the installed library:" >&2
    ldd "$1" >&2
    exit 1
  fi
}

cc -std=c11 -Wall -Wextra -Werror "$root/main.c" -o "$root/pc_c" \
  $(pkg-config --cflags --libs hermes_tools) -Wl,-rpath,"$libdir"
check_links_installed "$root/pc_c"
"$root/pc_c"

c++ -std=c++17 -Wall -Wextra -Werror "$root/main.cpp" -o "$root/pc_cpp" \
  $(pkg-config --cflags --libs hermes_tools) -pthread -Wl,-rpath,"$libdir"
check_links_installed "$root/pc_cpp"
"$root/pc_cpp"

cmake -S "$root" -B "$root/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Debug >"$root/cmake.log"
cmake --build "$root/cmake-build" -j2 >>"$root/cmake.log"
check_links_installed "$root/cmake-build/cmake_c"
"$root/cmake-build/cmake_c"
"$root/cmake-build/cmake_cpp"
if ldd "$root/cmake-build/cmake_static" | grep -q libhermes_tools; then
  echo "FAIL: cmake_static is not statically linked" >&2
  exit 1
fi
"$root/cmake-build/cmake_static"
extra=""
# The Go binding against the installed copy: build tag hermes_pkgconfig.
if command -v go >/dev/null 2>&1; then
  (cd "$top/examples/go" && GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1 \
     go build -tags hermes_pkgconfig -o "$root/go_example" .)
  if ! LD_LIBRARY_PATH="$libdir" ldd "$root/go_example" | grep -q "$prefix/lib/libhermes_tools.so"; then
    echo "FAIL: the Go example does not load the installed library" >&2
    exit 1
  fi
  LD_LIBRARY_PATH="$libdir" "$root/go_example" >"$root/go_example.log"
  tail -n1 "$root/go_example.log" | grep -qx ok
  echo "go_example (hermes_pkgconfig): ok"
  extra=", Go via pkg-config"
fi
echo "test-install: ok (pkg-config C, pkg-config C++, CMake C, CMake C++, CMake static C$extra)"
