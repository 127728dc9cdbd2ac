"""JavaScript and TypeScript: gate on a synthetic TypeScript monorepo against the floor for
finding imports (es-module-lexer over the same files, in one Node process) and against Vitest's
own `vitest related`, paired in one run.

    python3 bench/js.py --gate target/release/gate [--files 10000] [--runs 5] [--related-runs 1]

The monorepo: `--files` TypeScript modules in packages of 100 (npm workspaces `@bench/pN`, a
root `tsconfig.json` with `paths`, one Vitest configuration), each importing up to three
earlier modules of its package (a `.js`-suffixed specifier, a tsconfig alias, a bare relative
one) and every tenth another package by name; a test beside every fifth module. Measured:
gate's cold `gate plan` (its caches removed), a warm one-file select (`gate --affected
HEAD~1...HEAD --list --json`, the kept graph patched) with the processes it started, `git
diff` of the same range, es-module-lexer's scan of every module, and `vitest related --run`
of the changed file (Vitest from tests/fixtures/js, installed by .ci/run). Medians of --runs.
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE_MODULES = os.path.join(HERE, "..", "tests", "fixtures", "js", "node_modules")
ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x", "NO_COLOR": "1", "CI": "1"}
PER_PACKAGE = 100

LEXER = """
import { init, parse } from 'es-module-lexer';
import { readFileSync } from 'node:fs';
const files = JSON.parse(readFileSync(process.argv[2], 'utf8'));
await init;
let imports = 0;
for (const f of files) {
  const [found] = parse(readFileSync(f, 'utf8'), f);
  imports += found.length;
}
console.log(imports);
"""


def sh(cmd, cwd, check=True, env=ENV):
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if check and out.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed in {cwd} ({out.returncode}): {out.stderr[-2000:]}")
    return wall, out


def generate(root, files, seed):
    rng = random.Random(seed)
    packages = max(1, files // PER_PACKAGE)
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "package.json"), "w") as h:
        json.dump({"name": "bench", "private": True, "type": "module",
                   "workspaces": ["packages/*"], "devDependencies": {"vitest": "^4.1.12"}}, h)
    with open(os.path.join(root, "tsconfig.json"), "w") as h:
        json.dump({"compilerOptions": {"baseUrl": ".", "module": "ESNext",
                                       "moduleResolution": "Bundler",
                                       "paths": {"@p0/*": ["packages/p0/src/*"]}}}, h)
    with open(os.path.join(root, "vitest.config.ts"), "w") as h:
        h.write("import { defineConfig } from 'vitest/config';\n"
                "export default defineConfig({ test: { include: ['packages/*/test/**/*.test.ts'] } });\n")
    with open(os.path.join(root, ".gitignore"), "w") as h:
        h.write("node_modules\n")
    modules = []
    for p in range(packages):
        pkg = os.path.join(root, "packages", f"p{p}")
        os.makedirs(os.path.join(pkg, "src"), exist_ok=True)
        os.makedirs(os.path.join(pkg, "test"), exist_ok=True)
        with open(os.path.join(pkg, "package.json"), "w") as h:
            json.dump({"name": f"@bench/p{p}", "type": "module", "main": "src/m0.ts"}, h)
        for i in range(PER_PACKAGE):
            lines = []
            for j in sorted(rng.sample(range(i), min(i, rng.randint(0, 3)))):
                form = rng.choice(["./m{j}.js", "./m{j}", "@p0/m{j}" if p == 0 else "./m{j}.js"])
                lines.append(f"import {{ v{j} }} from '{form.format(j=j)}';")
            if p > 0 and i % 10 == 0:
                lines.append(f"import * as other from '@bench/p{rng.randrange(p)}';")
            lines.append(f"export const v{i}: number = {i};")
            lines.append(f"export function f{i}(x: number): number {{ return x + {i}; }}")
            path = os.path.join(pkg, "src", f"m{i}.ts")
            with open(path, "w") as h:
                h.write("\n".join(lines) + "\n")
            modules.append(path)
            if i % 5 == 0:
                with open(os.path.join(pkg, "test", f"m{i}.test.ts"), "w") as h:
                    h.write(f"import {{ it, expect }} from 'vitest';\nimport {{ f{i} }} from '../src/m{i}';\n"
                            f"it('f{i}', () => {{ expect(f{i}(1)).toBe({i + 1}); }});\n")
            if len(modules) >= files:
                return modules
    return modules


def median(samples):
    return round(statistics.median(samples), 4)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gate", required=True)
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--related-runs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json")
    args = ap.parse_args()
    gate = os.path.abspath(args.gate)
    work = tempfile.mkdtemp(prefix="gate-bench-js-")
    root = os.path.join(work, "repo")
    modules = generate(root, args.files, args.seed)
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                ["git", "commit", "-qm", "base"]):
        sh(cmd, root)
    if os.path.isdir(FIXTURE_MODULES):
        os.symlink(os.path.abspath(FIXTURE_MODULES), os.path.join(root, "node_modules"))
    results = {"files": len(modules), "runs": args.runs}

    cold = []
    for _ in range(args.runs):
        shutil.rmtree(os.path.join(root, ".git", "gate"), ignore_errors=True)
        cold.append(sh([gate, "plan"], root)[0])
    results["gate_plan_cold_s"] = median(cold)

    changed = modules[len(modules) // 2]
    with open(changed, "a") as h:
        h.write("// bench change\n")
    sh(["git", "commit", "-qam", "change"], root)
    sh([gate, "--affected", "HEAD~1...HEAD", "--list"], root)  # keeps the patched graph
    warm, diff = [], []
    for _ in range(args.runs):
        wall, out = sh([gate, "--affected", "HEAD~1...HEAD", "--list", "--json"], root)
        warm.append(wall)
        report = json.loads(out.stdout)
        diff.append(sh(["git", "diff", "--name-only", "HEAD~1", "HEAD"], root)[0])
    results["gate_warm_select_s"] = median(warm)
    results["gate_selected"] = len(report["selected"])
    results["gate_test_files"] = report["test_files"]
    results["git_diff_s"] = median(diff)
    results["warm_over_git_diff"] = round(median(warm) / median(diff), 2)
    results["warm_processes"] = processes(gate, root)

    lexer_dir = os.path.join(work, "lexer")
    os.makedirs(lexer_dir)
    sh(["npm", "install", "--silent", "--no-audit", "--no-fund", "es-module-lexer@1"], lexer_dir)
    with open(os.path.join(lexer_dir, "scan.mjs"), "w") as h:
        h.write(LEXER)
    listing = os.path.join(lexer_dir, "files.json")
    with open(listing, "w") as h:
        json.dump(modules, h)
    scans = [sh(["node", "scan.mjs", listing], lexer_dir)[0] for _ in range(args.runs)]
    results["lexer_scan_s"] = median(scans)
    results["cold_over_lexer"] = round(median(cold) / median(scans), 2)

    if args.related_runs > 0 and os.path.isdir(FIXTURE_MODULES):
        related = []
        for _ in range(args.related_runs):
            wall, out = sh(["node_modules/.bin/vitest", "related", "--run", "--passWithNoTests",
                            os.path.relpath(changed, root)], root, check=False)
            related.append(wall)
        results["vitest_related_s"] = median(related)
        results["warm_over_vitest_related"] = round(median(warm) / median(related), 3)
    elif args.related_runs > 0:
        print(f"bench/js.py: {FIXTURE_MODULES} is not installed (npm ci in tests/fixtures/js): "
              "vitest related not measured", file=sys.stderr)
    print(json.dumps(results, indent=2))
    if args.json:
        with open(args.json, "w") as h:
            json.dump(results, h, indent=2)
    shutil.rmtree(work, ignore_errors=True)


def processes(gate, root):
    """Processes the warm select started, counted with strace (none expected); None without
    strace."""
    if shutil.which("strace") is None:
        return None
    log = os.path.join(root, "..", "strace.log")
    sh(["strace", "-f", "-qq", "-e", "trace=execve", "-o", log, gate, "--affected",
        "HEAD~1...HEAD", "--list", "--json"], root)
    with open(log) as h:
        return sum(1 for line in h if "execve(" in line) - 1


if __name__ == "__main__":
    main()
