"""What tracing a JavaScript run costs: gate runs Vitest and Jest under `strace -f
--seccomp-bpf` so the ledger can bind a pass to what the run read outside the tree. This runs
the same selection with the ledger on (traced) and off (`[ledger] enabled = false`: untraced),
alternating, on the test fixtures' Vitest and Jest projects (Vitest and Jest from
tests/fixtures/js, installed by .ci/run), and prints the medians and their ratio.

    python3 bench/js_trace.py --gate target/release/gate [--runs 7]

Each run is `gate --affected master...HEAD --no-reuse --json` on a branch whose one commit
touches a module every test imports: the whole fixture suite runs each time.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "tests", "fixtures", "js")
ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x", "NO_COLOR": "1"}
# The fixture and the module whose change selects its tests.
PROJECTS = {"vitest": "src/math.ts", "jest": "lib/money.js"}


def git(root, *args):
    subprocess.run(["git", *args], cwd=root, env=ENV, check=True, capture_output=True)


def repo(top, fixture, change, ledger):
    """The fixture as a repository with its packages linked, on a branch changing `change`."""
    root = os.path.join(top, f"{fixture}-{'on' if ledger else 'off'}")
    shutil.copytree(os.path.join(FIXTURES, fixture), root)
    modules = os.path.join(root, "node_modules")
    os.makedirs(modules)
    installed = os.path.join(FIXTURES, "node_modules")
    for name in os.listdir(installed):
        if name not in (".vite", ".cache", ".package-lock.json"):
            os.symlink(os.path.join(installed, name), os.path.join(modules, name))
    if not ledger:
        with open(os.path.join(root, ".gate.toml"), "a") as h:
            h.write("\n[ledger]\nenabled = false\n")
    git(root, "init", "-q", "-b", "master")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "fixture")
    git(root, "checkout", "-qb", "feature")
    with open(os.path.join(root, change), "a") as h:
        h.write("\n// touched\n")
    git(root, "commit", "-qam", "touch")
    return root


def once(gate, root):
    t = time.perf_counter()
    out = subprocess.run([gate, "--affected", "master...HEAD", "--no-reuse", "--json"],
                         cwd=root, env=ENV, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f"gate failed in {root} ({out.returncode}): {out.stderr[-2000:]}")
    return wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gate", required=True)
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    gate = os.path.abspath(a.gate)
    if shutil.which("strace") is None:
        raise SystemExit("strace is not on PATH (Debian: apt-get install strace): nothing to measure")
    top = tempfile.mkdtemp(prefix="gate-js-trace-")
    try:
        print("| runner | untraced (ledger off) | traced (ledger on) | traced / untraced |")
        print("|---|---|---|---|")
        for fixture, change in PROJECTS.items():
            on, off = repo(top, fixture, change, True), repo(top, fixture, change, False)
            once(gate, on), once(gate, off)  # warm the runners' own caches
            traced, plain = [], []
            for _ in range(a.runs):
                traced.append(once(gate, on))
                plain.append(once(gate, off))
            t, p = statistics.median(traced), statistics.median(plain)
            print(f"| {fixture} | {p:.2f} s | {t:.2f} s | {t / p:.2f}× |")
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()
