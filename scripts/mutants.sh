#!/usr/bin/env bash
# Mutation-tests the code that decides a selection: a seeded sample of cargo-mutants' mutants of
# src/verdict/, src/graph/, src/analyze/, src/lang/ and src/config/, each run against the whole test
# suite. A surviving mutant that could drop an edge or a test is a missing test.
#
#   scripts/mutants.sh [--seed N] [--sample K] [--minutes M] [--jobs J]
#
# Defaults: seed 12, sample 40, at most 120 minutes, 1 job. The same seed picks the same mutants
# on every machine (for the same source). Results: mutants.out/ (outcomes.json, caught.txt,
# missed.txt, timeout.txt, unviable.txt) and one summary line with the kill rate.
set -euo pipefail
cd "$(dirname "$0")/.."

seed=12 sample=40 minutes=120 jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --seed) seed="${2:?}"; shift 2 ;;
    --sample) sample="${2:?}"; shift 2 ;;
    --minutes) minutes="${2:?}"; shift 2 ;;
    --jobs) jobs="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "mutants.sh: unknown argument \`$1\` (see --help)" >&2; exit 3 ;;
  esac
done

if ! cargo mutants --version >/dev/null 2>&1; then
  cargo install --locked cargo-mutants
fi

files=(--file 'src/verdict/**' --file 'src/graph/**' --file 'src/analyze/**' --file 'src/lang/**' --file 'src/config/**')
list=$(mktemp)
trap 'rm -f "$list"' EXIT
cargo mutants --list "${files[@]}" >"$list"
total=$(wc -l <"$list")

# A seeded sample, as one anchored regex per mutant (names hold regex characters).
mapfile -t picks < <(python3 - "$list" "$seed" "$sample" <<'PY'
import random, re, sys
names = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
rng = random.Random(int(sys.argv[2]))
for name in sorted(rng.sample(names, min(int(sys.argv[3]), len(names)))):
    print("^" + re.escape(name) + "$")
PY
)
args=()
for re in "${picks[@]}"; do args+=(--re "$re"); done
echo "mutants.sh: ${#picks[@]} of $total mutants (seed $seed), at most $minutes minutes"

# The install test builds gate in release mode (minutes) and covers install.sh, not selection.
status=0
timeout --signal=INT "${minutes}m" cargo mutants "${files[@]}" "${args[@]}" \
  --jobs "$jobs" --timeout 600 --no-shuffle -- --tests -- --skip install::install_sh || status=$?

out=mutants.out
count() { if [ -f "$out/$1" ]; then grep -c . "$out/$1" || true; else echo 0; fi; }
caught=$(count caught.txt) missed=$(count missed.txt) timeout=$(count timeout.txt) unviable=$(count unviable.txt)
tested=$((caught + missed + timeout))
rate=$(python3 -c "print(f'{100 * ($caught + $timeout) / max($tested, 1):.1f}')")
echo "mutants.sh: $caught caught, $missed missed, $timeout timed out, $unviable unviable; kill rate ${rate}% of $tested tested"
if [ "$missed" -gt 0 ]; then
  echo "missed (each is a test to write, or a mutant that cannot narrow a selection):"
  sed 's/^/  /' "$out/missed.txt"
fi
# cargo mutants exits 2 when a mutant was missed, 3 on timeouts: the summary says which.
exit "$status"
