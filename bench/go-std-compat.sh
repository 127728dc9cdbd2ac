#!/usr/bin/env bash
# Go compatibility check: gate's package selection against `go list -deps -test` over the Go
# standard library of the installed toolchain (modules std and cmd, vendor included).
#   bench/go-std-compat.sh [--runs N] [--sample N] [--json FILE]
# Prints recall (must be 100%), extra selections and why, and gate's time against go list's.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
gate="${GATE:-$here/../target/release/gate}"
if [ -z "${GATE:-}" ]; then (cd "$here/.." && cargo build --release --locked --quiet); fi
goroot="$(go env GOROOT)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# gate gates git trees: the library's sources become one commit.
cp -rL "$goroot/src" "$work/src"
git -C "$work/src" init -q -b master
git -C "$work/src" add -A >/dev/null 2>&1
git -C "$work/src" -c user.name=bench -c user.email=bench@example.com commit -q -m std
python3 "$here/go_std_compat.py" --repo "$work/src" --goroot-src "$goroot/src" --gate "$gate" "$@"
