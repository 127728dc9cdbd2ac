#!/usr/bin/env python3
"""Record throughput of the history store: `gate record` of one generated JUnit leg.

    bench/history.py [--gate PATH] [--results N] [--runs R] [--pg URL]

Builds a git repository holding one test file, writes a JUnit report of N results (a few
failed and skipped), and times whole `gate record` processes (what a CI step pays: loading the
tree, parsing, one transaction): into a fresh SQLite store, into a fresh PostgreSQL database
(`--pg`, default postgres://root@127.0.0.1:5432), and 8 legs at once into one PostgreSQL
database. Prints medians over R runs and results per second.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def sh(args, cwd=None, **kw):
    return subprocess.run(args, cwd=cwd, check=True, capture_output=True, text=True, **kw)


def junit(n):
    cases = []
    for i in range(n):
        body = ""
        if i % 97 == 0:
            body = '<failure message="boom">x</failure>'
        elif i % 89 == 0:
            body = '<skipped message="later"/>'
        cases.append(
            f'<testcase classname="tests.test_gen" name="test_{i}[{i % 7}]" time="0.001">{body}</testcase>'
        )
    return ('<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="%d">' % n
            + "".join(cases) + "</testsuite></testsuites>")


def psql(url, sql):
    sh(["psql", url, "-v", "ON_ERROR_STOP=1", "-qc", sql])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gate", default="gate")
    ap.add_argument("--results", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pg", default="postgres://root@127.0.0.1:5432")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gate-bench-history-")
    repo = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(repo, "tests"))
    with open(os.path.join(repo, "tests", "test_gen.py"), "w") as fh:
        fh.write("def test_x():\n    pass\n")
    sh(["git", "init", "-q"], repo)
    sh(["git", "add", "-A"], repo)
    sh(["git", "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "bench"], repo)
    report = os.path.join(tmp, "leg.xml")
    with open(report, "w") as fh:
        fh.write(junit(args.results))
    n = args.results

    # gate asks `python3 --version` for the leg's environment: the real interpreter first on
    # PATH, as on a CI runner (a pyenv shim alone costs 0.2 s a call).
    env = dict(os.environ, PATH=os.path.dirname(os.path.realpath(sys.executable)) + os.pathsep + os.environ["PATH"])

    def record(db, run, leg="default"):
        cmd = [args.gate, "-C", repo, "record", "--junit", report, "--run", run, "--leg", leg, "--db", db]
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)

    def timed(make):
        times = []
        for r in range(args.runs):
            db, cleanup = make(r)
            start = time.perf_counter()
            procs = db()
            for p in procs:
                if p.wait() != 0:
                    sys.exit(p.stderr.read().decode())
            times.append(time.perf_counter() - start)
            cleanup()
        return statistics.median(times)

    def sqlite(r):
        path = os.path.join(tmp, f"h{r}.sqlite")
        return (lambda: [record(f"sqlite:{path}", f"s{r}")]), (lambda: None)

    def pg(legs):
        def make(r):
            name = f"gate_bench_{os.getpid()}_{legs}_{r}"
            psql(f"{args.pg}/postgres", f"CREATE DATABASE {name}")
            url = f"{args.pg}/{name}"
            # The schema is made before the clock starts: legs measure recording, not migrating.
            first = record(url, "warm", "warm")
            first.wait()
            return ((lambda: [record(url, f"p{r}", f"leg{i}") for i in range(legs)]),
                    (lambda: psql(f"{args.pg}/postgres", f"DROP DATABASE {name} WITH (FORCE)")))
        return make

    rows = [
        ("SQLite, 1 leg", 1, timed(sqlite)),
        ("PostgreSQL, 1 leg", 1, timed(pg(1))),
        ("PostgreSQL, 8 legs at once", 8, timed(pg(8))),
    ]
    print(f"{n} results per leg, median of {args.runs} whole `gate record` processes")
    print("| store | legs | median wall time | results/s |")
    print("|---|---|---|---|")
    for name, legs, t in rows:
        print(f"| {name} | {legs} | {t * 1000:.0f} ms | {legs * n / t:,.0f} |")


if __name__ == "__main__":
    main()
