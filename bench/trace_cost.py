#!/usr/bin/env python3
"""What the probe's audit hook costs a test run: the same suite, paired, traced and not.

    bench/trace_cost.py REPO [--python PY] [--runs N] [-- PYTEST ARGS...]

Runs `PY -m pytest -q -p gate_probe` in REPO (the probe gate loads into every gated pytest run,
taken from src/lang/python/gate_probe.py) N times with GATE_PROBE_TRACE=1 and N times without,
alternating, and prints each side's median wall time and their ratio, and how many files the
traced runs recorded. Both sides write the probe's record; only the hook differs.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "..", "src", "lang", "python", "gate_probe.py")


def once(repo, python, extra, probe_dir, traced):
    out = os.path.join(probe_dir, "probe.json")
    env = dict(os.environ)
    env["PYTHONPATH"] = probe_dir + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["GATE_PROBE_OUT"] = out
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("GATE_PROBE_TRACE", None)
    if traced:
        env["GATE_PROBE_TRACE"] = "1"
    argv = [python, "-m", "pytest", "-q", "-p", "gate_probe", "-p", "no:cacheprovider", *extra]
    start = time.perf_counter()
    subprocess.run(argv, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    took = time.perf_counter() - start
    with open(out, encoding="utf-8") as f:
        opened = json.load(f).get("opened", {})
    return took, sum(len(v) for v in opened.values())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("pytest_args", nargs="*")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as probe_dir:
        with open(PROBE, encoding="utf-8") as src, open(
            os.path.join(probe_dir, "gate_probe.py"), "w", encoding="utf-8"
        ) as dst:
            dst.write(src.read())
        once(a.repo, a.python, a.pytest_args, probe_dir, False)  # warm the file cache
        plain, traced, files = [], [], 0
        for _ in range(a.runs):
            plain.append(once(a.repo, a.python, a.pytest_args, probe_dir, False)[0])
            took, files = once(a.repo, a.python, a.pytest_args, probe_dir, True)
            traced.append(took)
    p, t = statistics.median(plain), statistics.median(traced)
    print(f"{a.repo}: {a.runs} paired runs")
    print(f"  without the hook: median {p:.3f} s (min {min(plain):.3f}, max {max(plain):.3f})")
    print(f"  with the hook:    median {t:.3f} s (min {min(traced):.3f}, max {max(traced):.3f})")
    print(f"  ratio {t / p:.3f}; {files} (test file, path) pairs traced")


if __name__ == "__main__":
    main()
