//! Python's identity for fingerprints: its version and every installed distribution. Asking
//! costs a process (a tenth of a second with its metadata), so an identity is kept under
//! `.git/gate/cache/` with what it was read from — the interpreter file, its virtualenv
//! configuration, every `sys.path` folder and `.pth` file, the variables that move them — and
//! trusted only while every one of those is as it was. A pyenv shim is followed to the
//! interpreter it picks (`shims`); one reached through any other script (an asdf shim, a
//! wrapper) is asked every time.

use crate::lang::toolchain::{Stat, ask, hash, is_script, resolve, stat};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What Python prints: its identity lines, then what they were read from. Among the identity
/// lines, the content of each `.pth` and `sitecustomize`/`usercustomize` file, and every place
/// code is imported from that is neither the repository (the folder it runs in), the standard
/// library nor an installed distribution's own files: a `sys.path` entry from `PYTHONPATH` or a
/// `.pth` file outside the repository (`outside`), an editable install whose source is outside
/// it (`editable`), a module in site-packages that no distribution installed (`loose`). Their
/// code is not hashed, so any of them makes the identity unknown.
const ASK: &str = "import sys, os, json, site, hashlib, sysconfig, importlib.metadata as m
print(sys.version)
print(sys.implementation.cache_tag)
print('prefix', sys.prefix, sys.exec_prefix, sys.base_prefix)
dists = list(m.distributions())
for d in sorted((d.metadata['Name'] or '').lower() + ' ' + d.version for d in dists):
    print(d)
dirs = [os.path.abspath(p or '.') for p in sys.path]
user = site.getusersitepackages() if site.ENABLE_USER_SITE is not False else None
if user:
    dirs.append(user)
files = sorted(os.path.join(d, f) for d in dirs if os.path.isdir(d) for f in os.listdir(d)
               if f.endswith('.pth') or f in ('sitecustomize.py', 'usercustomize.py'))
for f in files:
    try:
        print('file', f, hashlib.sha256(open(f, 'rb').read()).hexdigest())
    except OSError:
        print('file', f, 'unreadable')
here = os.path.abspath('.')
def under(p, d):
    return p == d or p.startswith(d.rstrip(os.sep) + os.sep)
paths = sysconfig.get_paths()
known = [os.path.abspath(paths[k]) for k in ('stdlib', 'platstdlib', 'purelib', 'platlib') if k in paths]
sites = []
try:
    sites = [os.path.abspath(p) for p in site.getsitepackages()]
except Exception:
    pass
if user:
    sites.append(os.path.abspath(user))
known += sites
for p in dirs:
    if not under(p, here):
        print('path', p)
    if os.path.exists(p) and not under(p, here) and not any(under(p, k) for k in known):
        print('outside', p)
owned = set()
for d in dists:
    for f in d.files or []:
        owned.add(str(f).replace(os.sep, '/').split('/')[0])
    for t in (d.read_text('top_level.txt') or '').split():
        owned.add(t)
        owned.add(t + '.py')
    try:
        u = json.loads(d.read_text('direct_url.json') or '{}')
    except ValueError:
        u = {}
    src = u.get('url', '')
    if u.get('dir_info', {}).get('editable') and src.startswith('file://'):
        src = os.path.abspath(src[len('file://'):])
        if not under(src, here):
            print('editable', d.metadata['Name'], src)
skip = ('.dist-info', '.egg-info', '.pth', '.egg-link', '__pycache__')
for s in sites:
    if not os.path.isdir(s):
        continue
    for e in sorted(os.listdir(s)):
        if e.endswith(skip) or e in owned or e in ('sitecustomize.py', 'usercustomize.py', 'README.txt'):
            continue
        if e.endswith(('.py', '.so', '.pyd')) or os.path.isdir(os.path.join(s, e)):
            print('loose', os.path.join(s, e))
print('\\0')
print(json.dumps(dirs + files))";

/// Variables that move what an interpreter finds.
const MOVES: &[&str] = &[
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONNOUSERSITE",
    "PYTHONUSERBASE",
    "PYTHONSAFEPATH",
    "PYTHONPLATLIBDIR",
    "PYTHONSTARTUP",
    "HOME",
];

/// One kept identity and everything it was read from.
#[derive(Serialize, Deserialize, PartialEq, Eq, Debug, Clone)]
struct Kept {
    argv0: String,
    exe: PathBuf,
    cwd: PathBuf,
    env: Vec<Option<String>>,
    watched: Vec<(PathBuf, Option<Stat>)>,
    identity: String,
    /// Where the interpreter imports code from that gate does not hash: the identity stands
    /// for none of it.
    #[serde(default)]
    unhashed: Vec<String>,
    /// What was asked (`ASK`'s version): an identity asked by another question is asked again.
    #[serde(default)]
    asked: u32,
}

/// `ASK`'s version: 2 added where the interpreter is (its prefixes and `sys.path` outside the
/// repository) — a test's digest binds files by path, and another interpreter's same paths are
/// not these.
const ASKED: u32 = 2;

/// `python`'s identity, kept in `state` while what it was read from holds. `runner_env`: the
/// runner's `[env]`, which the interpreter runs under (a `PYTHONPATH` there moves what it
/// imports).
pub(crate) fn identity(
    python: &str,
    root: &Path,
    state: &Path,
    runner_env: &std::collections::BTreeMap<String, String>,
) -> Result<String, String> {
    // A version manager's shim stands for the interpreter it picks, followed as the manager
    // follows it; through any other script, what runs is the script's choice: asked, never
    // kept.
    let exe = resolve(python, root).map(|e| match is_script(&e) {
        true => super::shims::pyenv(&e, root, runner_env).unwrap_or(e),
        false => e,
    });
    let direct = exe.as_deref().is_some_and(|e| !is_script(e));
    // Not `python.json`: that is the facts cache's (`cache::facts`), and each overwrote the
    // other's on every run.
    let file = state.join("cache").join("interpreters.json");
    let env: Vec<Option<String>> = MOVES
        .iter()
        .map(|v| {
            runner_env
                .get(*v)
                .cloned()
                .or_else(|| std::env::var(v).ok())
        })
        .collect();
    let kept: Vec<Kept> = std::fs::read(&file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    if direct {
        let exe = exe.as_deref().expect("direct");
        let holds = |k: &&Kept| {
            k.asked == ASKED
                && k.argv0 == python
                && k.exe == exe
                && k.cwd == root
                && k.env == env
                && k.watched.iter().all(|(p, s)| stat(p) == *s)
        };
        if let Some(k) = kept.iter().find(holds) {
            return known(k.identity.clone(), &k.unhashed);
        }
    }
    let asked = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128);
    let (identity, unhashed, listed) = ask_python(python, root, runner_env)?;
    let Some(exe) = exe.filter(|_| direct) else {
        return known(identity, &unhashed);
    };
    let watched = watched(&exe, listed, root);
    let record = Kept {
        argv0: python.to_string(),
        exe,
        cwd: root.to_path_buf(),
        env,
        watched,
        identity: identity.clone(),
        unhashed: unhashed.clone(),
        asked: ASKED,
    };
    keep_python(&file, kept, record, asked);
    known(identity, &unhashed)
}

/// What `python` says of itself: its identity, the places it imports unhashed code from, and
/// the paths its identity was read from.
fn ask_python(
    python: &str,
    root: &Path,
    runner_env: &std::collections::BTreeMap<String, String>,
) -> Result<(String, Vec<String>, Vec<PathBuf>), String> {
    let out = ask(&[python, "-c", ASK], root, runner_env)?;
    let text = String::from_utf8_lossy(&out);
    let (lines, from) = text
        .split_once("\0\n")
        .ok_or_else(|| format!("`{python}` did not say where its packages are"))?;
    let identity = hash(lines.as_bytes());
    let unhashed: Vec<String> = lines
        .lines()
        .filter(|l| {
            ["outside ", "editable ", "loose "]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(str::to_string)
        .collect();
    let listed: Vec<PathBuf> = serde_json::from_str(from.trim()).unwrap_or_default();
    Ok((identity, unhashed, listed))
}

/// The paths a Python identity was read from, each with its state now: the interpreter `exe`,
/// its virtualenv's configuration, and the folders and files it `listed` outside the repository.
fn watched(exe: &Path, listed: Vec<PathBuf>, root: &Path) -> Vec<(PathBuf, Option<Stat>)> {
    let mut watched: Vec<PathBuf> = vec![exe.to_path_buf()];
    if let Some(dir) = exe.parent() {
        watched.push(dir.join("pyvenv.cfg"));
        watched.extend(dir.parent().map(|d| d.join("pyvenv.cfg")));
    }
    // The repository's own folders on `sys.path` (the root, where the runner starts) are not
    // the interpreter's: what they hold is the tree the closures hash, and every file a run
    // creates there (`.pytest_cache`) would otherwise ask the interpreter again.
    watched.extend(listed.into_iter().filter(|p| !p.starts_with(root)));
    watched
        .into_iter()
        .map(|p| {
            let s = stat(&p);
            (p, s)
        })
        .collect()
}

/// Keeps `record` in `file` with the `kept` identities of other interpreters, when nothing it
/// was read from moved since just before it was `asked`.
fn keep_python(file: &Path, kept: Vec<Kept>, record: Kept, asked: i128) {
    // What was read must not have moved while Python read it (file times lag the clock by a
    // tick): anything changed in the second before asking, and it is asked again next time.
    let settled = asked - 1_000_000_000;
    let unmoved = record
        .watched
        .iter()
        .all(|(_, s)| s.as_ref().is_none_or(|s| s.mtime_ns < settled));
    if unmoved {
        let mut all: Vec<Kept> = kept
            .into_iter()
            .filter(|k| k.argv0 != record.argv0 || k.exe != record.exe)
            .collect();
        all.push(record);
        // A few interpreters per repository at most; the oldest go first.
        let skip = all.len().saturating_sub(8);
        let all: Vec<Kept> = all.into_iter().skip(skip).collect();
        if let Ok(bytes) = serde_json::to_vec(&all) {
            let _ = crate::cache::blocks::replace(file, |w| std::io::Write::write_all(w, &bytes));
        }
    }
}

/// The identity, unless the interpreter imports code gate does not hash.
fn known(identity: String, unhashed: &[String]) -> Result<String, String> {
    let Some(first) = unhashed.first() else {
        return Ok(identity);
    };
    let (kind, what) = first.split_once(' ').unwrap_or((first, ""));
    let why = match kind {
        "outside" => "a folder on the import path outside the repository (PYTHONPATH, a .pth file)",
        "editable" => "an editable install whose source is outside the repository",
        _ => "a module in site-packages that no distribution installed",
    };
    let more = match unhashed.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    Err(format!(
        "the interpreter imports code gate does not hash: {why}: {what}{more}"
    ))
}

/// The interpreter a pytest/unittest/Django argv runs: `python3 -m pytest` → `python3`.
pub(crate) fn python_of(argv: &[String]) -> Option<String> {
    let first = argv.first()?;
    let name = Path::new(first).file_name()?.to_str()?;
    (name.starts_with("python") || name.starts_with("pypy")).then(|| first.clone())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_interpreter_of_a_runner() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            super::python_of(&argv(&["python3", "-m", "pytest"])).as_deref(),
            Some("python3")
        );
        assert_eq!(
            super::python_of(&argv(&[".venv/bin/python", "-m", "pytest"])).as_deref(),
            Some(".venv/bin/python")
        );
        assert_eq!(super::python_of(&argv(&["tox", "-e", "py"])), None);
    }
}
