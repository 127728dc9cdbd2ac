#!/usr/bin/env python3
"""Is the selection safe? Break one file at a time, run the whole suite, compare.

    bench/mutate.py REPO --suite "CMD" [--kind pytest|go] [--gate PATH] [--sample N] [--seed S]

For a sample of the repository's tracked files (source and data, not inert ones): break the
file (a Python module raises on import, a Go file panics in init, a data file loses its
content), commit, ask `gate --affected HEAD~1...HEAD --json --list` what it selects, run the
whole suite (`--suite`, from the repository root), and compare: every test file (pytest) or
package (go) that fails now and passed before must be selected — unless the verdict was
refused or named_full, which run everything. The commit is undone after each file.
Prints one line per file and the totals; exit 1 on any miss.
"""

import argparse
import json
import random
import re
import subprocess
import sys

CODE = (".py", ".go")


def sh(args, cwd, **kw):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, **kw)


def failing(repo, suite, kind):
    """The failing test files (pytest) or packages (go test -json) of a whole-suite run."""
    out = sh(suite, repo, shell=True)
    text = out.stdout + out.stderr
    if kind == "go":
        failed = set()
        for line in out.stdout.splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("Action") == "fail" and not ev.get("Test"):
                failed.add(ev["Package"])
        return failed, out.returncode
    files = set()
    for m in re.finditer(r"^(?:FAILED|ERROR) ([^\s:]+\.(?:py|yml|yaml))", text, re.M):
        files.add(m.group(1))
    return files, out.returncode


def mutate(path, full):
    with open(full, "rb") as fh:
        data = fh.read()
    if path.endswith(".py"):
        data += b"\nraise RuntimeError('gate mutant')\n"
    elif path.endswith(".go"):
        data += b"\nfunc init() { panic(\"gate mutant\") }\n"
    else:
        data = b"gate mutant\n"
    with open(full, "wb") as fh:
        fh.write(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("--suite", required=True)
    ap.add_argument("--kind", default="pytest", choices=["pytest", "go"])
    ap.add_argument("--gate", default="gate")
    ap.add_argument("--sample", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--module-prefix", default="", help="go: the module path, to name packages ./dir")
    args = ap.parse_args()
    repo = args.repo
    files = [f for f in sh(["git", "ls-files"], repo).stdout.split("\n") if f]
    candidates = []
    for f in files:
        r = json.loads(sh([args.gate, "--files", f, "--json", "--list"], repo).stdout)
        if r.get("kind") == "error" or r["files"][0]["verdict"] == "inert":
            continue
        candidates.append(f)
    random.Random(args.seed).shuffle(candidates)
    base_fail, _ = failing(repo, args.suite, args.kind)
    misses = caught = full = quiet = 0
    for f in candidates[: args.sample]:
        mutate(f, f"{repo}/{f}")
        sh(["git", "commit", "-qam", f"mutant {f}"], repo)
        r = json.loads(sh([args.gate, "--affected", "HEAD~1...HEAD", "--json", "--list"], repo).stdout)
        verdict = r["verdict"]
        chosen = {s["path"].split("::")[0] for s in r["selected"]}
        if args.kind == "go":
            # gate's unit `./dir` is the package `<module>/dir`.
            dirs = {c[2:] if c.startswith("./") else c for c in chosen}
            chosen = {args.module_prefix if d in ("", ".") else f"{args.module_prefix}/{d}" for d in dirs}
        now, code = failing(repo, args.suite, args.kind)
        if args.kind == "pytest" and code == 2:
            # A collection error interrupts the session before other files run: run them
            # all, so a failure elsewhere is not hidden behind the file that broke first.
            now, code = failing(repo, args.suite + " --continue-on-collection-errors", args.kind)
        new = now - base_fail
        missed = sorted(new - chosen)
        # pytest stopped before any test (a conftest that cannot be imported, an error no
        # test file is named for): every test is hit.
        broken = args.kind == "pytest" and code not in (0, 1)
        if broken and len(chosen) < r["test_files"] and verdict not in ("refused", "named_full"):
            missed = [f"the session broke (exit {code}); {len(chosen)} of {r['test_files']} selected"]
        if verdict in ("refused", "named_full"):
            full += 1
            status = f"{verdict} (runs everything)"
        elif missed:
            misses += 1
            status = f"MISSED {missed}"
        elif new or broken:
            caught += 1
            status = f"caught {'every test (session broke)' if broken else len(new)} failing, {len(chosen)} selected"
        else:
            quiet += 1
            status = f"no test failed ({len(chosen)} selected)"
        print(f"{f}: {status}", flush=True)
        sh(["git", "reset", "-q", "--hard", "HEAD~1"], repo)
    sh(["git", "status", "--short"], repo)
    print(
        f"{repo}: {min(args.sample, len(candidates))} mutants: {caught} caught, {misses} missed, "
        f"{full} refused/named_full, {quiet} broke no test"
    )
    sys.exit(1 if misses else 0)


if __name__ == "__main__":
    main()
