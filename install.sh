#!/usr/bin/env bash
# Builds gate in release mode and installs the binary. Idempotent: running it again replaces it.
#   ./install.sh                      installs into ~/.cargo/bin (cargo install --path .)
#   ./install.sh --prefix DIR         installs into DIR/bin
#   ./install.sh --hook [REPO]        also installs the pre-push hook into REPO (default: .)
#   ./install.sh --hook REPO --chain  keeps REPO's existing pre-push hook, run before gate's
set -euo pipefail

prefix=""
hook_repo=""
chain=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --hook)
      if [ $# -gt 1 ] && [ "${2#-}" = "$2" ]; then hook_repo="$2"; shift 2; else hook_repo="."; shift; fi ;;
    --hook=*) hook_repo="${1#--hook=}"; shift ;;
    --chain) chain="--chain"; shift ;;
    -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument \`$1\` (see --help)" >&2; exit 3 ;;
  esac
done
if [ -n "$chain" ] && [ -z "$hook_repo" ]; then
  echo "install.sh: --chain goes with --hook" >&2; exit 3
fi
# Paths the caller gave are relative to where they ran this script, not to gate's checkout.
if [ -n "$hook_repo" ]; then hook_repo="$(cd "$hook_repo" && pwd)"; fi
if [ -n "$prefix" ]; then mkdir -p "$prefix" && prefix="$(cd "$prefix" && pwd)"; fi
cd "$(dirname "$0")"

if [ -n "$prefix" ]; then
  cargo install --quiet --locked --force --path . --root "$prefix"
  bin="$prefix/bin/gate"
else
  cargo install --quiet --locked --force --path .
  bin="${CARGO_HOME:-$HOME/.cargo}/bin/gate"
fi
echo "installed $("$bin" --version) at $bin"

if [ -n "$hook_repo" ]; then
  "$bin" install-hook --repo "$hook_repo" $chain
fi
