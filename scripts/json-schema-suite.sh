#!/bin/sh
# `make conformance`: the official JSON-Schema-Test-Suite's required tests
# for drafts 2020-12 and 07 through our argument validator
# (crates/core/tests/schema_suite.rs), remote references left out.
#
# The suite is fetched at run time, at a pinned commit, into
# build/json-schema-test-suite (kept for later runs). HT_JSON_SCHEMA_SUITE
# names a copy already on disk instead (HT_JSON_SCHEMA_SUITE_REPO, a
# mirror to fetch from). Without network and without a
# copy, it says so and succeeds: nothing was tested.
set -eu

REPO=${HT_JSON_SCHEMA_SUITE_REPO:-https://github.com/json-schema-org/JSON-Schema-Test-Suite}
COMMIT=44401e0c046704b476ec9d2e2fccdaee618f259d
CARGO=${CARGO:-cargo}

if [ -n "${HT_JSON_SCHEMA_SUITE:-}" ]; then
    dir=$HT_JSON_SCHEMA_SUITE
    [ -d "$dir/tests/draft2020-12" ] || { echo "conformance: $dir has no tests/draft2020-12" >&2; exit 1; }
else
    dir=build/json-schema-test-suite
    if [ "$(git -C "$dir" rev-parse HEAD 2>/dev/null || true)" != "$COMMIT" ]; then
        rm -rf "$dir.tmp"
        mkdir -p "$dir.tmp"
        # One commit, shallow; a quick failure when offline (no retries).
        if ! (cd "$dir.tmp" && git init -q &&
              GIT_TERMINAL_PROMPT=0 timeout 120 git fetch -q --depth 1 "$REPO" "$COMMIT" &&
              git -c advice.detachedHead=false checkout -q FETCH_HEAD) 2>/dev/null; then
            rm -rf "$dir.tmp"
            echo "conformance: SKIPPED: could not fetch $REPO at $COMMIT (offline?); set HT_JSON_SCHEMA_SUITE to a local copy to run it"
            exit 0
        fi
        rm -rf "$dir"
        mv "$dir.tmp" "$dir"
    fi
fi

HT_JSON_SCHEMA_SUITE=$(cd "$dir" && pwd) \
    $CARGO test -q -p hermes-core --test schema_suite -- --nocapture
