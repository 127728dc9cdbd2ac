#!/usr/bin/env python3
"""Every tracked file of a repository changed alone: its verdict and what it selects.

    bench/verdicts.py REPO [--gate PATH] [--json OUT]

For each tracked file, `gate --files FILE --json --list` (the working tree as committed, no
configuration beyond the repository's own). Prints, over the non-inert files: how many are
refused or named_full, and the mean selected fraction (selected test files / test files, a
refused or named_full change counting as the whole suite, since that is what it costs).
With --json, every file's verdict and selection, for comparing two gates file by file.
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
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(rows, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
