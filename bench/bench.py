"""The benchmark behind bench/run.sh: see its header. Prints one table and writes it as JSON."""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x", "NO_COLOR": "1",
       "GOFLAGS": "", "GOPROXY": "off"}


def run(cmd, cwd, check=True):
    """Wall time (perf_counter around the process) and peak RSS in KiB (from /usr/bin/time,
    whose own start-up is outside the timed span's concern: it is read, not timed)."""
    t = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], cwd=cwd, env=ENV,
                         capture_output=True, text=True)
    wall = time.perf_counter() - t
    if check and out.returncode != 0:
        raise SystemExit(f"{cmd} failed in {cwd}: {out.stderr[-2000:]}")
    return wall, int(out.stderr.strip().splitlines()[-1])


def stats(samples):
    times = [t for t, _ in samples]
    return {"median_s": round(statistics.median(times), 4), "min_s": round(min(times), 4),
            "max_s": round(max(times), 4), "peak_kib": max(m for _, m in samples), "runs": len(times)}


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True)


def commit_change(repo, files, count, tag):
    for f in files[:count]:
        with open(os.path.join(repo, f), "a") as h:
            h.write(f"\n# bench {tag}\n" if f.endswith(".py") else f"\n// bench {tag}\n")
    git(repo, "commit", "-qam", f"bench {tag}")


def gate_measures(gate, repo, files, runs, cold_runs):
    """cold plan, warm select after a one-file and a 50-file commit (a new commit per run)."""
    out = {}
    cold = []
    for _ in range(cold_runs):
        shutil.rmtree(os.path.join(repo, ".git", "gate"), ignore_errors=True)
        cold.append(run([gate, "plan"], repo))
    out["gate_cold_plan"] = stats(cold)
    rng = random.Random(11)
    for label, count in (("one_file", 1), ("fifty_files", 50)):
        samples, diffs = [], []
        for r in range(runs):
            commit_change(repo, rng.sample(files, min(count, len(files))), count, f"{label}{r}")
            samples.append(run([gate, "--affected", "HEAD~1...HEAD", "--list"], repo))
            diffs.append(run(["git", "diff", "--name-only", "HEAD~1...HEAD"], repo))
        out[f"gate_warm_{label}"] = stats(samples)
        out[f"git_diff_{label}"] = stats(diffs)
    return out


# How gate reaches the corpora's interpreter (`--python`); the peers keep their own binaries.
PYTHON = {"via": "path"}


def reach_python(via):
    global ENV
    PYTHON["via"] = via
    # Peers by absolute path: a shim put first on PATH must time gate's path, not theirs.
    PYTHON["ruff"] = shutil.which("ruff") or "ruff"
    if via == "shim":
        root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
        shims = os.path.join(root, "shims")
        if not os.path.exists(os.path.join(shims, "python3")):
            raise SystemExit(f"--python shim: no pyenv shim at {shims}/python3")
        ENV = {**ENV, "PATH": shims + os.pathsep + ENV.get("PATH", "")}


def fast_path(gate, repo):
    """The fast path's share of the corpus's Python files and whether its facts equal
    tree-sitter's on every one (`gate scan-check`)."""
    p = subprocess.run([gate, "scan-check", repo], capture_output=True, text=True, env=ENV)
    d = json.loads(p.stdout)
    return {"files": d["files"], "fast_share": d["fast_share"],
            "fast_byte_share": d["fast_byte_share"], "differ": len(d["differ"]),
            "fast_ms_on_fast_files": d["fast_path_ms_on_fast_files"],
            "tree_sitter_ms_on_fast_files": d["tree_sitter_ms_on_fast_files"]}


def restored_cache(gate, repo, files, cold_runs):
    """A CI job on a fresh clone that restores `.git/gate/cache` from an earlier commit's job
    (the documented cache key falls back to the newest cache): the cache is made at HEAD, a
    50-file change is committed, and each run clones the new HEAD afresh, copies the earlier
    cache in and plans."""
    shutil.rmtree(os.path.join(repo, ".git", "gate"), ignore_errors=True)
    run([gate, "plan"], repo)
    saved = tempfile.mkdtemp(prefix="gate-cache-")
    shutil.copytree(os.path.join(repo, ".git", "gate", "cache"), os.path.join(saved, "cache"))
    commit_change(repo, random.Random(5).sample(files, min(50, len(files))), 50, "restored")
    samples = []
    for i in range(cold_runs):
        clone = os.path.join(saved, f"clone{i}")
        subprocess.run(["git", "clone", "-q", repo, clone], check=True, env=ENV)
        shutil.copytree(os.path.join(saved, "cache"), os.path.join(clone, ".git", "gate", "cache"))
        samples.append(run([gate, "plan"], clone))
        shutil.rmtree(clone)
    shutil.rmtree(saved)
    return stats(samples)


def old_cold(old, repo, cold_runs):
    """Cold plan with an earlier gate (--old-gate), for the old/new figures."""
    samples = []
    for _ in range(cold_runs):
        shutil.rmtree(os.path.join(repo, ".git", "gate"), ignore_errors=True)
        samples.append(run([old, "plan"], repo))
    shutil.rmtree(os.path.join(repo, ".git", "gate"), ignore_errors=True)
    return stats(samples)


def python_corpus(gate, repo, files, runs, cold_runs):
    if PYTHON["via"] == "venv" and not os.path.exists(os.path.join(repo, ".venv")):
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                        os.path.join(repo, ".venv")], check=True)
        with open(os.path.join(repo, ".git", "info", "exclude"), "a") as f:
            f.write("/.venv\n")
    old = PYTHON.get("old")
    before = old_cold(old, repo, cold_runs) if old else None
    out = gate_measures(gate, repo, files, runs, cold_runs)
    if PYTHON.get("restored"):
        out["gate_restored_cache_plan"] = restored_cache(gate, repo, files, cold_runs)
    if before:
        out["old_gate_cold_plan"] = before
    if PYTHON.get("scan"):
        out["fast_path"] = fast_path(gate, repo)
    ruff = PYTHON.get("ruff", "ruff")
    out["ruff_analyze_graph"] = stats([run([ruff, "analyze", "graph"], repo) for _ in range(runs)])
    return out


def go_corpus(gate, repo, files, runs, cold_runs, module_dirs=(".",), env_goroot=None,
              peer_runs=None):
    global ENV
    if env_goroot:
        ENV = {**ENV, "GOROOT": env_goroot}
    peer = []
    for _ in range(peer_runs or runs):
        total_t, peak = 0.0, 0
        for d in module_dirs:
            t, m = run(["go", "list", "-e", "-deps", "-test", "./..."], os.path.join(repo, d))
            total_t += t
            peak = max(peak, m)
        peer.append((total_t, peak))
    out = {"go_list_deps_test": stats(peer)}
    out.update(gate_measures(gate, repo, files, runs, cold_runs))
    return out


def synthetic(kind, n, work, seed=7):
    repo = os.path.join(work, f"{kind}-{n}")
    if not os.path.exists(repo):
        subprocess.run([sys.executable, os.path.join(HERE, "gen_monorepo.py"), kind, str(n), repo,
                        "--seed", str(seed)], check=True)
    with open(os.path.join(repo, ".git", "bench-files")) as f:
        files = f.read().split()
    return repo, files


def django(work):
    repo = os.path.join(work, "django")
    if not os.path.exists(repo):
        dl = os.path.join(work, "dl")
        subprocess.run([sys.executable, "-m", "pip", "download", "django", "--no-binary", ":all:",
                        "--no-deps", "-q", "-d", dl], check=True)
        sdist = [f for f in os.listdir(dl) if f.lower().startswith("django-")][0]
        with tarfile.open(os.path.join(dl, sdist)) as t:
            t.extractall(os.path.join(work, "django-x"))
        top = os.listdir(os.path.join(work, "django-x"))[0]
        shutil.move(os.path.join(work, "django-x", top), repo)
        # The sdist's owner ids come along with a root extraction; git refuses such a tree.
        for d, dirs, fs in os.walk(repo):
            for name in [d] + [os.path.join(d, x) for x in dirs + fs]:
                os.lchown(name, os.getuid(), os.getgid())
        git(repo, "init", "-q", "-b", "master")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "django")
    files = subprocess.run(["git", "ls-files", "django/*.py"], cwd=repo, capture_output=True,
                           text=True).stdout.split()
    return repo, files


def gostd(work):
    """A copy of the toolchain's std/cmd sources as a git repo, with GOROOT pointed at it so
    go list reads the copy."""
    goroot = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True).stdout.strip()
    root = os.path.join(work, "goroot")
    repo = os.path.join(root, "src")
    if not os.path.exists(repo):
        os.makedirs(root)
        shutil.copytree(os.path.join(goroot, "src"), repo, symlinks=False)
        for d in ("pkg", "bin"):
            os.symlink(os.path.realpath(os.path.join(goroot, d)), os.path.join(root, d))
        shutil.copy(os.path.join(goroot, "VERSION"), os.path.join(root, "VERSION"))
        git(repo, "init", "-q", "-b", "master")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "std")
    files = subprocess.run(["git", "ls-files", "*.go"], cwd=repo, capture_output=True,
                           text=True).stdout.split()
    files = [f for f in files if "testdata" not in f and not f.endswith("_test.go")]
    return repo, files, root


def ratios(r):
    def med(k):
        return r[k]["median_s"] if k in r else None
    out = {}
    peer = med("ruff_analyze_graph") or med("go_list_deps_test")
    if peer:
        out["warm_one_file / peer"] = round(med("gate_warm_one_file") / peer, 3)
        out["warm_fifty_files / peer"] = round(med("gate_warm_fifty_files") / peer, 3)
        out["cold_plan / peer"] = round(med("gate_cold_plan") / peer, 3)
        if "gate_restored_cache_plan" in r:
            out["restored_cache_plan / peer"] = round(med("gate_restored_cache_plan") / peer, 3)
        if "old_gate_cold_plan" in r:
            out["old_cold_plan / peer"] = round(med("old_gate_cold_plan") / peer, 3)
    out["warm_one_file / git_diff"] = round(med("gate_warm_one_file") / med("git_diff_one_file"), 1)
    if "ruff_analyze_graph" in r:
        out["peak_memory cold / ruff"] = round(r["gate_cold_plan"]["peak_kib"] / r["ruff_analyze_graph"]["peak_kib"], 2)
    return out


def save(path, results):
    """Partial results as each corpus finishes, so a long run that stops keeps what it measured."""
    with open(path, "w") as f:
        json.dump(results, f, indent=2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gate", required=True)
    ap.add_argument("--sizes", default="10000,50000,100000")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--corpora", default="synthetic,django,gostd")
    ap.add_argument("--kinds", default="python,go", help="synthetic kinds")
    ap.add_argument("--json", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--work")
    ap.add_argument("--python", choices=["path", "shim", "venv"], default="path",
                    help="how gate reaches the corpora's interpreter: the first python3 on PATH "
                         "as this process has it (a version manager's exec puts the real one "
                         "first), pyenv's shim put first on PATH (as a developer's shell has it), "
                         "or a .venv in each Python corpus")
    ap.add_argument("--old-gate", help="an earlier gate binary: its cold plan is measured "
                    "on the Python corpora too, for old and new figures in one run")
    ap.add_argument("--restored-cache", action="store_true",
                    help="on each Python corpus, a cold plan on a fresh clone that restored an "
                         "earlier commit's .git/gate/cache (as the documented CI cache key does)")
    ap.add_argument("--scan-check", action="store_true",
                    help="on each Python corpus, the fast path's share of files and its equality "
                         "with tree-sitter (gate scan-check)")
    a = ap.parse_args()
    reach_python(a.python)
    PYTHON["old"] = os.path.abspath(a.old_gate) if a.old_gate else None
    PYTHON["scan"] = a.scan_check
    PYTHON["restored"] = a.restored_cache
    gate = os.path.abspath(a.gate)
    work = a.work or tempfile.mkdtemp(prefix="gate-bench-")
    os.makedirs(work, exist_ok=True)
    corpora = a.corpora.split(",")
    results = {}
    if "synthetic" in corpora:
        for n in [int(s) for s in a.sizes.split(",")]:
            for kind in a.kinds.split(","):
                repo, files = synthetic(kind, n, work)
                cold_runs = a.cold_runs if n <= 50000 else 1
                if kind == "python":
                    results[f"python-{n}"] = python_corpus(gate, repo, files, a.runs, cold_runs)
                else:
                    # go list takes minutes at 100k files: one run there.
                    results[f"go-{n}"] = go_corpus(gate, repo, files, a.runs, cold_runs,
                                                   peer_runs=1 if n >= 100000 else None)
                print(f"measured {kind}-{n}", file=sys.stderr)
                save(a.json, results)
    if "django" in corpora:
        repo, files = django(work)
        results["django"] = python_corpus(gate, repo, files, a.runs, a.cold_runs)
        print("measured django", file=sys.stderr)
        save(a.json, results)
    if "gostd" in corpora:
        repo, files, root = gostd(work)
        results["go-std"] = go_corpus(gate, repo, files, a.runs, a.cold_runs, (".", "cmd"), root)
        print("measured go-std", file=sys.stderr)
    for name, r in results.items():
        r["ratios"] = ratios(r)
    sizes = [int(s) for s in a.sizes.split(",")]
    for kind in ("python", "go"):
        if f"{kind}-10000" in results and f"{kind}-50000" in results:
            results[f"{kind}-50000"]["ratios"]["cold 50k / 10k"] = round(
                results[f"{kind}-50000"]["gate_cold_plan"]["median_s"]
                / results[f"{kind}-10000"]["gate_cold_plan"]["median_s"], 2)
    head = f"{'corpus':<14}{'gate cold':>11}{'warm 1':>9}{'warm 50':>9}{'peer':>9}{'git diff':>10}{'1/peer':>8}{'cold/peer':>10}{'1/diff':>8}{'MiB':>7}"
    print(head)
    for name, r in results.items():
        peer = r.get("ruff_analyze_graph") or r.get("go_list_deps_test")
        rt = r["ratios"]
        print(f"{name:<14}{r['gate_cold_plan']['median_s']:>10.3f}s{r['gate_warm_one_file']['median_s']:>8.3f}s"
              f"{r['gate_warm_fifty_files']['median_s']:>8.3f}s{peer['median_s']:>8.3f}s"
              f"{r['git_diff_one_file']['median_s']:>9.4f}s{rt.get('warm_one_file / peer', 0):>8.3f}"
              f"{rt.get('cold_plan / peer', 0):>10.2f}{rt['warm_one_file / git_diff']:>8.1f}"
              f"{r['gate_cold_plan']['peak_kib'] / 1024:>7.0f}")
        if "old_gate_cold_plan" in r:
            o = r["old_gate_cold_plan"]
            print(f"{'':<14}old cold {o['median_s']:.3f}s ({o['median_s'] / peer['median_s']:.2f}x peer, "
                  f"{o['peak_kib'] / 1024:.0f} MiB); peer {peer['peak_kib'] / 1024:.0f} MiB")
        if "gate_restored_cache_plan" in r:
            c = r["gate_restored_cache_plan"]
            print(f"{'':<14}fresh clone, earlier cache restored: {c['median_s']:.3f}s "
                  f"({c['median_s'] / peer['median_s']:.2f}x peer)")
        if "fast_path" in r:
            f = r["fast_path"]
            print(f"{'':<14}fast path: {f['fast_share']:.1%} of {f['files']} files, "
                  f"{f['fast_byte_share']:.1%} of bytes, {f['differ']} differ")
    results["_meta"] = {"runs": a.runs, "cold_runs": a.cold_runs, "work": work,
                        "gate": subprocess.run([gate, "--version"], capture_output=True, text=True).stdout.strip(),
                        "ruff": subprocess.run(["ruff", "--version"], capture_output=True, text=True).stdout.strip(),
                        "go": subprocess.run(["go", "version"], capture_output=True, text=True).stdout.strip(),
                        "cpus": os.cpu_count(), "python": PYTHON["via"]}
    with open(a.json, "w") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {a.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
