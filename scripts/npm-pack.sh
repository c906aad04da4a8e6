#!/usr/bin/env bash
# Pack the Node binding with the release library bundled:
#   scripts/npm-pack.sh OUT_DIR   ->  OUT_DIR/hermes-tools-<version>.tgz
# The package is staged in OUT_DIR/stage (the files that package.json's
# "files" lists, plus native/libhermes_tools.so), so the source folder never
# holds a library copy that could shadow target/debug during the tests. The
# staged package.json gets "os"/"cpu" of this machine: the bundled library is
# a native binary for it alone.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: npm-pack.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
lib="$top/target/release/libhermes_tools.so"
[ -f "$lib" ] || { echo "npm-pack: $lib missing: run 'make release' first" >&2; exit 1; }

stage="$out/stage"
rm -rf "$stage"
mkdir -p "$stage/native"
cd "$top/bindings/node"
# The files npm itself would pack from the source folder (package.json "files").
npm pack --dry-run --json 2>/dev/null |
  node -e 'for (const f of JSON.parse(require("fs").readFileSync(0, "utf8"))[0].files) console.log(f.path)' |
  while IFS= read -r f; do mkdir -p "$stage/$(dirname "$f")"; cp "$f" "$stage/$f"; done
install -m 755 "$lib" "$stage/native/libhermes_tools.so"
# DWARF line tables (release profile debug = 1) triple the size; symbols stay.
if command -v strip >/dev/null; then strip --strip-debug "$stage/native/libhermes_tools.so"; fi
node -e '
  const fs = require("fs"), p = process.argv[1] + "/package.json";
  const pkg = JSON.parse(fs.readFileSync(p, "utf8"));
  pkg.os = [process.platform]; pkg.cpu = [process.arch];
  fs.writeFileSync(p, JSON.stringify(pkg, null, 2) + "\n");' "$stage"
rm -f "$out"/hermes-tools-*.tgz
(cd "$stage" && npm pack --pack-destination "$out" --loglevel=error >/dev/null)
ls "$out"/hermes-tools-*.tgz
