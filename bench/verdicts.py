#!/usr/bin/env python3
"""Every tracked file of a repository changed alone: its verdict and what it selects.

    bench/verdicts.py REPO [--gate PATH] [--json OUT] [--exact OBSERVATIONS]

For each tracked file, `gate --files FILE --json --list` (the working tree as committed, no
configuration beyond the repository's own). Prints, over the non-inert files: how many are
refused or named_full, and the mean selected fraction (selected test files / test files, a
refused or named_full change counting as the whole suite, since that is what it costs).
With --json, every file's verdict and selection, for comparing two gates file by file.
With --exact (the observations `gate audit --out FILE` keeps: test file → the repository files
its traced run opened), the exact file-level selector for comparison: a file selects the tests
whose run opened it. Prints its mean selected fraction, gate's as a ratio of it, and every
(test, file) pair the trace saw that gate would not select (a miss; there should be none).
"""

import argparse
import json
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("--gate", default="gate")
    ap.add_argument("--json", dest="out")
    ap.add_argument("--exact", help="observations from `gate audit --out FILE`")
    args = ap.parse_args()
    files = subprocess.run(
        ["git", "-C", args.repo, "ls-files", "-z"],
        check=True,
        capture_output=True,
    ).stdout.decode().split("\0")
    rows = {}
    for f in filter(None, files):
        out = subprocess.run(
            [args.gate, "-C", args.repo, "--files", f, "--json", "--list"],
            capture_output=True,
        )
        try:
            report = json.loads(out.stdout)
        except ValueError:
            print(f"{f}: not JSON: {out.stderr.decode().strip()}", file=sys.stderr)
            continue
        if report.get("kind") == "error":
            rows[f] = {"verdict": "error", "selected": [], "tests": 0,
                       "reasons": [report.get("message", "")]}
            continue
        row = report["files"][0]
        rows[f] = {
            "verdict": report["verdict"] if report.get("tree_refusal") else row["verdict"],
            "selected": [s["path"] for s in report["selected"]],
            "tests": report["test_files"],
            "reasons": row["reasons"],
        }
    code = [r for r in rows.values() if r["verdict"] != "inert"]
    whole = [r for r in code if r["verdict"] in ("refused", "named_full", "error")]
    refused = [r for r in code if r["verdict"] == "refused"]

    def fraction(r):
        if r["verdict"] in ("refused", "named_full", "error") or not r["tests"]:
            return 1.0
        return len(r["selected"]) / r["tests"]

    mean = sum(map(fraction, code)) / len(code) if code else 0.0
    tests = max((r["tests"] for r in rows.values()), default=0)
    print(
        f"{args.repo}: {len(rows)} files, {tests} test files; {len(code)} non-inert: "
        f"{len(refused)} refused, {len(whole) - len(refused)} named_full "
        f"({100 * len(whole) / max(len(code), 1):.1f}%); mean selected fraction {mean:.3f}"
    )
    if args.exact:
        exact(rows, code, fraction, mean, args.exact)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(rows, fh, indent=1, sort_keys=True)


def exact(rows, code, fraction, mean, path):
    with open(path) as fh:
        seen = json.load(fh)["tests"]
    total = len(seen)
    by_file = {}
    for test, files in seen.items():
        for f in files:
            by_file.setdefault(f, set()).add(test)
    misses = []
    for f, r in rows.items():
        if r["verdict"] in ("refused", "named_full", "error"):
            continue
        for test in sorted(by_file.get(f, ())):
            if test not in r["selected"] and test != f:
                misses.append((test, f, r["verdict"]))
    names = [f for f, r in rows.items() if r["verdict"] != "inert"]
    exact_mean = sum(len(by_file.get(f, ())) / max(total, 1) for f in names) / max(len(names), 1)
    ratio = mean / exact_mean if exact_mean else float("inf")
    print(
        f"exact (traced) selector over the same {len(names)} files, {total} traced test files: "
        f"mean selected fraction {exact_mean:.3f}; gate {mean:.3f} = {ratio:.2f}x; "
        f"{len(misses)} traced (test, file) pair(s) gate would not select"
    )
    for test, f, verdict in misses[:20]:
        print(f"  missed: {test} opened {f} ({verdict})")


if __name__ == "__main__":
    main()
