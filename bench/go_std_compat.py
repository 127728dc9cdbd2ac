"""gate's Go selection vs `go list -deps -test`, package by package, over the standard library.

For every package P, the oracle is the set of packages whose test binary depends on P (go list
-deps -test, per module). gate's selection for a change in P is the set of test units its graph
reaches from P — computed here from the graph `gate plan --out` exports, and checked against
real `gate --files` runs on a sample of packages. Recall must be 100%.
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODULES = ["", "cmd"]


def timed(cmd, cwd, runs):
    times = []
    out = None
    for _ in range(runs):
        t = time.perf_counter()
        out = subprocess.run(cmd, cwd=cwd, capture_output=True, check=True)
        times.append(time.perf_counter() - t)
    return out, times


def stream(data):
    dec = json.JSONDecoder()
    text = data.decode()
    i = 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        obj, i = dec.raw_decode(text, i)
        yield obj


def oracle(goroot_src, runs):
    """package dir → dirs of packages whose tests depend on it; ignored files per dir."""
    base = lambda p: p.split(" [")[0]
    real = os.path.realpath(goroot_src)
    dirs, binaries, ignored = {}, [], collections.defaultdict(set)
    times = []
    for module in MODULES:
        out, t = timed(["go", "list", "-e", "-deps", "-test", "-json", "./..."],
                       os.path.join(goroot_src, module), runs)
        times.append(t)
        for pkg in stream(out.stdout):
            path = pkg["ImportPath"]
            d = os.path.realpath(pkg["Dir"]) if pkg.get("Dir") else ""
            if d.startswith(real + "/") or d == real:
                rel = os.path.relpath(d, real)
                rel = "" if rel == "." else rel
                dirs.setdefault(base(path), rel)
                for f in pkg.get("IgnoredGoFiles", []) + pkg.get("IgnoredOtherFiles", []):
                    ignored[rel].add(f"{rel}/{f}" if rel else f)
            if path.endswith(".test"):
                binaries.append((path[: -len(".test")], [base(x) for x in pkg.get("Deps", [])]))
    sel = collections.defaultdict(set)
    for tested, deps in binaries:
        if tested not in dirs:
            continue
        for dep in deps + [tested]:
            if dep in dirs:
                sel[dirs[dep]].add(dirs[tested])
    # go list times per module add up to the whole graph's.
    total = [sum(x) for x in zip(*times)]
    return sel, set(dirs.values()), ignored, total


def gate_graph(repo, gate, runs):
    out_dir = tempfile.mkdtemp()
    # cold: no cache
    subprocess.run(["rm", "-rf", os.path.join(repo, ".git", "gate")], check=True)
    _, cold = timed([gate, "plan", "--out", out_dir], repo, 1)
    _, warm = timed([gate, "plan"], repo, runs)
    _, select = timed([gate, "--affected", "HEAD", "--list"], repo, runs)
    edges = {}
    for name in ("import-graph.json", "reference-edges.json"):
        with open(os.path.join(out_dir, name)) as f:
            edges[name] = json.load(f)["edges"]
    return edges, cold[0], warm, select


def reach(edges, skip_from=frozenset()):
    rev = collections.defaultdict(list)
    for e in edges:
        if e["from"] in skip_from:
            continue
        rev[e["to"]].append(e["from"])

    def walk(start):
        seen, todo = {start}, [start]
        while todo:
            n = todo.pop()
            for m in rev.get(n, ()):
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        return {unit_dir(n) for n in seen if n == "." or n.startswith("./")}

    return walk


def unit_dir(node):
    return "" if node == "." else node[2:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--goroot-src", required=True)
    ap.add_argument("--gate", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sample", type=int, default=25)
    ap.add_argument("--json")
    a = ap.parse_args()
    truth, packages, ignored, go_times = oracle(a.goroot_src, a.runs)
    edges, cold, warm, select = gate_graph(a.repo, a.gate, a.runs)
    all_edges = edges["import-graph.json"] + edges["reference-edges.json"]
    walk = reach(all_edges)
    tagged_files = frozenset(f for fs in ignored.values() for f in fs)
    walk_untagged = reach(all_edges, tagged_files)
    walk_imports = reach(edges["import-graph.json"])
    misses, extra, reasons = [], 0, collections.Counter()
    go_tested = set().union(*truth.values())
    checked = 0
    for pkg in sorted(packages):
        want = truth.get(pkg, set())
        got = walk("go:" + pkg)
        checked += 1
        if not want <= got:
            misses.append((pkg, sorted(want - got)))
        more = got - want
        extra += len(more)
        if more:
            untagged = walk_untagged("go:" + pkg)
            imports = walk_imports("go:" + pkg)
            for t in more:
                if t not in go_tested:
                    reasons["build tags (go builds no tests for that package on this platform)"] += 1
                elif t not in untagged:
                    reasons["build tags (files go list ignores on this platform)"] += 1
                elif t not in imports:
                    reasons["reference edges (a file names a path under the package)"] += 1
                else:
                    reasons["other"] += 1
    # The walk above must be gate's own selection: compare with real runs on a sample.
    sample = sorted(packages)[:: max(1, len(packages) // a.sample)][: a.sample]
    disagree = []
    files = subprocess.run(["git", "ls-files"], cwd=a.repo, capture_output=True, text=True).stdout.split()
    by_dir = collections.defaultdict(list)
    for f in files:
        if f.endswith(".go") and not f.endswith("_test.go"):
            by_dir[os.path.dirname(f)].append(f)
    for pkg in sample:
        if not by_dir.get(pkg):
            continue
        f = by_dir[pkg][0]
        r = json.loads(subprocess.run([a.gate, "--files", f, "--list", "--json"], cwd=a.repo,
                                      capture_output=True, check=True).stdout)
        got = {unit_dir(s["path"]) for s in r["selected"] if s["path"] == "." or s["path"].startswith("./")}
        # A change to one file selects what reaches the package plus what names that file.
        if got != walk(f):
            disagree.append(pkg)
    med = statistics.median
    result = {
        "go_version": subprocess.run(["go", "version"], capture_output=True, text=True).stdout.strip(),
        "packages": checked,
        "dependencies_checked": sum(len(v) for v in truth.values()),
        "recall": 1.0 - (sum(len(m[1]) for m in misses) / max(1, sum(len(v) for v in truth.values()))),
        "misses": misses[:20],
        "extra_selections": extra,
        "extra_reasons": dict(reasons),
        "sample_checked_with_gate_runs": len(sample),
        "sample_disagreements": disagree,
        "gate_plan_cold_s": round(cold, 3),
        "gate_plan_warm_s": {"median": round(med(warm), 3), "min": round(min(warm), 3), "max": round(max(warm), 3)},
        "gate_affected_list_s": {"median": round(med(select), 3), "min": round(min(select), 3), "max": round(max(select), 3)},
        "go_list_deps_test_s": {"median": round(med(go_times), 3), "min": round(min(go_times), 3), "max": round(max(go_times), 3)},
    }
    result["ratio_gate_warm_plan_to_go_list"] = round(med(warm) / med(go_times), 3)
    print(f"{result['go_version']}: {checked} packages, {result['dependencies_checked']} (package, test) dependencies")
    print(f"recall: {result['recall']:.2%} ({len(misses)} packages missing a test go list names)")
    print(f"extra selections: {extra} — " + ", ".join(f"{n} {r}" for r, n in reasons.items()))
    print(f"sample: {len(sample)} packages re-checked with real gate runs, {len(disagree)} disagreement(s)")
    print(f"time (median of {a.runs}): go list -deps -test ./... (std + cmd) {med(go_times):.2f} s; "
          f"gate plan warm {med(warm):.2f} s (cold {cold:.2f} s); gate --affected HEAD --list {med(select):.2f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=2)
    sys.exit(0 if not misses and not disagree else 1)


if __name__ == "__main__":
    main()
