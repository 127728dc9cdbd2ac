#!/usr/bin/env python3
"""gate against `vitest related` on a real TypeScript project with a Vitest suite.

    python3 bench/js_projects.py --repo /path/to/checkout --gate /path/to/gate \
        [--changes 40 --mutants 20 --seed 1] [--out results.json] [--no-coverage]

The checkout must be clean, on the branch to measure (its name is the base of every range),
with `node_modules` installed and `npx vitest run` passing (test files that fail at baseline
are reported and left out of the truth). Nothing is pushed; every change is a commit on the
throw-away branch `gate-bench`, deleted afterwards (`git checkout -f BASE; git branch -D`).
gate's caches (.git/gate) are kept between changes: the warm path is what is measured.

1. Single-file changes (--changes): a seeded choice among the tracked files, mostly source
   (.ts/.tsx/.js/.mjs/.cjs/.mts/.json not tests), plus a few test files, configuration files
   and docs (a small repository is topped up with its other tracked files). Each gets a
   harmless edit (a comment line appended; a trailing newline for JSON),
   committed, then:
     gate:  `gate --affected BASE...HEAD --list --json` -> the verdict of each changed-file
            row and the selected test files; selected fraction = selected / the test files of
            the baseline `vitest run` (named_full or refused -> 1.0; gate's own count, which
            may add typecheck-only *.test-d.ts files, is kept as gate_fraction_own).
     peer:  `npx vitest related --run --reporter=json --passWithNoTests FILE` -> the test files
            it ran / the same denominator.
   Reported: the changes by verdict, the mean fractions over the bounded ones, their ratio.

2. Mutants (--mutants killed ones wanted, at most --mutant-tries tried): seeded semantic
   mutations of source lines that the suite executes (from a baseline V8 coverage run unless
   --no-coverage): `<`<->`<=`, `>`<->`>=`, `===`<->`!==`, `&&`<->`||`, `true`<->`false`,
   a number n -> n+1, a string 's' -> 's_', `return X` -> `return undefined`. Each is committed;
   truth is the whole suite (`npx vitest run --reporter=json`): the test files with a failure,
   minus those failing at baseline. A mutant is killed when that set is not empty. For each
   killed mutant: gate caught it when its selection (--list --json) holds every failing file
   (or its verdict runs everything); the peer caught it when `vitest related --run` of the
   mutated file ran every failing file. A miss is printed with the changed file's gate row.

Output: a table on stdout and the JSON (--out, default ./js_projects-NAME.json).
One Vitest process at a time.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x", "NO_COLOR": "1", "CI": "1"}
ENV.pop("GITHUB_ACTIONS", None)
BRANCH = "gate-bench"
CODE = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
TEST_RE = re.compile(r"(\.(test|spec)(-d)?\.[cm]?[jt]sx?$)|(\.test-d\.[cm]?[jt]sx?$)")
CONFIG_RE = re.compile(r"(^|/)(package\.json|tsconfig[^/]*\.json|(vite|vitest|eslint|rollup|build|"
                       r"babel|prettier)\.config\.[cm]?[jt]s|\.prettierrc[^/]*|\.npmrc|"
                       r"pnpm-workspace\.yaml|renovate\.json)$")


def run(args, cwd, timeout=None, check=False):
    """Run in its own process group; on timeout kill the group. Returns (rc, out, err, secs)."""
    t = time.perf_counter()
    p = subprocess.Popen(args, cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, out, err, time.perf_counter() - t
    if check and p.returncode != 0:
        raise SystemExit(f"{args} failed in {cwd} ({p.returncode}): {err[-2000:]}")
    return p.returncode, out, err, time.perf_counter() - t


def git(repo, *args, check=True):
    return run(["git", "-c", "core.hooksPath=/dev/null", *args], repo, check=check)[1]


def rel(repo, name):
    name = os.path.realpath(name)
    return os.path.relpath(name, repo) if name.startswith(repo + os.sep) else name


def vitest_json(repo, args, timeout):
    """Run vitest with the JSON reporter; return (rc, report or None, ran, failed, secs)."""
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    os.unlink(path)
    rc, out, err, secs = run(["npx", "vitest", *args, "--reporter=json", f"--outputFile={path}"],
                             repo, timeout=timeout)
    report = None
    if os.path.exists(path):
        with open(path) as h:
            try:
                report = json.load(h)
            except ValueError:
                report = None
        os.unlink(path)
    ran, failed = set(), set()
    for t in (report or {}).get("testResults", []):
        name = rel(repo, t["name"])
        ran.add(name)
        if t.get("status") == "failed" or any(a.get("status") == "failed"
                                              for a in t.get("assertionResults", [])):
            failed.add(name)
    return rc, report, ran, failed, secs, (out + err)[-3000:]


def gate_select(repo, gate, base):
    rc, out, err, secs = run([gate, "--affected", f"{base}...HEAD", "--list", "--json"], repo,
                             timeout=600)
    try:
        rep = json.loads(out)
    except ValueError:
        return {"error": f"rc {rc}: {err[-1500:]}", "secs": secs}
    rows = [{"path": f["path"], "verdict": f["verdict"], "reasons": f.get("reasons", []),
             "tests": f.get("tests", [])} for f in rep.get("files", [])]
    verdicts = [r["verdict"] for r in rows]
    full = (rep.get("verdict") in ("named_full", "refused")
            or any(v in ("named_full", "refused") for v in verdicts))
    selected = sorted(s["path"] for s in rep.get("selected", []))
    total = rep.get("test_files") or 0
    return {"rc": rc, "verdict": rep.get("verdict"), "rows": rows, "full": full,
            "selected": selected, "test_files": total, "summary": rep.get("summary"),
            "fraction": 1.0 if full else (len(selected) / total if total else 0.0),
            "secs": round(secs, 3)}


def commit_change(repo, base, path, edit):
    git(repo, "checkout", "-q", "-f", "-B", BRANCH, base)
    full = os.path.join(repo, path)
    with open(full, encoding="utf-8", errors="surrogateescape") as h:
        text = h.read()
    new = edit(text)
    with open(full, "w", encoding="utf-8", errors="surrogateescape") as h:
        h.write(new)
    git(repo, "add", "--", path)
    git(repo, "commit", "-q", "--no-verify", "-m", f"bench: {path}")


def reset(repo, base):
    git(repo, "checkout", "-q", "-f", base)
    git(repo, "branch", "-q", "-D", BRANCH, check=False)


def comment_edit(path):
    if path.endswith(".json"):
        return lambda t: t + "\n"
    if path.endswith(CODE) or re.search(r"\.config\.[cm]?[jt]s$", path):
        return lambda t: t + ("" if t.endswith("\n") else "\n") + "// gate-bench: comment\n"
    if path.endswith((".md", ".yaml", ".yml", ".sh", ".toml")) or os.path.basename(path).startswith("."):
        mark = "<!-- gate-bench -->" if path.endswith(".md") else "# gate-bench: comment"
        return lambda t: t + ("" if t.endswith("\n") else "\n") + mark + "\n"
    return lambda t: t + "\n"


# ---- mutations ---------------------------------------------------------------------------
OPS = [
    (re.compile(r"(?<= )(===|!==|==|!=|<=|>=|<|>|&&|\|\|)(?= )"),
     {"===": "!==", "!==": "===", "==": "!=", "!=": "==", "<=": "<", "<": "<=", ">=": ">",
      ">": ">=", "&&": "||", "||": "&&"}),
]
BOOL = re.compile(r"\b(true|false)\b")
NUM = re.compile(r"(?<![\w.$'\"])(\d+)(?![\w.'\"])")
STR = re.compile(r"""(['"])([^'"\\\n]{0,40})\1""")
RET = re.compile(r"\breturn\s+(?!undefined\b)([^;]+?)\s*;?\s*$")


def mutation_sites(line):
    s = line.strip()
    if (not s or s.startswith(("//", "*", "/*", "import ", "export type", "type ", "interface "))
            or re.match(r"export \{.*\} from|export \* from", s)):
        return []
    code = line.split(" //")[0]
    sites = []
    for rx, table in OPS:
        for m in rx.finditer(code):
            sites.append(("op", m.start(1), m.end(1), table[m.group(1)]))
    for m in BOOL.finditer(code):
        sites.append(("bool", m.start(), m.end(), "false" if m.group(1) == "true" else "true"))
    for m in NUM.finditer(code):
        sites.append(("num", m.start(), m.end(), str(int(m.group(1)) + 1)))
    for m in STR.finditer(code):
        if "from " in code[:m.start()] or "require(" in code[:m.start()]:
            continue
        sites.append(("str", m.start(), m.end(), m.group(1) + m.group(2) + "_" + m.group(1)))
    m = RET.search(code)
    if m and m.group(1).strip() not in ("", "undefined") and not m.group(1).rstrip().endswith(
            ("(", "{", "[", "`", "+", "&&", "||", "?", ":", ",", "=>")):  # keep it one whole expression
        sites.append(("return", m.start(1), m.end(1), "undefined"))
    return sites


def executed_lines(repo, timeout):
    """{relpath: set(line)} of statements the suite runs, from V8 coverage (istanbul JSON)."""
    d = tempfile.mkdtemp(prefix="gate-bench-cov-")
    rc, _out, err, _ = run(["npx", "vitest", "run", "--coverage.enabled", "--coverage.reporter=json",
                            "--coverage.provider=v8",
                            f"--coverage.reportsDirectory={d}", "--reporter=dot"], repo, timeout=timeout)
    path = os.path.join(d, "coverage-final.json")
    lines = {}
    if os.path.exists(path):
        with open(path) as h:
            cov = json.load(h)
        for f, data in cov.items():
            got = lines.setdefault(rel(repo, f), set())
            for sid, count in data.get("s", {}).items():
                if count:
                    loc = data["statementMap"][sid]
                    got.add(loc["start"]["line"])
    shutil.rmtree(d, ignore_errors=True)
    return lines or None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--gate", required=True)
    ap.add_argument("--changes", type=int, default=40)
    ap.add_argument("--mutants", type=int, default=20, help="killed mutants wanted")
    ap.add_argument("--mutant-tries", type=int, default=0, help="default 4 x --mutants")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=300, help="seconds for one vitest run")
    ap.add_argument("--no-coverage", action="store_true", help="mutate any line, not only run ones")
    ap.add_argument("--out")
    a = ap.parse_args()
    repo = os.path.realpath(a.repo)
    gate = os.path.realpath(a.gate)
    name = os.path.basename(repo)
    out_path = a.out or f"js_projects-{name}.json"
    rng = random.Random(a.seed)

    base = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    if base in ("HEAD", BRANCH):
        raise SystemExit("check out the branch to measure (not a detached HEAD or gate-bench)")
    if git(repo, "status", "--porcelain", "--untracked-files=no").strip():
        raise SystemExit("the checkout has uncommitted changes")
    git(repo, "branch", "-q", "-D", BRANCH, check=False)
    commit = git(repo, "rev-parse", "HEAD").strip()
    tracked = [p for p in git(repo, "ls-files").splitlines()
               if os.path.isfile(os.path.join(repo, p)) and not os.path.islink(os.path.join(repo, p))]

    print(f"# {name} @ {commit} (base {base})", flush=True)
    rc, _rep, universe, base_failed, secs, tail = vitest_json(repo, ["run"], a.timeout)
    if not universe:
        raise SystemExit(f"baseline `vitest run` ran no test files:\n{tail}")
    print(f"baseline: {len(universe)} test files, {len(base_failed)} failing "
          f"{sorted(base_failed)} ({secs:.1f}s)", flush=True)
    g0 = gate_select(repo, gate, base)  # warm gate's caches on the base tree (empty range)

    # ---- 1. single-file changes
    tests = [p for p in tracked if TEST_RE.search(p) or p in universe]
    configs = [p for p in tracked if CONFIG_RE.search(p) and p not in tests]
    docs = [p for p in tracked if p.endswith((".md", ".yml", ".yaml")) and p not in configs]
    sources = [p for p in tracked if p.endswith(CODE + (".json",))
               and p not in tests and p not in configs]
    n_tests = min(len(tests), max(2, a.changes // 10))
    n_conf = min(len(configs), max(2, a.changes // 10))
    n_docs = min(len(docs), 2)
    n_src = min(len(sources), max(0, a.changes - n_tests - n_conf - n_docs))
    picks = ([("source", p) for p in rng.sample(sorted(sources), n_src)]
             + [("test", p) for p in rng.sample(sorted(tests), n_tests)]
             + [("config", p) for p in rng.sample(sorted(configs), n_conf)]
             + [("doc", p) for p in rng.sample(sorted(docs), n_docs)])
    # a small repository: top up with the remaining tracked files, sources first
    chosen = {p for _k, p in picks}
    kind_of = lambda p: ("source" if p in sources else "test" if p in tests
                         else "config" if p in configs else "doc" if p in docs else "other")
    rest = [p for p in tracked if p not in chosen]
    rest = sorted(rest, key=lambda p: (kind_of(p) != "source", rng.random()))
    picks += [(kind_of(p), p) for p in rest[:max(0, a.changes - len(picks))]]
    changes = []
    for i, (kind, path) in enumerate(picks):
        try:
            commit_change(repo, base, path, comment_edit(path))
            g = gate_select(repo, gate, base)
            prc, _r, pran, _pf, psecs, ptail = vitest_json(
                repo, ["related", "--run", "--passWithNoTests", path], a.timeout)
        finally:
            reset(repo, base)
        row = (g.get("rows") or [{}])[0]
        rec = {"kind": kind, "path": path, "verdict": row.get("verdict", "error"),
               "reasons": row.get("reasons"), "gate_full": g.get("full"),
               "gate_selected": g.get("selected"),
               "gate_fraction": None if g.get("error") else (
                   1.0 if g["full"] else len(set(g["selected"]) & universe) / len(universe)),
               "gate_fraction_own": g.get("fraction"),
               "gate_secs": g.get("secs"), "gate_error": g.get("error"),
               "peer_rc": prc, "peer_ran": sorted(pran),
               "peer_fraction": len(pran & universe) / len(universe), "peer_secs": round(psecs, 2)}
        changes.append(rec)
        print(f"[{i + 1:3}/{len(picks)}] {kind:6} {path:50} gate {rec['verdict']:10} "
              f"{rec['gate_fraction'] if rec['gate_fraction'] is not None else float('nan'):.2f}  "
              f"peer {rec['peer_fraction']:.2f} (rc {prc})", flush=True)

    # ---- 2. mutants
    cov = None if a.no_coverage else executed_lines(repo, a.timeout)
    sites = []
    for path in sorted(sources):
        if not path.endswith(CODE) or "/fixture" in path or path.startswith(("examples/", "docs/")):
            continue
        if cov is not None and path not in cov:
            continue
        with open(os.path.join(repo, path), encoding="utf-8", errors="surrogateescape") as h:
            lines = h.read().split("\n")
        for no, line in enumerate(lines, 1):
            if cov is not None and no not in cov[path]:
                continue
            for s in mutation_sites(line):
                sites.append((path, no, *s))
    by_file = {}
    for s in sites:
        by_file.setdefault(s[0], []).append(s)
    print(f"mutation sites: {len(sites)} in {len(by_file)} files "
          f"({'executed lines' if cov is not None else 'all lines'})", flush=True)
    order = []
    files = sorted(by_file)
    pools = {f: rng.sample(by_file[f], len(by_file[f])) for f in files}
    while any(pools.values()):
        f = rng.choice([f for f in files if pools[f]])
        order.append(pools[f].pop())
    tries = a.mutant_tries or 4 * a.mutants
    mutants = []
    killed = 0
    for (path, no, kind, start, end, repl) in order[:tries]:
        if killed >= a.mutants:
            break

        def edit(text, no=no, start=start, end=end, repl=repl):
            lines = text.split("\n")
            lines[no - 1] = lines[no - 1][:start] + repl + lines[no - 1][end:]
            return "\n".join(lines)

        with open(os.path.join(repo, path), encoding="utf-8", errors="surrogateescape") as h:
            orig = h.read().split("\n")[no - 1]
        desc = f"{path}:{no} [{kind}] {orig.strip()[:70]!r} -> {orig[:start].strip()[-20:]}⟨{repl}⟩"
        try:
            commit_change(repo, base, path, edit)
            g = gate_select(repo, gate, base)
            rc, _r, ran, failed, secs, tail = vitest_json(repo, ["run"], a.timeout)
            failed -= base_failed
            rec = {"path": path, "line": no, "kind": kind, "original": orig.strip(),
                   "replacement": repl, "suite_rc": rc, "suite_secs": round(secs, 1),
                   "failing": sorted(failed), "gate_verdict": g.get("verdict"),
                   "gate_rows": g.get("rows"), "gate_full": g.get("full"),
                   "gate_selected": g.get("selected")}
            if rc is None:
                rec["status"] = "timeout"
            elif not failed:
                rec["status"] = "errored" if rc not in (0,) else "survived"
                if rc not in (0,):
                    rec["tail"] = tail
            else:
                killed += 1
                rec["status"] = "killed"
                sel = set(g.get("selected") or [])
                rec["gate_missed"] = [] if g.get("full") else sorted(failed - sel)
                prc, _pr, pran, _pf, _ps, _pt = vitest_json(
                    repo, ["related", "--run", "--passWithNoTests", path], a.timeout)
                rec["peer_ran"] = sorted(pran)
                rec["peer_missed"] = sorted(failed - pran)
                if rec["gate_missed"]:
                    rec["gate_explain"] = [run([gate, "explain", t], repo, timeout=120)[1][-3000:]
                                           for t in rec["gate_missed"][:3]]
        finally:
            reset(repo, base)
        mutants.append(rec)
        extra = ""
        if rec["status"] == "killed":
            extra = (f" failing {len(rec['failing'])}  gate {'FULL' if rec['gate_full'] else len(rec['gate_selected'])}"
                     f"{' MISS ' + str(rec['gate_missed']) if rec['gate_missed'] else ' ok'}"
                     f"  peer {len(rec['peer_ran'])}"
                     f"{' MISS ' + str(rec['peer_missed']) if rec['peer_missed'] else ' ok'}")
        print(f"mutant {len(mutants):3} {rec['status']:8} {desc}{extra}", flush=True)

    # ---- summary
    by_verdict = {}
    for c in changes:
        by_verdict[c["verdict"]] = by_verdict.get(c["verdict"], 0) + 1
    bounded = [c for c in changes if not c["gate_full"] and c["gate_fraction"] is not None]
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
    g_mean = mean([c["gate_fraction"] for c in bounded])
    p_mean = mean([c["peer_fraction"] for c in bounded])
    k = [m for m in mutants if m["status"] == "killed"]
    summary = {
        "project": name, "commit": commit, "base": base, "test_files_vitest": len(universe),
        "test_files_gate": g0.get("test_files"), "baseline_failing": sorted(base_failed),
        "changes": len(changes), "by_verdict": by_verdict, "bounded": len(bounded),
        "gate_mean_fraction_bounded": g_mean, "peer_mean_fraction_bounded": p_mean,
        "ratio_gate_over_peer": g_mean / p_mean if p_mean else None,
        "resolved_only": len([c for c in bounded if c["verdict"] == "resolved"]),
        "gate_mean_fraction_resolved": mean([c["gate_fraction"] for c in bounded
                                             if c["verdict"] == "resolved"]),
        "peer_mean_fraction_resolved": mean([c["peer_fraction"] for c in bounded
                                             if c["verdict"] == "resolved"]),
        "gate_mean_fraction_all": mean([c["gate_fraction"] for c in changes
                                        if c["gate_fraction"] is not None]),
        "peer_mean_fraction_all": mean([c["peer_fraction"] for c in changes]),
        "gate_median_secs": sorted(c["gate_secs"] or 0 for c in changes)[len(changes) // 2] if changes else None,
        "mutants_tried": len(mutants), "mutants_killed": len(k),
        "mutants_survived": sum(m["status"] == "survived" for m in mutants),
        "mutants_other": sum(m["status"] in ("timeout", "errored") for m in mutants),
        "gate_caught": sum(not m["gate_missed"] for m in k),
        "peer_caught": sum(not m["peer_missed"] for m in k),
        "gate_misses": [{"mutant": f"{m['path']}:{m['line']} {m['original']} -> {m['replacement']}",
                         "missed": m["gate_missed"], "rows": m["gate_rows"]}
                        for m in k if m["gate_missed"]],
        "peer_misses": [{"mutant": f"{m['path']}:{m['line']} {m['original']} -> {m['replacement']}",
                         "missed": m["peer_missed"]} for m in k if m["peer_missed"]],
    }
    with open(out_path, "w") as h:
        json.dump({"summary": summary, "changes": changes, "mutants": mutants}, h, indent=1)

    print()
    print(f"{name} @ {commit[:12]}: {len(universe)} test files (vitest run), "
          f"{g0.get('test_files')} (gate)")
    print(f"{'changes':>10} " + "  ".join(f"{v} {n}" for v, n in sorted(by_verdict.items())))
    print(f"{'bounded':>10} {len(bounded)}: mean selected fraction gate {g_mean:.3f}  "
          f"peer {p_mean:.3f}  ratio {summary['ratio_gate_over_peer'] or float('nan'):.2f}")
    print(f"{'resolved':>10} {summary['resolved_only']}: gate "
          f"{summary['gate_mean_fraction_resolved']:.3f}  peer {summary['peer_mean_fraction_resolved']:.3f}")
    print(f"{'all':>10} {len(changes)}: gate {summary['gate_mean_fraction_all']:.3f}  "
          f"peer {summary['peer_mean_fraction_all']:.3f} (full verdicts count 1.0)")
    print(f"{'mutants':>10} tried {len(mutants)}, killed {len(k)}: gate caught "
          f"{summary['gate_caught']}, peer caught {summary['peer_caught']}")
    for m in summary["gate_misses"]:
        print(f"  GATE MISS {m['mutant']}: {m['missed']}")
    for m in summary["peer_misses"]:
        print(f"  peer miss {m['mutant']}: {m['missed']}")
    print(f"JSON: {out_path}")
    return 1 if summary["gate_misses"] else 0


if __name__ == "__main__":
    sys.exit(main())
