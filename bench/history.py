#!/usr/bin/env python3
"""Record throughput of the history store: `gate record` of one generated JUnit leg; and one
leg's record + rollup + triage over a store already holding a million results.

    bench/history.py [--gate PATH] [--results N] [--runs R] [--pg URL] [--stored M] [--leg-results K]

Builds a git repository holding one test file, writes a JUnit report of N results (a few
failed and skipped), and times whole `gate record` processes (what a CI step pays: loading the
tree, parsing, one transaction): into a fresh SQLite store, into a fresh PostgreSQL database
(`--pg`, default postgres://root@127.0.0.1:5432), and 8 legs at once into one PostgreSQL
database. Prints medians over R runs and results per second.

Then (`--stored`, default 1,000,000; 0 skips it) a store is generated holding M results: one
leg of K results (default 5,000) recorded by gate, copied by SQL into M/K legs of the same
tests (each its own commit, every third one on main, 2% of results failed, twelve hours apart:
the oldest are past the 90-day window), and `gate rollup` rebuilds the rollup from it. Then, a
day passing before each (so each retires the two legs that left the window), a new K-result leg
(1% failed) of a branch whose commit changes the tested module is recorded (gate gates the
change against main, stores it, records it and moves its tests' rollup on) and triaged; medians
of whole processes.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def sh(args, cwd=None, **kw):
    return subprocess.run(args, cwd=cwd, check=True, capture_output=True, text=True, **kw)


def junit(n, fail_every=97):
    cases = []
    for i in range(n):
        body = ""
        if i % fail_every == 0:
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
    ap.add_argument("--stored", type=int, default=1_000_000)
    ap.add_argument("--leg-results", type=int, default=5000)
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
    if args.stored:
        big(args, tmp, env)


# The generated legs: copies of the seed leg (`seed`), each its own run an hour earlier.
SQLITE_FILL = """
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {copies})
INSERT INTO runs (run_id, attempt, leg, commit_sha, branch, env, source, digest, mainline, base_sha, recorded_unix)
SELECT 'gen-' || i, 1, leg, printf('%040x', i), CASE WHEN i % 3 = 0 THEN 'main' ELSE 'topic' END, env, source,
       digest || i, i % 3 = 0, base_sha, recorded_unix - i * 43200
FROM runs, n WHERE run_id = 'seed';
INSERT INTO results (seq, test_id, file, try, outcome, duration_ms)
SELECT r.seq, x.test_id, x.file, x.try,
       CASE WHEN abs(random()) % 50 = 0 THEN 'failed' ELSE 'passed' END, abs(random()) % 100
FROM runs r JOIN results x ON x.seq = (SELECT seq FROM runs WHERE run_id = 'seed')
WHERE r.run_id LIKE 'gen-%';
"""
# A day passes: every stored time moves one day back.
DAY = """
UPDATE runs SET recorded_unix = recorded_unix - 86400;
UPDATE rollup SET window_from = window_from - 86400, last_unix = last_unix - 86400;
"""
PG_FILL = """
INSERT INTO runs (run_id, attempt, leg, commit_sha, branch, env, source, digest, mainline, base_sha, recorded_unix)
SELECT 'gen-' || i, 1, leg, lpad(to_hex(i), 40, '0'), CASE WHEN i % 3 = 0 THEN 'main' ELSE 'topic' END, env, source,
       digest || i, CASE WHEN i % 3 = 0 THEN 1 ELSE 0 END, base_sha, recorded_unix - i * 43200
FROM runs, generate_series(1, {copies}) AS i WHERE run_id = 'seed';
INSERT INTO results (seq, test_id, file, try, outcome, duration_ms)
SELECT r.seq, x.test_id, x.file, x.try,
       CASE WHEN random() < 0.02 THEN 'failed' ELSE 'passed' END, floor(random() * 100)::bigint
FROM runs r JOIN results x ON x.seq = (SELECT seq FROM runs WHERE run_id = 'seed')
WHERE r.run_id LIKE 'gen-%';
ANALYZE;
"""


def big(args, tmp, env):
    k = args.leg_results
    copies = args.stored // k - 1
    repo = os.path.join(tmp, "big")
    os.makedirs(os.path.join(repo, "src"))
    os.makedirs(os.path.join(repo, "tests"))
    with open(os.path.join(repo, "src", "gen.py"), "w") as fh:
        fh.write("X = 1\n")
    with open(os.path.join(repo, "tests", "test_gen.py"), "w") as fh:
        fh.write("import gen\n\n\ndef test_x():\n    assert gen.X\n")
    with open(os.path.join(repo, "pyproject.toml"), "w") as fh:
        fh.write('[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    git = ["git", "-c", "user.email=b@b", "-c", "user.name=b"]
    sh(["git", "init", "-q", "-b", "main"], repo)
    sh(["git", "add", "-A"], repo)
    sh(git + ["commit", "-qm", "main"], repo)
    sh(["git", "checkout", "-qb", "topic"], repo)
    with open(os.path.join(repo, "src", "gen.py"), "w") as fh:
        fh.write("X = 2\n")
    sh(git + ["commit", "-qam", "change"], repo)
    seed = os.path.join(tmp, "seed.xml")
    leg = os.path.join(tmp, "leg.xml")
    with open(seed, "w") as fh:
        fh.write(junit(k))
    with open(leg, "w") as fh:
        fh.write(junit(k, fail_every=100))

    def gate(*a, db):
        start = time.perf_counter()
        p = subprocess.run([args.gate, "-C", repo, *a, "--db", db], capture_output=True, text=True, env=env)
        if p.returncode not in (0, 1):
            sys.exit(p.stderr)
        return time.perf_counter() - start

    def measure(db, fill, day):
        gate("record", "--junit", seed, "--run", "seed", "--leg", "py", db=db)
        fill(copies)
        stored = (copies + 1) * k
        rebuilt = gate("rollup", db=db)
        rec, tri = [], []
        for r in range(args.runs):
            day()
            rec.append(gate("record", "--junit", leg, "--run", f"new{r}", "--leg", "py", db=db))
            tri.append(gate("triage", "--run", f"new{r}", db=db))
        return stored, rebuilt, statistics.median(rec), statistics.median(tri)

    path = os.path.join(tmp, "big.sqlite")

    def sqlite_fill(copies):
        sh(["sqlite3", path], input=SQLITE_FILL.format(copies=copies)) if shutil.which("sqlite3") else \
            fill_with_python(path, copies)

    def sqlite_day():
        import sqlite3
        c = sqlite3.connect(path)
        c.executescript(DAY)
        c.commit()
        c.close()

    rows = [("SQLite",) + measure(f"sqlite:{path}", sqlite_fill, sqlite_day)]
    name = f"gate_bench_big_{os.getpid()}"
    psql(f"{args.pg}/postgres", f"CREATE DATABASE {name}")
    try:
        url = f"{args.pg}/{name}"
        rows.append(("PostgreSQL",) + measure(url, lambda c: psql(url, PG_FILL.format(copies=c)),
                                              lambda: psql(url, DAY)))
    finally:
        psql(f"{args.pg}/postgres", f"DROP DATABASE {name} WITH (FORCE)")
    print()
    print(f"one {k}-result leg over a generated store, median of {args.runs} whole processes")
    print("| store | results stored | full `gate rollup` (once) | record + rollup | triage | record + rollup + triage |")
    print("|---|---|---|---|---|---|")
    for store, stored, rebuilt, rec, tri in rows:
        print(f"| {store} | {stored:,} | {rebuilt * 1000:.0f} ms | {rec * 1000:.0f} ms | {tri * 1000:.0f} ms | {(rec + tri) * 1000:.0f} ms |")


def fill_with_python(path, copies):
    import sqlite3
    c = sqlite3.connect(path)
    c.executescript(SQLITE_FILL.format(copies=copies))
    c.commit()
    c.close()


if __name__ == "__main__":
    main()
