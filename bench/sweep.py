#!/usr/bin/env python3
"""A safety sweep over real projects: bench/mutate.py's loop, several repositories, one table.

    bench/sweep.py --prepare --projects-dir DIR [--projects a,b]
    bench/sweep.py --run --projects-dir DIR --gate PATH [--seed N] [--sample N]
                   [--out FILE.json] [--raw-dir DIR] [--projects a,b]

--prepare brings each project of PROJECTS in as a new user would: the sdist from PyPI
(`pip download --no-deps --no-binary :all: NAME==VER`), untarred into DIR/NAME, a fresh git
repository (build output, caches and `.venv/` excluded) committed and tagged `sweep-base`, and
a virtualenv at DIR/NAME/.venv with pytest, the project's test dependencies and the project
itself (editable, so the suite runs the working tree). gate's default runner is that .venv, so
no project gets a `.gate.toml`.

--run (the default) mutates, per project, a seeded sample of its tracked files, one at a
time: a Python module (code or test) raises at import; a data file is cut to half its bytes,
has one byte flipped (in JSON/TOML/YAML a structural character) or is emptied. Each mutant is
committed, `gate --affected HEAD~1...HEAD --json --list` is asked, the whole suite runs for
truth (with --continue-on-collection-errors), and the commit is undone. A miss: a test file (a doctested module or a doctest file included) that fails now
and passed at the base (every file collected at the base, when the mutant stops the whole
session), not selected, while the run's verdict was not refused/named_full; each missed file is
then run alone on the mutant to confirm it (a miss that passes alone is order or load dependent). The sample depends only on the seed
and the tree, never on the gate binary, so a re-run with another --gate mutates the same files.
Candidates are every tracked file except a fixed list (licences, changelogs, docs/, CI config and
the manifests gate treats as the whole suite by name).

Writes one JSON line per mutant to RAW-DIR/PROJECT.jsonl (default: beside --out, in a folder
named after it), the summary and every record to --out, and prints the table. Exit 1 on a miss.
"""

import argparse
import fnmatch
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutate import sh  # noqa: E402  (bench/mutate.py: the one-repository loop this extends)

# name, version, what it exercises, pip install arguments besides pytest.
PROJECTS = [
    ("lazy_loader", "0.6", "lazy: PEP 562 __getattr__ from lazy.attach imports submodules by a run-time name",
     ["-e", "."]),
    ("pycountry", "26.2.16", "data: JSON databases loaded lazily by a built file name; doctest: --doctest-glob='*.rst'",
     ["-e", ".", "pytest-cov"]),
    ("pytz", "2026.6", "data: binary zoneinfo files opened by a run-time name; lazy collections",
     ["-e", "."]),
    ("humanize", "4.17.0", "doctest: --doctest-modules ([tool.pytest]); data: .mo catalogues via importlib.resources",
     ["-e", ".", "freezegun", "pytest-benchmark", "pytest-codspeed"]),
    ("mistune", "3.4.0", "plugin registry: plugin names mapped to dotted paths, import_module; fixture .txt data",
     ["-e", "."]),
    ("pluggy", "1.7.0", "plugin registry: a plugin manager loading setuptools entry points",
     ["-e", ".", "pytest-benchmark"]),
    ("tomlkit", "0.15.3", "data: TOML/JSON example files read by name from tests/",
     ["-e", ".", "pyyaml"]),
    ("markdown-it-py", "4.3.0", "data: fixture .md files (pytest-regressions); rule chains by name",
     ["-e", ".[testing,linkify]"]),
    ("idna", "3.20", "data: generated Unicode tables (idnadata, uts46data) and UTS #46 conformance cases",
     ["-e", ".", "hypothesis"]),
    ("boltons", "26.2.0", "other: many independent modules, each with its own test file",
     ["-e", "."]),
    ("toolz", "1.2.0", "other: tests inside the package, curried namespace built at import, __getattr__",
     ["-e", "."]),
]

# --continue-on-collection-errors: a file that fails to import must not hide the others
# (bench/mutate.py reruns with it when collection stopped the session; this runs once).
# --tb=line: a mutant failing thousands of tests is not slowed by formatting their tracebacks.
SUITE = ".venv/bin/python -m pytest -p no:cacheprovider -q --tb=line --continue-on-collection-errors"
EXCLUDE = """LICENSE* LICENCE* COPYING* **/LICENSE* CHANGELOG* CHANGES* HISTORY* NEWS* AUTHORS* RELEASING*
PKG-INFO MANIFEST.in .gitignore .gitattributes docs/** doc/** .github/** changelog/** *.egg-info/**
pyproject.toml setup.py setup.cfg tox.ini pytest.ini noxfile.py **/requirements*.txt *.lock
mkdocs.yml .pre-commit-config.yaml codecov.yml .readthedocs.y*ml .gate.toml""".split()
IGNORED = ".venv/\n__pycache__/\n.pytest_cache/\n*.egg-info/\nbuild/\ndist/\nhtmlcov/\n.coverage*\n.hypothesis/\n.benchmarks/\n.codspeed/\n"
STRUCTURAL = {".json": b'{}[]:,"', ".toml": b'=[]"', ".yaml": b":-[]", ".yml": b":-[]"}


def slug(name):
    return name.replace("-", "_").lower()


# ---------------------------------------------------------------- prepare


def prepare(pdir, names):
    sdists = os.path.join(pdir, "_sdists")
    os.makedirs(sdists, exist_ok=True)
    for name, ver, why, pip_args in PROJECTS:
        if names and name not in names:
            continue
        repo = os.path.join(pdir, name)
        if os.path.isdir(os.path.join(repo, ".venv")) and os.path.isdir(os.path.join(repo, ".git")):
            print(f"{name}: prepared already", flush=True)
            continue
        print(f"{name} {ver}: download, git init, venv", flush=True)
        out = sh(["pip", "download", "-q", "--no-deps", "--no-binary", ":all:", f"{name}=={ver}", "-d", sdists], pdir)
        if out.returncode:
            sys.exit(f"{name}: pip download failed\n{out.stderr}")
        tgz = [f for f in os.listdir(sdists) if slug(f).startswith(slug(f"{name}-{ver}.tar"))][0]
        shutil.rmtree(repo, ignore_errors=True)
        with tarfile.open(os.path.join(sdists, tgz)) as tf:
            top = tf.getnames()[0].split("/")[0]
            tf.extractall(pdir, filter="data")
        os.rename(os.path.join(pdir, top), repo)
        sh(["git", "init", "-q", "-b", "main"], repo)
        with open(os.path.join(repo, ".git", "info", "exclude"), "a") as fh:
            fh.write(IGNORED)
        env = dict(os.environ, SETUPTOOLS_SCM_PRETEND_VERSION=ver)
        for cmd in (["python3", "-m", "venv", ".venv"],
                    [".venv/bin/pip", "install", "-q", "pytest", *pip_args]):
            out = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True)
            if out.returncode:
                sys.exit(f"{name}: {' '.join(cmd)} failed\n{out.stdout[-3000:]}{out.stderr[-3000:]}")
        sh(["git", "add", "-A"], repo)
        sh(["git", "-c", "user.name=sweep", "-c", "user.email=sweep@localhost", "commit", "-qm",
            f"{name} {ver} sdist"], repo)
        sh(["git", "tag", "-f", "sweep-base"], repo)
        t = time.time()
        code = sh(SUITE, repo, shell=True).returncode
        print(f"  suite exit {code} in {time.time() - t:.1f}s", flush=True)


# ---------------------------------------------------------------- run


def failing(repo, suite, timeout=600):
    """Failing test files (doctest files and doctested modules too) of a whole-suite run;
    (None, "timeout") when it ran out of time."""
    try:
        out = sh(suite, repo, shell=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    files = set()
    for m in re.finditer(r"^(?:FAILED|ERROR) (\S+?)(?:::|\s|$)", out.stdout + out.stderr, re.M):
        files.add(m.group(1).removeprefix("./"))
    return files, out.returncode


def kind_of(path):
    base = os.path.basename(path)
    parts = path.split("/")[:-1]
    if not path.endswith(".py"):
        return "data"
    if (base.startswith("test_") or base.endswith("_test.py") or base == "conftest.py"
            or any(p in ("tests", "testing", "test") for p in parts)):
        return "test"
    return "code"


def mutate(full, kind, rng):
    """Break the file; returns the mode applied."""
    with open(full, "rb") as fh:
        data = fh.read()
    if kind in ("code", "test"):
        data += b"\nraise RuntimeError('gate mutant')\n"
        mode = "raise"
    else:
        mode = rng.choices(["half", "flip", "empty"], [0.45, 0.45, 0.1])[0]
        if len(data) < 2:
            mode = "empty" if data else "fill"
        if mode == "half":
            data = data[: len(data) // 2]
        elif mode == "flip":
            marks = STRUCTURAL.get(os.path.splitext(full)[1])
            spots = [i for i, b in enumerate(data) if b in marks] if marks else []
            i = rng.choice(spots) if spots else rng.randrange(len(data))
            new = b"#" if data[i:i + 1] != b"#" else b"@"
            if not (marks and spots) and not data[i:i + 1].isascii():
                new = bytes([data[i] ^ 0xFF])
            data = data[:i] + new + data[i + 1:]
            mode = f"flip@{i}"
        elif mode == "fill":
            data = b"gate mutant\n"
        else:
            data = b""
    with open(full, "wb") as fh:
        fh.write(data)
    return mode


def sample(repo, n, rng):
    files = [f for f in sh(["git", "ls-files"], repo).stdout.split("\n") if f]
    files = [f for f in files if not any(fnmatch.fnmatch(f, g) for g in EXCLUDE)
             and not os.path.islink(os.path.join(repo, f))]
    pools = {k: sorted(f for f in files if kind_of(f) == k) for k in ("code", "test", "data")}
    for pool in pools.values():
        rng.shuffle(pool)
    quota = {"code": round(n * 0.4), "test": round(n * 0.25)}
    quota["data"] = n - quota["code"] - quota["test"]
    picked = []
    for k in ("code", "test", "data"):
        picked += [(f, k) for f in pools[k][: quota[k]]]
    rest = [(f, k) for k in ("code", "test", "data") for f in pools[k][quota[k]:]]
    rng.shuffle(rest)
    picked += rest[: n - len(picked)]
    return picked


def gate_report(gate, repo):
    out = sh([gate, "--affected", "HEAD~1...HEAD", "--json", "--list"], repo)
    try:
        return json.loads(out.stdout)
    except ValueError:
        return {"verdict": "error", "error": (out.stderr or out.stdout)[-2000:], "files": [], "selected": [],
                "test_files": 0}


def run_project(name, repo, gate, seed, n, raw):
    sh(["git", "reset", "-q", "--hard", "sweep-base"], repo)
    rng = random.Random(f"{seed}:{name}")
    t = time.time()
    base_fail, code = failing(repo, SUITE)
    # A mutant's suite gets ten times the base's (a module re-raising on every call can make a
    # failing suite take many minutes): past that the mutant is judged "timeout", not a miss.
    limit = max(120, 10 * (time.time() - t))
    # What pytest collects at the base: when a mutant stops the session (a conftest that cannot
    # be imported: exit 3/4), every one of these fails and must be selected.
    listing = sh(SUITE + " --collect-only -q", repo, shell=True, timeout=600).stdout
    collected = {m.group(1).removeprefix("./") for m in re.finditer(r"^(\S+?)::", listing, re.M)}
    print(f"{name}: base suite exit {code}, {len(base_fail)} failing file(s) at base {sorted(base_fail)}", flush=True)
    records = []
    for path, kind in sample(repo, n, rng):
        t = time.time()
        mode = mutate(os.path.join(repo, path), kind, rng)
        sh(["git", "-c", "user.name=sweep", "-c", "user.email=sweep@localhost", "commit", "-qam",
            f"mutant {path}"], repo)
        r = gate_report(gate, repo)
        verdict = r.get("verdict")
        row = next((f for f in r.get("files", []) if f.get("path") == path), {})
        chosen = {s["path"].split("::")[0].removeprefix("./") for s in r.get("selected", [])}
        now, code = failing(repo, SUITE, limit)
        timed_out = now is None
        now = now or set()
        broken = code not in (0, 1) and not timed_out
        if broken:
            now |= collected
        new = now - base_fail
        missed = sorted(new - chosen)
        full = verdict in ("refused", "named_full")
        confirmed = {}
        if missed and not full and not timed_out:
            for m in missed:
                alone, why = failing(repo, f"{SUITE} ./{m}", limit)
                confirmed[m] = why == "timeout" or why not in (0, 5)
        if verdict == "error":
            status = "gate-error"
        elif timed_out:
            status = "timeout"
        elif full:
            status = verdict
        elif missed:
            status = "MISSED"
        elif new or broken:
            status = "caught"
        else:
            status = "quiet"
        rec = {
            "project": name, "file": path, "kind": kind, "mode": mode, "status": status,
            "verdict": verdict, "row_verdict": row.get("verdict"), "row_reasons": row.get("reasons"),
            "selected": sorted(chosen), "test_files": r.get("test_files"), "new_failing": sorted(new),
            "missed": missed, "missed_confirmed_alone": confirmed, "suite_exit": code,
            "gate_error": r.get("error"), "seconds": round(time.time() - t, 1),
        }
        records.append(rec)
        raw.write(json.dumps(rec) + "\n")
        raw.flush()
        extra = f" missed {missed} (alone: {confirmed})" if status == "MISSED" else ""
        print(f"  {path} [{kind} {mode}]: {status}, row {row.get('verdict')}, "
              f"{len(chosen)}/{r.get('test_files')} selected, {len(new)} new failing{extra}", flush=True)
        sh(["git", "reset", "-q", "--hard", "sweep-base"], repo)
    return records


def summarise(name, records):
    n = len(records)
    full = sum(r["status"] in ("refused", "named_full") for r in records)
    bounded = [r for r in records if r["verdict"] == "bounded" and r["test_files"]]
    frac = sum(len(r["selected"]) / r["test_files"] for r in bounded) / len(bounded) if bounded else None
    return {
        "project": name, "changes": n, "caught": sum(r["status"] == "caught" for r in records),
        "quiet": sum(r["status"] == "quiet" for r in records),
        "misses": [{"file": r["file"], "kind": r["kind"], "mode": r["mode"], "missed": r["missed"],
                    "confirmed_alone": r["missed_confirmed_alone"], "row_verdict": r["row_verdict"],
                    "row_reasons": r["row_reasons"]} for r in records if r["status"] == "MISSED"],
        "full_share": full / n if n else 0.0, "selected_fraction": frac, "bounded": len(bounded),
        "gate_errors": sum(r["status"] == "gate-error" for r in records),
        "timeouts": [r["file"] for r in records if r["status"] == "timeout"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prepare", action="store_true", help="download and set up the projects, then stop")
    ap.add_argument("--run", action="store_true", help="mutate and compare (the default)")
    ap.add_argument("--projects-dir", default="/tmp/sweep/projects")
    ap.add_argument("--projects", default="", help="comma-separated subset of the project names")
    ap.add_argument("--gate", default="gate")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sample", type=int, default=20, help="mutants per project")
    ap.add_argument("--out", default="/tmp/sweep/sweep.json")
    ap.add_argument("--raw-dir", help="where PROJECT.jsonl go (default: --out without .json)")
    args = ap.parse_args()
    names = [p for p in args.projects.split(",") if p]
    pdir = os.path.abspath(args.projects_dir)
    if args.prepare:
        prepare(pdir, names)
        if not args.run:
            return
    gate = os.path.abspath(args.gate) if os.sep in args.gate else shutil.which(args.gate) or args.gate
    with open(gate, "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()[:16]
    version = sh([gate, "--version"], pdir).stdout.strip()
    raw_dir = args.raw_dir or os.path.splitext(os.path.abspath(args.out))[0]
    os.makedirs(raw_dir, exist_ok=True)
    print(f"gate {gate} ({version}, sha256 {digest}); seed {args.seed}; {args.sample} mutants per project", flush=True)
    summary, everything = [], []
    for name, ver, why, _ in PROJECTS:
        if names and name not in names:
            continue
        repo = os.path.join(pdir, name)
        if not os.path.isdir(os.path.join(repo, ".venv")):
            print(f"{name}: not prepared (run --prepare)", flush=True)
            continue
        with open(os.path.join(raw_dir, f"{name}.jsonl"), "w") as raw:
            records = run_project(name, repo, gate, args.seed, args.sample, raw)
        everything += records
        summary.append(dict(summarise(name, records), version=ver, why=why))
    print(f"\ngate {gate} ({version}, sha256 {digest}), seed {args.seed}")
    print("misses: mutants with a missed file (in brackets: those whose every missed file passes alone)")
    print(f"{'project':<24} {'changes':>7} {'caught':>6} {'quiet':>5} {'misses':>8} {'refused+nf':>10} {'sel.frac':>8} {'timeout':>7}")
    for s in summary:
        frac = "—" if s["selected_fraction"] is None else f"{s['selected_fraction']:.3f}"
        alone = sum(not any(m["confirmed_alone"].values()) for m in s["misses"])
        misses = f"{len(s['misses'])} ({alone})"
        print(f"{s['project'] + ' ' + s['version']:<24} {s['changes']:>7} {s['caught']:>6} {s['quiet']:>5} "
              f"{misses:>8} {s['full_share']:>9.0%} {frac:>8} {len(s['timeouts']):>7}")
    for s in summary:
        for m in s["misses"]:
            print(f"MISS {s['project']}: {m['file']} [{m['kind']} {m['mode']}] -> {m['missed']} "
                  f"(fails alone: {m['confirmed_alone']}); row {m['row_verdict']}: {m['row_reasons']}")
    with open(args.out, "w") as fh:
        json.dump({"gate": gate, "gate_version": version, "gate_sha256": digest, "seed": args.seed,
                   "sample": args.sample, "summary": summary, "records": everything}, fh, indent=1)
    sys.exit(1 if any(s["misses"] for s in summary) else 0)


if __name__ == "__main__":
    main()
