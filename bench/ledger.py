"""The green ledger's warm cost and the runner time it saves, on a synthetic Python monorepo.

    python3 bench/ledger.py [--size 50000] [--runs 7] [--work DIR] [--json FILE] [--gate BIN]
                            [--peer BIN]

Builds the monorepo (bench/gen_monorepo.py) with a virtualenv over the interpreter that has
pytest, then measures as medians, a new commit per run:

- one file: `gate --affected HEAD~1...HEAD --list --json` (select only) against the same run
  without `--list` when every selected test is reused (select, fingerprint, ledger look-up,
  nothing run). The commits toggle one module between two contents, so after the first two
  runs every fingerprint is one the ledger holds — the re-push after a rebase;
- runner time saved: the first runs (pytest ran) against the reused ones.

Every reused run is checked: every selected test reused, none run.

With `--peer BIN` (another gate: the previous commit's release build), every timed run is paired:
both gates on the same commit, one after the other in alternating order, each with its own
history store, and the ratio of the two medians is printed — what a change costs the warm path,
measured in one run on one machine.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x", "NO_COLOR": "1"}
ENV.pop("GATE_DB", None)


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, env=ENV, check=True, capture_output=True)


class own_state:
    """Each gate binary keeps its own state folder (`.git/gate`: caches, the kept graph), moved
    into place around its run: two gates whose cache formats differ would otherwise rebuild
    each other's caches on every run."""

    def __init__(self, binary, repo):
        self.state = os.path.join(repo, ".git", "gate")
        name = os.path.abspath(binary).replace(os.sep, "_")
        self.own = os.path.join(repo, ".git", "gate-state" + name)

    def __enter__(self):
        if os.path.isdir(self.own):
            os.rename(self.own, self.state)

    def __exit__(self, *_):
        if os.path.isdir(self.state):
            os.rename(self.state, self.own)


def gate(binary, repo, args, db=None):
    """Wall time and the JSON report; `db`: the history store, when not the repository's."""
    env = dict(ENV, GATE_DB=db) if db else ENV
    with own_state(binary, repo):
        t = time.perf_counter()
        out = subprocess.run([binary, *args, "--json"], cwd=repo, env=env, capture_output=True,
                             text=True)
        wall = time.perf_counter() - t
    try:
        doc = json.loads(out.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"gate {args[:3]}… gave no JSON: {out.stderr[-2000:]}")
    return wall, doc


def all_reused(doc, what):
    selected = {t["path"] for t in doc["selected"]}
    reused = {r["path"] for r in doc["reused"]}
    ran = [t for t in doc["tests"]]
    if not selected or selected != reused or ran:
        raise SystemExit(f"{what}: {len(selected)} selected, {len(reused)} reused, "
                         f"{len(ran)} results: not a fully reused run")
    return len(selected)


def toggle(repo, module, k):
    """Commits `module` in the other of its two contents (whatever state a run before left)."""
    path = os.path.join(repo, module)
    with open(path) as f:
        text = f.read()
    body, _, state = text.partition("\n# ledger bench ")
    with open(path, "w") as f:
        f.write(f"{body}\n# ledger bench {1 if state.strip() == '0' else 0}\n")
    git(repo, "commit", "-qam", f"ledger bench {k}")


def med(xs):
    return round(statistics.median(xs), 4)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=50000)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--work", default="/tmp/gate-ledger-bench")
    p.add_argument("--json")
    p.add_argument("--gate", default=os.path.join(HERE, "..", "target", "release", "gate"))
    p.add_argument("--module", default="src/pkg01448/mod034.py",
                   help="the module the one-file commits change")
    p.add_argument("--peer", help="another gate to pair every timed run with")
    a = p.parse_args()
    repo = os.path.join(a.work, f"python-{a.size}")
    if not os.path.isdir(os.path.join(repo, ".git")):
        os.makedirs(a.work, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "gen_monorepo.py"), "python",
                        str(a.size), repo], check=True)
    if not os.path.isdir(os.path.join(repo, ".venv")):
        subprocess.run(["python3", "-m", "venv", "--system-site-packages", "--without-pip",
                        os.path.join(repo, ".venv")], check=True)
        with open(os.path.join(repo, ".git", "info", "exclude"), "a") as f:
            f.write("/.venv\n")
    for binary in [a.gate] + ([a.peer] if a.peer else []):
        with own_state(binary, repo):
            subprocess.run([binary, "plan"], cwd=repo, env=ENV, check=True, capture_output=True)

    # Each gate with its own store: a store's schema is its gate's.
    gates = [(a.gate, os.path.join(a.work, "ledger-gate.sqlite"))]
    if a.peer:
        gates.append((a.peer, os.path.join(a.work, "ledger-peer.sqlite")))
    for _, db in gates:
        if os.path.exists(db):
            os.remove(db)

    # One file: two first runs (pytest runs and enters both contents), then pairs.
    first = []
    select = [[] for _ in gates]
    reuse = [[] for _ in gates]
    for k in range(2):
        toggle(repo, a.module, k)
        for binary, db in gates:
            # --no-reuse: the first runs run (and enter) even where a run before this one passed.
            wall, doc = gate(binary, repo, ["--affected", "HEAD~1...HEAD", "--no-reuse"],
                             "sqlite:" + db)
            if doc["reused"] or not doc["tests"]:
                raise SystemExit(f"first run {k}: expected the selected tests to run")
            first.append(wall)
        selected = len(doc["selected"])
    for k in range(2, 2 + 2 * a.runs, 2):
        # Alternate which gate goes first: neither always meets the other's warm page cache.
        order = list(enumerate(gates))
        if k % 4 == 2:
            order.reverse()
        toggle(repo, a.module, k)
        for i, (binary, db) in order:
            select[i].append(gate(binary, repo, ["--affected", "HEAD~1...HEAD", "--list"],
                                  "sqlite:" + db)[0])
        toggle(repo, a.module, k + 1)
        for i, (binary, db) in order:
            wall, doc = gate(binary, repo, ["--affected", "HEAD~1...HEAD"], "sqlite:" + db)
            all_reused(doc, f"one file ({binary})")
            reuse[i].append(wall)

    result = {
        "size": a.size,
        "runs": a.runs,
        "one_file": {"selected": selected, "select_s": med(select[0]),
                     "reused_s": med(reuse[0]),
                     "first_run_s": [round(x, 3) for x in first],
                     "overhead": round(med(reuse[0]) / med(select[0]) - 1, 4)},
    }
    o = result["one_file"]
    print(f"{'scenario':<12} {'tests':>6} {'select':>9} {'reused':>9} {'overhead':>9} {'ran first':>10}")
    print(f"{'one file':<12} {o['selected']:>6} {o['select_s']:>8.3f}s {o['reused_s']:>8.3f}s "
          f"{o['overhead']:>8.1%} {statistics.median(first):>9.2f}s")
    if a.peer:
        result["peer"] = {"select_s": med(select[1]), "reused_s": med(reuse[1]),
                          "select_ratio": round(med(select[0]) / med(select[1]), 3),
                          "reused_ratio": round(med(reuse[0]) / med(reuse[1]), 3)}
        q = result["peer"]
        print(f"{'peer':<12} {o['selected']:>6} {q['select_s']:>8.3f}s {q['reused_s']:>8.3f}s")
        print(f"paired, this gate / peer: select {q['select_ratio']:.3f}x, "
              f"every selected test reused {q['reused_ratio']:.3f}x")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
