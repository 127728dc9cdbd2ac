#!/usr/bin/env bash
# Builds gate in release mode and installs the binary, its man pages and its shell completions.
# Idempotent: running it again replaces them.
#   ./install.sh                      installs into ~/.cargo/bin (cargo install --path .)
#   ./install.sh --prefix DIR         installs into DIR/bin, DIR/share/man, DIR/share/<shell>…
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
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

# cargo's own progress follows (not silenced): a first build compiles every dependency.
echo "install.sh: compiling gate from source with cargo (release build): several minutes the first time, as every dependency is compiled"
if [ -n "$prefix" ]; then
  cargo install --locked --force --path . --root "$prefix"
  root="$prefix"
else
  cargo install --locked --force --path .
  # Where cargo puts it without --root.
  root="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}"
fi
bin="$root/bin/gate"
echo "installed $("$bin" --version) at $bin"

# The man pages go next to the binary: man finds <dir>/../share/man for each <dir> on PATH.
# Completions go where each shell looks: under the prefix when one is given, else the user's own
# directories (bash-completion and fish read them; zsh reads its fpath).
man_dir="$root/share/man/man1"
if [ -n "$prefix" ]; then
  bash_dir="$prefix/share/bash-completion/completions"
  zsh_dir="$prefix/share/zsh/site-functions"
  fish_dir="$prefix/share/fish/vendor_completions.d"
else
  data="${XDG_DATA_HOME:-$HOME/.local/share}"
  bash_dir="$data/bash-completion/completions"
  zsh_dir="$data/zsh/site-functions"
  fish_dir="${XDG_CONFIG_HOME:-$HOME/.config}/fish/completions"
fi
"$bin" generate man --dir "$man_dir"
mkdir -p "$bash_dir" "$zsh_dir" "$fish_dir"
"$bin" generate completions bash > "$bash_dir/gate"
"$bin" generate completions zsh > "$zsh_dir/_gate"
"$bin" generate completions fish > "$fish_dir/gate.fish"
echo "installed the man pages in $man_dir (man gate)"
echo "installed completions: $bash_dir/gate (bash), $zsh_dir/_gate (zsh), $fish_dir/gate.fish (fish)"
echo "  zsh reads them once $zsh_dir is in its fpath: add fpath=($zsh_dir \$fpath) before compinit in ~/.zshrc"

if [ -n "$hook_repo" ]; then
  "$bin" install-hook --repo "$hook_repo" $chain
fi
