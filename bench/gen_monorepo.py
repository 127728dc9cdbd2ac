"""Deterministic synthetic monorepos for the benchmark: Python or Go, N modules, as git repos.

Python: packages of 20-50 modules under src/, each module importing 5-15 modules of earlier
packages or its own (a layered DAG, as real code is), test files importing 1-5 modules (one
per 10 modules). Go: the same shape with packages of 20-50 files, each file importing 5-15
earlier packages, one or two _test.go files per package importing 1-5 packages.
"""
import argparse
import os
import random
import subprocess

BODY_PY = '''

def f{i}(x):
    """Step {i}."""
    total = 0
    for k in range(x):
        if k % 3 == 0:
            total += k * {i}
        else:
            total -= 1
    return total
'''

BODY_GO = '''
// F{i} is step {i}.
func F{i}(x int) int {{
	total := 0
	for k := 0; k < x; k++ {{
		if k%3 == 0 {{
			total += k * {i}
		}} else {{
			total--
		}}
	}}
	return total
}}
'''


def layout(n, rng):
    """Package sizes summing to n."""
    sizes = []
    while sum(sizes) < n:
        sizes.append(min(rng.randint(20, 50), n - sum(sizes)))
    return sizes


def python(root, n, rng):
    sizes = layout(n, rng)
    modules = []  # (package index, dotted name)
    for p, size in enumerate(sizes):
        pkg = f"src/pkg{p:05d}"
        os.makedirs(os.path.join(root, pkg), exist_ok=True)
        open(os.path.join(root, pkg, "__init__.py"), "w").close()
        start = len(modules)
        for m in range(size):
            modules.append((p, f"pkg{p:05d}.mod{m:03d}"))
        for m in range(size):
            me = start + m
            pool = me  # only earlier modules: a DAG
            k = min(pool, rng.randint(5, 15))
            deps = rng.sample(range(pool), k) if pool else []
            lines = [f"import {modules[d][1]}" for d in sorted(deps)]
            body = "".join(BODY_PY.format(i=i) for i in range(rng.randint(2, 5)))
            with open(os.path.join(root, pkg, f"mod{m:03d}.py"), "w") as f:
                f.write("\n".join(lines) + "\n" + body)
    os.makedirs(os.path.join(root, "tests"), exist_ok=True)
    for t in range(max(1, n // 10)):
        deps = rng.sample(range(len(modules)), rng.randint(1, 5))
        with open(os.path.join(root, "tests", f"test_{t:06d}.py"), "w") as f:
            f.write("\n".join(f"import {modules[d][1]}" for d in sorted(deps)))
            f.write(f"\n\n\ndef test_{t}():\n    assert True\n")
    with open(os.path.join(root, "pyproject.toml"), "w") as f:
        f.write('[project]\nname = "mono"\nversion = "0"\n\n[tool.pytest.ini_options]\n'
                'testpaths = ["tests"]\npythonpath = ["src"]\n')
    return [os.path.join(f"src/pkg{p:05d}", f"mod{m:03d}.py")
            for p, size in enumerate(sizes) for m in range(size)]


def go(root, n, rng):
    sizes = layout(n, rng)
    files = []
    with open(os.path.join(root, "go.mod"), "w") as f:
        f.write("module example.com/mono\n\ngo 1.19\n")
    for p, size in enumerate(sizes):
        pkg = f"pkg/p{p:05d}"
        os.makedirs(os.path.join(root, pkg), exist_ok=True)
        for m in range(size):
            k = min(p, rng.randint(5, 15))
            deps = sorted(rng.sample(range(p), k)) if p else []
            imports = "".join(f'\tp{d:05d} "example.com/mono/pkg/p{d:05d}"\n' for d in deps)
            uses = "".join(f"\t_ = p{d:05d}.F0\n" for d in deps)
            body = "".join(BODY_GO.format(i=m * 10 + i) for i in range(rng.randint(2, 5)))
            src = f"package p{p:05d}\n\n" + (f"import (\n{imports})\n" if deps else "")
            src += body + (f"\nfunc use{m}() {{\n{uses}}}\n" if deps else "")
            path = os.path.join(pkg, f"f{m:03d}.go")
            with open(os.path.join(root, path), "w") as f:
                f.write(src)
            files.append(path)
        for t in range(rng.randint(1, 2)):
            k = min(p, rng.randint(1, 5))
            deps = sorted(rng.sample(range(p), k)) if p else []
            imports = "".join(f'\tp{d:05d} "example.com/mono/pkg/p{d:05d}"\n' for d in deps)
            uses = "".join(f"\t_ = p{d:05d}.F0\n" for d in deps)
            with open(os.path.join(root, pkg, f"t{t}_test.go"), "w") as f:
                f.write(f'package p{p:05d}\n\nimport (\n\t"testing"\n{imports})\n\n'
                        f"func TestT{t}(t *testing.T) {{\n{uses}}}\n")
    return files


def git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x",
                        "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x",
                        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
                        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["python", "go"])
    ap.add_argument("n", type=int)
    ap.add_argument("root")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.root)
    files = (python if a.kind == "python" else go)(a.root, a.n, rng)
    git(a.root, "init", "-q", "-b", "master")
    git(a.root, "add", "-A")
    git(a.root, "commit", "-q", "-m", "generated")
    with open(os.path.join(a.root, ".git", "bench-files"), "w") as f:
        f.write("\n".join(files) + "\n")


if __name__ == "__main__":
    main()
