#!/usr/bin/env bash
# gate's benchmark: synthetic Python and Go monorepos and real corpora, gate against its peers
# (ruff analyze graph, go list -deps -test, git diff --name-only), medians of several runs.
#   bench/run.sh [--sizes 10000,50000,100000] [--runs 5] [--cold-runs 3]
#                [--corpora synthetic,django,gostd] [--kinds python,go]
#                [--json bench/results.json] [--work DIR]
# Needs: cargo, git, python3 with pip (installs ruff), go (for the Go corpora), /usr/bin/time.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
(cd "$here/.." && cargo build --release --locked --quiet)
if ! command -v ruff >/dev/null 2>&1; then
  python3 -m pip install --quiet ruff 2>/dev/null || python3 -m pip install --quiet --break-system-packages ruff
fi
exec python3 "$here/bench.py" --gate "$here/../target/release/gate" "$@"
