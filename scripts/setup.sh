#!/usr/bin/env bash
# Install what `make test` needs on a fresh Debian (bookworm) machine.
#
#   scripts/setup.sh               install what is missing (apt as root, or
#                                  through sudo), then the project-local parts
#   scripts/setup.sh --check       what `make test` runs first: the same as
#                                  root; as another user it never calls sudo
#                                  and stops with one line naming the command
#   scripts/setup.sh --with mcp    also install optional groups (below)
#   scripts/setup.sh --dry-run     print what is missing, install nothing
#   HT_SETUP_WITH=mcp make test       the same through make
#
# Idempotent and quick when everything is there (no apt, no network): each
# system tool is looked up by command, each project-local part by a stamp.
# System packages are checked by command rather than by package name because
# Node and Python often come from elsewhere (nodesource, pyenv) and
# installing Debian's package over them would clash.
#
# Project-local parts (never need root):
#   build/venv            Python virtual environment with pytest (PEP 668:
#                         Debian's python3 refuses a global `pip install`)
#   bindings/node/node_modules   `npm ci` from package-lock.json
#   build/tools           npm packages: the reference MCP servers the tests run
#   build/tools/node22    Node 22 and the MCP conformance suite (npm packages)
set -euo pipefail
cd "$(dirname "$0")/.."

# ---------------------------------------------------------------------------
# What to install. Each apt entry is CHECK:PACKAGE, CHECK being a command on
# PATH or an absolute path that must exist.
APT_CORE=(
  cc:build-essential make:build-essential c++:g++
  pkg-config:pkg-config cmake:cmake
  valgrind:valgrind bwrap:bubblewrap
  rg:ripgrep
  go:golang-go
  node:nodejs npm:npm
  python3:python3
  /usr/sbin/sshd:openssh-server ssh:openssh-client
  /usr/sbin/dockerd:docker.io podman:podman
  /usr/include/nlohmann/json.hpp:nlohmann-json3-dev
  /usr/include/openssl/ssl.h:libssl-dev openssl:openssl
)

# Optional groups, installed only when named with --with / HT_SETUP_WITH.
# To add a group: define APT_<group>, NPM_<group> and/or PIP_<group>, and list
# it in OPTIONAL_GROUPS. To make one part of every setup, move its entries
# into APT_CORE / NPM_CORE / PIP_CORE.
OPTIONAL_GROUPS=(mcp)
NPM_mcp=()
PIP_mcp=()

# Always: pytest in build/venv for the Python binding's tests, and the
# official Python MCP SDK (pinned) that tests `hermes-tools mcp serve`.
PIP_CORE=(pytest mcp==2.3.0)
# Always: the reference MCP servers the MCP client's tests run, and the
# TypeScript SDK whose client tests `hermes-tools mcp serve`
# (crates/runtime/tests/mcp_*.rs find them in build/tools/node_modules). Pinned:
# the tests name their tools.
NPM_CORE=(@modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31 @modelcontextprotocol/sdk@1.32.2)
# Always: the official MCP conformance suite, which `make test-mcp-conformance`
# (mk/mcp-conformance.mk) runs against `ht_runtime_serve_mcp`, and the Node 22
# it needs (Debian ships Node 20; the npm package `node` ships a node binary),
# in a folder of their own. Pinned: the fixture host names the scenarios' tools.
NPM_NODE22=(node@22.23.3 @modelcontextprotocol/conformance@0.1.16)
NODE22=build/tools/node22
# ---------------------------------------------------------------------------

VENV=build/venv
TOOLS=build/tools
check_only=0
dry_run=0
with="${HT_SETUP_WITH:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check_only=1 ;;
    --dry-run) dry_run=1 ;;
    --with) with="${with:+$with,}${2:?--with needs a group list}"; shift ;;
    --with=*) with="${with:+$with,}${1#--with=}" ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup: unknown argument '$1' (see scripts/setup.sh --help)" >&2; exit 2 ;;
  esac
  shift
done

groups=()
IFS=',' read -r -a groups <<<"$with"
for g in "${groups[@]}"; do
  [ -n "$g" ] || continue
  case " ${OPTIONAL_GROUPS[*]} " in
    *" $g "*) ;;
    *) echo "setup: unknown group '$g' (known: ${OPTIONAL_GROUPS[*]})" >&2; exit 2 ;;
  esac
done

# Collect the entries of the core list plus the chosen groups.
list() { # list KIND  ->  prints the entries of KIND_CORE and KIND_<group>
  local kind=$1 g arr
  arr="${kind}_CORE[@]"; printf '%s\n' "${!arr-}"
  for g in "${groups[@]}"; do
    [ -n "$g" ] || continue
    arr="${kind}_${g}[@]"; printf '%s\n' "${!arr-}"
  done
}

have() { case "$1" in /*) [ -e "$1" ] ;; *) command -v "$1" >/dev/null 2>&1 ;; esac; }

# --- 1. System packages ------------------------------------------------------
missing=()
while IFS= read -r entry; do
  [ -n "$entry" ] || continue
  check=${entry%%:*}; pkg=${entry#*:}
  if ! have "$check"; then
    case " ${missing[*]-} " in *" $pkg "*) ;; *) missing+=("$pkg") ;; esac
  fi
done < <(list APT)
# python3 may be there without venv/ensurepip: Debian splits them out into
# python3-venv (`python3 -m venv` then fails), other Pythons (pyenv) have them.
if have python3; then
  if [ "$(command -v python3)" = /usr/bin/python3 ] && have dpkg-query &&
     [[ "$(dpkg-query -W -f='${Status}' python3-venv 2>/dev/null)" != *"ok installed"* ]]; then
    missing+=(python3-venv)
  elif ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    missing+=(python3-venv)
  fi
fi

if [ $dry_run = 1 ]; then
  echo "setup (dry run): apt: ${missing[*]:-nothing missing}"
  echo "setup (dry run): pip into build/venv: $(list PIP | xargs)"
  echo "setup (dry run): npm into build/tools: $(list NPM | xargs)"
  echo "setup (dry run): npm into $NODE22: ${NPM_NODE22[*]}"
  exit 0
fi

if [ ${#missing[@]} -gt 0 ]; then
  cmd="apt-get install -y ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then
    sudo=""
  elif [ $check_only = 0 ] && have sudo; then
    sudo="sudo"
  else
    echo "setup: missing system packages ${missing[*]}: run 'sudo apt-get update && sudo $cmd' (or 'make setup' as a user with sudo), then make test again" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Rust toolchain comes from rustup, not apt (Debian's rustc is too old
# for edition 2024).
if ! have cargo; then
  echo "setup: cargo not found: install the Rust toolchain (rustup, stable >= 1.88) and put ~/.cargo/bin on PATH" >&2
  exit 1
fi

# --- 2. Python: build/venv with pytest (+ optional packages) -----------------
pip_want=()
while IFS= read -r p; do [ -n "$p" ] && pip_want+=("$p"); done < <(list PIP)
pip_stamp="$VENV/.setup-$(printf '%s ' "${pip_want[@]}" | cksum | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ ! -e "$pip_stamp" ]; then
  echo "setup: python venv $VENV with ${pip_want[*]}"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${pip_want[@]}"
  rm -f "$VENV"/.setup-*
  touch "$pip_stamp"
fi

# --- 3. Node: the binding's packages (package-lock.json) + optional tools ----
if [ -f bindings/node/package-lock.json ] &&
   { [ ! -f bindings/node/node_modules/.package-lock.json ] ||
     [ bindings/node/package-lock.json -nt bindings/node/node_modules/.package-lock.json ]; }; then
  echo "setup: npm ci in bindings/node"
  (cd bindings/node && npm ci --no-audit --no-fund --loglevel=error)
fi
npm_want=()
while IFS= read -r p; do [ -n "$p" ] && npm_want+=("$p"); done < <(list NPM)
if [ ${#npm_want[@]} -gt 0 ]; then
  npm_stamp="$TOOLS/.setup-$(printf '%s ' "${npm_want[@]}" | cksum | cut -d' ' -f1)"
  if [ ! -e "$npm_stamp" ]; then
    echo "setup: npm packages ${npm_want[*]} into $TOOLS"
    mkdir -p "$TOOLS"
    npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error "${npm_want[@]}"
    rm -f "$TOOLS"/.setup-*
    touch "$npm_stamp"
  fi
fi
node22_stamp="$NODE22/.setup-$(printf '%s ' "${NPM_NODE22[@]}" | cksum | cut -d' ' -f1)"
if [ ! -e "$node22_stamp" ] || [ ! -x "$NODE22/node_modules/.bin/node" ]; then
  echo "setup: npm packages ${NPM_NODE22[*]} into $NODE22"
  mkdir -p "$NODE22"
  npm install --prefix "$NODE22" --no-audit --no-fund --loglevel=error "${NPM_NODE22[@]}"
  rm -f "$NODE22"/.setup-*
  touch "$node22_stamp"
fi

echo "setup: ok ($(cargo --version | cut -d' ' -f1-2), $(go version 2>/dev/null | cut -d' ' -f3), node $(node --version), $("$VENV/bin/python" --version), cmake $(cmake --version | head -1 | cut -d' ' -f3)${with:+; with $with})"
