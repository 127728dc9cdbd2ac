#!/usr/bin/env python3
"""Replay a real project's history through gate's proof loop, then evaluate it.

    bench/replay.py REPO --commits N [--gate PATH] [--db URL] [--plant] [--audit] [--env NAME=VALUE]...

In a fresh clone of REPO, for each of the last N first-parent commits (oldest first): check
the commit out and run `gate shadow PARENT...COMMIT` — gate freezes its decision for the
commit's own change, runs the whole suite through the project's runner, records the run and
judges every failing test file against the decision. With --plant, each commit that changed a
Python source file outside the tests gets a planted regression on top (that file raises when
imported, committed), shadowed the same way, then dropped: real edges of a real tree, with
failures to catch. Then `gate evaluate --json` over everything recorded, and the export of
the last run (`gate export --observations`), whose size is reported. With --audit, the last
commit is shadowed once more and audited (`gate audit`, its tree clean), and its export is
written before and after the audit: how many test files' dependencies the traces joined, and
how many (test, file) dependencies they added to the graph's.

Prints one line per shadow and the evaluation; exits 1 when any shadow missed a failure.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile


def sh(args, cwd, env=None, check=True):
    out = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env)
    if check and out.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {out.returncode}\n{out.stdout}{out.stderr}")
    return out


def closing(stderr):
    lines = [l for l in stderr.splitlines() if l.startswith("gate shadow:")]
    return lines[-1] if lines else stderr.strip().splitlines()[-1:] or ["(nothing said)"]


def shadow(gate, work, spec, db, env):
    out = sh([gate, "shadow", spec, "--db", db, "--json"], work, env=env, check=False)
    try:
        report = json.loads(out.stdout)
    except ValueError:
        report = {}
    return out.returncode, report, closing(out.stderr), out.stderr


def planted(work, commit):
    """A changed Python source file of `commit` outside the tests, made to raise on import."""
    changed = sh(["git", "diff", "--name-only", f"{commit}~1", commit], work).stdout.split()
    for path in changed:
        parts = path.split("/")
        if path.endswith(".py") and "tests" not in parts and "test" not in parts[-1]:
            if os.path.exists(os.path.join(work, path)):
                return path
    return None


def dependencies(path):
    with open(path) as fh:
        doc = json.load(fh)
    obs = doc["observations"]
    table = obs.get("dependency_paths")
    out = {}
    for f in obs["files"]:
        deps = f["dependencies"]
        if deps is not None and table is not None:
            deps = [table[i] for i in deps]
        out[(f["file"], f["leg"])] = (deps, f.get("traced", False))
    return out


def audited(gate, work, commit, db, env, export):
    """The last commit shadowed again, exported, audited, exported: what the traces joined."""
    sh(["git", "checkout", "--quiet", "--detach", commit], work)
    shadow(gate, work, f"{commit}~1...{commit}", db, env)
    sh([gate, "export", "--observations", export, "--db", db], work, env=env)
    before = dependencies(export)
    audit = sh([gate, "audit", "--json", "--db", db], work, env=env, check=False)
    if "not kept" in audit.stderr:
        sys.exit(f"the audit's traces were not kept: {audit.stderr.strip()}")
    a = json.loads(audit.stdout)
    sh([gate, "export", "--observations", export, "--db", db], work, env=env)
    after = dependencies(export)
    traced = [k for k, (_, t) in after.items() if t]
    added = sum(len(set(after[k][0]) - set(before[k][0] or [])) for k in traced)
    unknown = sum(1 for deps, _ in after.values() if deps is None)
    print(
        f"audit of {commit[:10]}: {a['tests']} test file(s), completeness {a['completeness']:.3f}, "
        f"{a['missed']} missed; its export: {len(traced)} of {len(after)} file observation(s) traced, "
        f"{added} (test, file) dependencies added to the graph's, {unknown} unknown (null)"
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("--commits", type=int, default=20)
    ap.add_argument("--gate", default=os.path.join(os.path.dirname(__file__), "../target/release/gate"))
    ap.add_argument("--db", help="the store (default: a SQLite file in the clone's .git)")
    ap.add_argument("--plant", action="store_true")
    ap.add_argument("--audit", action="store_true")
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for the runs")
    args = ap.parse_args()
    gate = os.path.abspath(args.gate)
    env = dict(os.environ)
    for pair in args.env:
        name, _, value = pair.partition("=")
        env[name] = value
    env.pop("GITHUB_RUN_ID", None)
    tmp = tempfile.mkdtemp(prefix="gate-replay-")
    work = os.path.join(tmp, "work")
    sh(["git", "clone", "--quiet", args.repo, work], tmp)
    for k, v in (("user.name", "gate replay"), ("user.email", "replay@example.com")):
        sh(["git", "config", k, v], work)
    db = args.db or f"sqlite:{os.path.join(work, '.git', 'gate', 'replay.sqlite')}"
    commits = sh(["git", "rev-list", "--first-parent", f"-{args.commits}", "HEAD"], work).stdout.split()
    commits.reverse()
    missed = 0
    shadows = 0
    for commit in commits:
        sh(["git", "checkout", "--quiet", "--detach", commit], work)
        runs = [(f"{commit}~1...{commit}", commit[:10])]
        code, report, line, err = shadow(gate, work, runs[0][0], db, env)
        shadows += 1
        missed += code == 11
        print(f"{commit[:10]} {report.get('verdict', '?'):>10} {line}", flush=True)
        path = planted(work, commit) if args.plant else None
        if path:
            with open(os.path.join(work, path), "a") as fh:
                fh.write("\nraise RuntimeError('gate replay: planted regression')\n")
            sh(["git", "commit", "--quiet", "-am", f"planted: {path} raises"], work)
            code, report, line, err = shadow(gate, work, f"{commit}...HEAD", db, env)
            shadows += 1
            missed += code == 11
            print(f"{commit[:10]}+ {report.get('verdict', '?'):>9} {line}  [planted in {path}]", flush=True)
            sh(["git", "checkout", "--quiet", "--detach", commit], work)
    evaluation = sh([gate, "evaluate", "--json", "--db", db], work, env=env)
    print(evaluation.stdout, end="")
    export = os.path.join(tmp, "observations.json")
    done = sh([gate, "export", "--observations", export, "--db", db], work, env=env, check=False)
    print(done.stderr.strip())
    if args.audit:
        audited(gate, work, commits[-1], db, env, os.path.join(tmp, "audited.json"))
    print(f"{shadows} shadow run(s), {missed} with a miss; store {db}")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
