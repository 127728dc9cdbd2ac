#!/usr/bin/env bash
# Builds gate in release mode and installs the binary. Idempotent: running it again replaces it.
#   ./install.sh                 installs into ~/.cargo/bin (cargo install --path .)
#   ./install.sh --prefix DIR    installs into DIR/bin
set -euo pipefail
cd "$(dirname "$0")"

prefix=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    -h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument \`$1\` (see --help)" >&2; exit 3 ;;
  esac
done

if [ -n "$prefix" ]; then
  cargo install --quiet --locked --force --path . --root "$prefix"
  bin="$prefix/bin/gate"
else
  cargo install --quiet --locked --force --path .
  bin="${CARGO_HOME:-$HOME/.cargo}/bin/gate"
fi
echo "installed $("$bin" --version) at $bin"
