#!/usr/bin/env bash
# Shard packing against its lower bound: heavy-tailed synthetic suites (Pareto, lognormal; 200,
# 2,000, 20,000 units, seeded) and a real project's pytest suite (an sdist from PyPI, run once),
# recorded with `gate record --junit` and packed by `gate shards --suggest --json`.
#   bench/shards.sh [--units 200,2000,20000] [--seed 1] [--real networkx==3.6.1] [--max 32]
#                   [--work DIR] [--json FILE]
# Needs: cargo, git, python3 with pip and pytest. --work DIR keeps the real suite's run.
# Exits 1 when a packing is more than 5% over its bound where the bound is not the longest unit.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
gate="${GATE:-${CARGO_TARGET_DIR:-$here/../target}/release/gate}"
if [ -z "${GATE:-}" ]; then (cd "$here/.." && cargo build --release --locked --quiet); fi
exec python3 "$here/shards.py" --gate "$gate" "$@"
