"""gate's pytest probe, loaded with `-p gate_probe` from a folder gate puts first on PYTHONPATH.

It changes nothing about what runs (it only hides the line pytest prints for the JUnit report
gate asks for, so the output stays as the project knows it). At the end of the session it
writes, to $GATE_PROBE_OUT, what the exit code alone cannot say: for each file pytest collected
(paths relative to the directory gate ran pytest in), whether collecting it failed, how many
tests it held, how many of those the project's own options deselected (`-m`, `-k`,
`--deselect` in addopts), how many test reports failed and how many tests passed. gate reads it
to tell a file that holds no test from one pytest never collected, a failed test from a run cut
short (a closed pipe also exits 1), and a test file's whole trace (every one of its tests ran
and passed) from a part of one.
"""
import json
import os
import shutil
import site
import sys
import sysconfig
import tempfile
import time

import pytest

_files = {}
_state = {"rootpath": None}
# With GATE_PROBE_IDS: each collected test as [its file from the start folder, its name].
_ids = []

# What each test file's collection and run opened inside the directory pytest runs in: an
# audit hook sees every `open` (an import's source or bytecode read too), whatever opened it.
# Only the first import of a module is seen (later ones come from sys.modules): a trace adds
# what it saw, it never says what a file does not need.
_opened = {}
# What each repository module read while it was being imported (a table its module-level code
# loads): seen once, in whichever test file imported it first, yet needed by every test that
# imports it — gate credits it to the module.
_read_by = {}
# The folder pytest started in (the repository root, which every path gate reads is relative
# to), taken when the probe loads: a test that changes the working folder changes neither
# where the repository is nor which test file is running.
_START = os.getcwd()
_trace = {"current": None, "root": os.path.realpath(_START) + os.sep}
# The root as a path may spell it before its own symlinks are resolved, and as resolved.
_ROOTS = tuple(dict.fromkeys([_trace["root"], os.path.abspath(_START) + os.sep]))
# Symlinks followed within one open, at most (the OS's own limit).
_MAX_LINKS = 40

# What the run read that the repository's commits do not hold: every module file seen loaded
# (the standard library's, installed distributions', a git-ignored module's) and every file
# opened for reading outside the repository or in the interpreter's own folders (an installed
# distribution's data, a virtualenv inside the repository) — resolved, absolute (relative to
# the root when under it), in the order first seen. A test file's share is the list as it stood when its last test ended: a
# superset of what it needed, whichever test file loaded a module first. gate hashes each by
# content (a file edited in place with its distribution's version unchanged changes the
# digest) and leaves those its tree holds to their blobs. Not listed: the kernel's and
# devices' files, and a file in the temporary folder made since the session began (a test's
# own scratch); one that was there before is an input like any other.
_outside = []
_outside_seen = set()
_outside_at = {}
# The kernel's and devices' files, and the probe's own folder (a new one each run).
_PSEUDO = ("/proc/", "/sys/", "/dev/", os.path.realpath(os.path.dirname(__file__)) + os.sep)
_TEMP = os.path.realpath(tempfile.gettempdir()) + os.sep
_STARTED_NS = time.time_ns()


def _folders_of_interpreter():
    """The interpreter's own folders (its prefixes, standard library, site-packages): what is
    read there is installed, never the repository's own, even in a virtualenv inside it."""
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    dirs.update(sysconfig.get_paths().values())
    try:
        dirs.update(site.getsitepackages())
        dirs.add(site.getusersitepackages())
    except Exception:
        pass
    found = []
    for d in dirs:
        if d:
            d = os.path.realpath(d) + os.sep
            # A folder holding the repository (an interpreter installed around it) would make
            # every repository file an installed one.
            if not any(root.startswith(d) for root in _ROOTS):
                found.append(d)
    return tuple(found)


_INSTALLED = _folders_of_interpreter()


def _installed(real):
    return real.startswith(_INSTALLED)


def _reads(args):
    """Whether an `open` audit event reads (its mode, for `open`, or its flags, for `os.open`,
    say so), and whether it only reads (it makes nothing). A file only written is the run's
    output, not its input."""
    mode = args[1] if len(args) > 1 else None
    if isinstance(mode, str):
        reads = "r" in mode or "+" in mode
        return reads, reads and not any(c in mode for c in "wax+")
    flags = args[2] if len(args) > 2 else None
    if isinstance(flags, int) and flags >= 0:
        access = flags & os.O_ACCMODE
        return access != os.O_WRONLY, access == os.O_RDONLY and not flags & os.O_CREAT
    return True, False


def _listed(entry):
    """Puts `entry` (absolute, or repository-relative) on the first-seen list, once. A path
    that is not text (bytes no encoding decodes) is listed as a name no file has: gate cannot
    hash it, and no unit that read it is entered."""
    if entry in _outside_seen or entry.startswith(tuple(_OWN)):
        return
    _outside_seen.add(entry)
    try:
        entry.encode("utf-8")
    except UnicodeEncodeError:
        entry = "\0"
    _outside.append(entry)


def _outside_read(real, only_read=False):
    """Lists `real` (resolved, absolute) among the run's outside inputs, once. In the temporary
    folder a file made since the session began is a test's own scratch; one that is not there
    is listed only when opened to be read alone (an optional input: it appearing changes what
    the test reads), never when opened to be made."""
    if real in _outside_seen or real.startswith(_PSEUDO):
        return
    # A module's cached bytecode stands for its source (the interpreter writes it from the
    # source on a first import, and checks it against the source on every other).
    folder, name = os.path.split(real)
    if name.endswith(".pyc") and os.path.basename(folder) == "__pycache__":
        real = os.path.join(os.path.dirname(folder), name.split(".")[0] + ".py")
        if real in _outside_seen:
            return
    if real.startswith(_TEMP) and _under_root(real) is None:
        try:
            if os.stat(real).st_ctime_ns >= _STARTED_NS:
                return
        except OSError:
            if not only_read:
                return
    # A file under the repository is named from its root (the run may be in a checkout).
    rel = _under_root(real)
    _listed(real if rel is None else rel)
    _outside_seen.add(real)


def _absolute(name):
    """`name` as the open resolved it: a relative path against the working folder at the time
    of the open, wherever the run started. None when that folder is gone (a relative open
    then finds nothing)."""
    if os.path.isabs(name):
        return name
    try:
        return os.path.join(os.getcwd(), name)
    except OSError:
        return None


def _under_root(path):
    """The absolute `path` relative to the repository root, `/`-separated; None outside it."""
    for root in _ROOTS:
        if path.startswith(root):
            return path[len(root):].replace(os.sep, "/")
    return None


def _repo_file(rel):
    """What a read of `rel` stands for: an import read from the bytecode cache stands for its
    source; git's own files are none."""
    if rel is None or rel.startswith(".git/"):
        return None
    folder, _, name = rel.rpartition("/")
    if folder == "__pycache__" or folder.endswith("/__pycache__"):
        return folder[: -len("__pycache__")] + name.split(".")[0] + ".py"
    return rel


def _links_on(path):
    """The repository's symlinks that opening the absolute, normalised `path` passes through (a
    linked file or folder, links to links): repointing any of them changes what the open reads."""
    found = set()
    for _ in range(_MAX_LINKS):
        rel = _under_root(path)
        if rel is None:
            return found
        at = _ROOTS[0].rstrip(os.sep)
        parts = rel.split("/")
        for i, part in enumerate(parts):
            at = os.path.join(at, part)
            if os.path.islink(at):
                found.add("/".join(parts[: i + 1]))
                # Resolving goes on from the link's target, with the rest of the path.
                target = os.path.join(os.path.dirname(at), os.readlink(at))
                path = os.path.normpath(os.path.join(target, *parts[i + 1 :]))
                break
        else:
            return found
    return found


def _repo_paths(name, real):
    """The repository files an open of the absolute path `name` (resolved: `real`) reads: the
    file it resolves to and, when symlinks led there, each link on the way — a change to any of
    them selects. A file of the interpreter's own folders (a virtualenv inside the repository)
    is none of them: it is the run's outside input."""
    found = {None if _installed(real) else _repo_file(_under_root(real))}
    lexical = os.path.normpath(name)
    if lexical != real:
        found.update(_links_on(lexical))
    found.discard(None)
    return found


def _importing(frame):
    """The repository module being imported where `frame` opens a file: the innermost
    module-level frame's file, if a file of the repository. None when the import system itself
    opens (a module's own source or bytecode) or no import is under way (the innermost
    module-level frame is the script that runs, such as pytest's own `__main__`)."""
    if frame.f_code.co_filename.startswith("<frozen"):
        return None
    while frame is not None:
        code = frame.f_code
        if code.co_name == "<module>":
            name = _absolute(code.co_filename)
            if name is None or frame.f_globals.get("__name__") == "__main__":
                return None
            return _repo_file(_under_root(os.path.realpath(name)))
        frame = frame.f_back
    return None


# Starting a process whose reads the probe cannot see: a Python interpreter (or a script run by
# one), a shell (it may start one), `os.system`, a fork. Its imports are no part of the list,
# so the test file it ran in is not entered — nor is every test file after it while it still
# runs, nor, when it started outside any test file (a plugin, a conftest), any test file. A
# program that is not Python (git, node, a compiler) is a tool on PATH: gate's policy for them
# is the clock's.
_SPAWNS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
           "os.fork", "os.forkpty"}
_SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "fish", "env", "xargs", "nohup", "timeout",
           "uv", "pipx", "tox", "nox", "hatch", "poetry", "pdm"}
_spawned = {"session": None, "running": None, "probing": False}
_spawned_by = {}


def _program(event, args):
    """The program a spawn event starts (for `subprocess`, as it runs it: `/bin/sh` for a
    command line); None for a fork or `os.system`'s command line."""
    try:
        if event in ("subprocess.Popen", "os.exec", "os.posix_spawn"):
            return os.fsdecode(args[0])
        if event == "os.spawn":
            return os.fsdecode(args[1])
    except Exception:
        pass
    return None


def _is_python(program):
    """Whether `program` may run Python: an interpreter, a shell or a wrapper that may start
    one, a script whose first line names Python or a shell (an installed console script)."""
    if program is None:
        return True
    base = os.path.basename(program)
    if base.startswith(("python", "pypy")) or base in _SHELLS:
        return True
    found = program if os.sep in program else shutil.which(program)
    if found is None:
        return False
    try:
        if os.path.realpath(found) == os.path.realpath(sys.executable):
            return True
        # The probe's own read, not the test's.
        _spawned["probing"] = True
        with open(found, "rb") as f:
            first = f.readline(256)
        return first.startswith(b"#!") and (b"python" in first or b"sh" in first)
    except OSError:
        return False
    finally:
        _spawned["probing"] = False


def _spawn(event, args):
    try:
        program = _program(event, args)
        if not _is_python(program):
            return
        what = "forked" if event.startswith("os.fork") else "started " + (program or "a shell")
    except Exception:
        what = "started a process"
    if _trace["current"] is None:
        _spawned["session"] = _spawned["session"] or what
    else:
        _spawned["running"] = _spawned["running"] or what


def _children():
    """Whether this process has a child still running (not a zombie)."""
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/children") as f:
                for pid in f.read().split():
                    with open(f"/proc/{pid}/stat") as s:
                        if s.read().rsplit(")", 1)[1].split()[0] != "Z":
                            return True
    except OSError:
        return _spawned["running"] is not None
    return False


def _audit(event, args):
    # Called for every audited event of the process (frames, imports, exec…): the cheapest
    # test first.
    if event != "open":
        if event in _SPAWNS:
            _spawn(event, args)
        return
    if not args or _spawned["probing"]:
        return
    path = args[0]
    if not isinstance(path, (str, bytes, os.PathLike)):
        return
    try:
        name = _absolute(os.fsdecode(path))
        if name is None:
            return
        real = os.path.realpath(name)
        paths = _repo_paths(name, real)
        reads, only = _reads(args)
        if reads:
            if _installed(real) or _under_root(real) is None:
                _outside_read(real, only)
                # A link outside the repository repointed changes what the path reads.
                lexical = os.path.normpath(name)
                if lexical != real and _under_root(lexical) is None:
                    _outside_read(lexical, only)
            # Whichever test file reads it (a session hook, a shared fixture): every later
            # test file's share holds it, and gate keeps the files no commit holds.
            for p in paths:
                _listed(p)
        # Frame 1 is the code that opened (the hook runs in frame 0).
        module = _importing(sys._getframe(1)) if paths else None
    except (TypeError, ValueError, OSError):
        return
    current = _trace["current"]
    if paths and current is not None:
        _opened.setdefault(current, set()).update(paths)
    # A test file's own module-level reads are its own.
    if module is not None and module != current:
        _read_by.setdefault(module, set()).update(paths - {module})


# The environment variables each test file's own code read (its tests, its conftests, the
# repository's modules it imports), by name; `*` for the whole mapping (iterated, copied).
# gate enters a pass in its ledger only when its fingerprint holds every one of them: a read
# the analyser could not see is evidence, never a reason to trust less than it says.
_env = {}
_STDLIB = tuple(
    os.path.realpath(p) + os.sep
    for p in {sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")}
    if p
)


# Code file → what it is: "std" (the standard library, frozen modules), "repo" (the
# repository's own code) or "other". Asked once per file: environment reads can be hot.
_CODE_KIND = {}


def _code_kind(name):
    kind = _CODE_KIND.get(name)
    if kind is not None:
        return kind
    if name.startswith("<frozen"):
        kind = "std"
    elif name.startswith("<"):
        kind = "other"
    else:
        absolute = _absolute(name)
        real = os.path.realpath(absolute) if absolute is not None else ""
        rel = _under_root(real) if real else None
        if real.startswith(_STDLIB):
            kind = "std"
        elif rel is not None and "site-packages/" not in rel and "/.venv/" not in "/" + rel:
            kind = "repo"
        else:
            kind = "other"
    _CODE_KIND[name] = kind
    return kind


def _env_read(key):
    current = _trace["current"]
    if current is None:
        return
    # The first caller outside the standard library (`os.getenv`, `Mapping.get` call in).
    frame = sys._getframe(2)
    while frame is not None and _code_kind(frame.f_code.co_filename) == "std":
        frame = frame.f_back
    if frame is not None and _code_kind(frame.f_code.co_filename) == "repo":
        _env.setdefault(current, set()).add(os.fsdecode(key) if key != "*" else key)


def _observe_environment():
    environ = type(os.environ)
    getitem, iterate = environ.__getitem__, environ.__iter__

    def __getitem__(self, key):
        try:
            _env_read(key)
        except Exception:
            pass
        return getitem(self, key)

    def __iter__(self):
        try:
            _env_read("*")
        except Exception:
            pass
        return iterate(self)

    environ.__getitem__ = __getitem__
    environ.__iter__ = __iter__


if os.environ.get("GATE_PROBE_TRACE"):
    sys.addaudithook(_audit)
    _observe_environment()


def _rel(path):
    """A path pytest names, relative to where the run started (never to where a test moved)."""
    return os.path.relpath(os.path.join(_START, os.fspath(path)), _START).replace(os.sep, "/")


def _entry(path):
    return _files.setdefault(
        _rel(path),
        {
            "collected": False,
            "error": False,
            "items": 0,
            "deselected": 0,
            "selected": 0,
            "failed": 0,
            "passed": 0,
        },
    )


def _forget_pytest_cache(config):
    """pytest's own cache (`.pytest_cache`: the last failures, the node ids) is its state
    between sessions, rewritten at each end: no test's input. What was read of it before now
    is taken off the list, and nothing under it is listed again."""
    global _PSEUDO
    try:
        cache = getattr(config, "cache", None)
        folder = getattr(cache, "_cachedir", None) or config.rootpath / ".pytest_cache"
        prefix = os.path.realpath(os.fspath(folder)) + os.sep
    except Exception:
        return
    rel = _under_root(prefix)
    gone = {e for e in _outside if e.startswith(prefix) or (rel and e.startswith(rel))}
    _outside[:] = [e for e in _outside if e not in gone]
    _PSEUDO = _PSEUDO + (prefix,)
    if rel:
        _OWN.append(rel)


# Repository-relative folders whose files are pytest's state, not a test's input.
_OWN = []


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    _state["rootpath"] = config.rootpath
    _forget_pytest_cache(config)
    # gate asks for `--junitxml` to read each test's result; the project's own output stays as
    # it knows it, without pytest's "generated xml file" line. (A plugin's hooks are read when
    # it is registered: registered again without that one, it is gone.)
    try:
        from _pytest.junitxml import xml_key

        xml = config.stash.get(xml_key, None)
        if xml is not None:
            config.pluginmanager.unregister(xml)
            xml.pytest_terminal_summary = None
            config.pluginmanager.register(xml)
    except Exception:
        pass


def _path_of(nodeid):
    return os.path.join(os.fspath(_state["rootpath"]), nodeid.split("::")[0])


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    # A test file's collection imports it and what it imports.
    path = getattr(collector, "path", None)
    if isinstance(collector, pytest.File) and path is not None:
        _trace["current"] = _rel(path)
    try:
        yield
    finally:
        _trace["current"] = None


# Per test file, every repository module seen loaded in the process by the time its last test
# ended: what its imports named at run time resolved to is among them, whichever test file
# loaded it first (sys.modules keeps it) — a superset, so hashing them all can only make gate
# trust less. Seen, not present: one a test dropped from sys.modules since still counts. A
# file whose modules could not be read gets no entry, and gate trusts nothing of it.
_loaded = {}
_seen = set()
# Module name → its repository file (None: not the repository's code) and its resolved file
# (None: none, a built-in or frozen module), asked once per module.
_MODULE_FILE = {}


def _repo_modules():
    """The repository modules seen loaded so far; every loaded module's file is listed among
    the outside inputs too (gate leaves the tree's own to their blobs). Raises when a module
    object cannot say its file (a lazy proxy): the repository's loads are then not all seen.
    Such an object is no file read: it stands for the modules it loads, which are listed."""
    unreadable = None
    # A copy made in C, with no Python code in between: a weakref callback run by the
    # collector (a template loader dropping its modules) cannot change it mid-copy.
    for name, module in sys.modules.copy().items():
        # By name and object: a module of the same name loaded again from another file.
        key = (name, id(module))
        known = _MODULE_FILE.get(key)
        if known is None:
            rel, real = None, None
            try:
                file = getattr(module, "__file__", None)
            except Exception as e:
                unreadable = e
                continue
            if isinstance(file, str) and not file.startswith("<"):
                absolute = _absolute(file)
                real = os.path.realpath(absolute) if absolute is not None else None
                if real is not None and _code_kind(file) == "repo":
                    rel = _repo_file(_under_root(real))
            known = _MODULE_FILE[key] = (rel, real)
        rel, real = known
        if rel is not None:
            _seen.add(rel)
        if real is not None and real not in _outside_seen:
            _outside_read(real)
    if unreadable is not None:
        raise unreadable
    return set(_seen)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _trace["current"] = _rel(item.path)
    try:
        yield
    finally:
        _trace["current"] = None
        last = nextitem is None or nextitem.path != item.path
        if last and os.environ.get("GATE_PROBE_TRACE"):
            unit = _rel(item.path)
            try:
                _loaded[unit] = _repo_modules()
            except Exception:
                pass
            _outside_at[unit] = len(_outside)
            started = _spawned["session"] or _spawned["running"]
            if started:
                _spawned_by[unit] = started
                if _spawned["running"] and not _children():
                    _spawned["running"] = None


def pytest_collectreport(report):
    path = _path_of(report.nodeid)
    if report.nodeid and "::" not in report.nodeid and os.path.isfile(path):
        entry = _entry(path)
        entry["collected"] = True
        entry["error"] = entry["error"] or bool(report.failed)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        _entry(item.path)["items"] += 1


def pytest_deselected(items):
    for item in items:
        _entry(item.path)["deselected"] += 1


def _junit_names(nodeid):
    """The classname and name pytest's JUnit report gives the test `nodeid` (junitxml's
    `mangle_test_address`, which the report is written with)."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = names[0].replace("/", ".")
    if names[0].endswith(".py"):
        names[0] = names[0][: -len(".py")]
    names[-1] += bracket + params
    return names[:-1], names[-1]


# JUnit's (classname, name) → the test's file relative to where pytest ran and its classname
# as written from there with no prefix: only for tests whose report names them otherwise (a
# rootdir above or below where pytest ran, `--junit-prefix`), so gate files each result under
# the id its file defines from the repository root.
_moved = {}
_named = {}
_ambiguous = set()


def pytest_collection_finish(session):
    prefix = getattr(session.config.option, "junitprefix", None)
    for item in session.items:
        _entry(item.path)["selected"] += 1
        classes, name = _junit_names(item.nodeid)
        if prefix:
            classes.insert(0, prefix)
        tail = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else ""
        rel = _rel(item.path)
        own, _ = _junit_names(rel + ("::" + tail if tail else "::x"))
        key = ".".join(classes) + "\0" + name
        # Two tests the report names alike (`tests/test_a.py::TestX::test_m` and
        # `tests/test_a/TestX.py::test_m`): which is which cannot be read back from it.
        if _named.setdefault(key, item.nodeid) != item.nodeid:
            _ambiguous.add(key)
        if classes != own:
            _moved[key] = [rel, ".".join(own)]
    if os.environ.get("GATE_PROBE_IDS"):
        # Each test as an argument pytest takes from where the run started: its file relative
        # to that folder (whatever the rootdir its node id is relative to), then its name.
        for item in session.items:
            name = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else ""
            _ids.append([_rel(item.path), name])


# pytest's modes that run no test body as written, by their option's `dest`: a test "passes"
# under them without its assertions having run (`--trace` steps each body in pdb, which quits
# at the end of its input).
_UNRUN_MODES = (
    ("collectonly", "--collect-only"),
    # `--setup-plan` sets `setuponly` too: named first.
    ("setupplan", "--setup-plan"),
    ("setuponly", "--setup-only"),
    ("trace", "--trace"),
)

# Tests whose setup passed and whose body has not run (yet): one still here at the end was
# reported without running (`--setup-only`, `--setup-plan`, wherever the option came from),
# and its JUnit "pass" is no pass. And every test whose run started at all: a session that
# ends well with a collected test never started ran nothing of it (`--fixtures`).
_uncalled = set()
_started = set()


def pytest_runtest_logreport(report):
    if report.when == "setup":
        _started.add(report.nodeid)
    if report.when == "setup" and report.passed:
        _uncalled.add(report.nodeid)
    elif report.when != "setup":
        # Its call, or any other report of it (xdist's `???` for a worker that crashed).
        _uncalled.discard(report.nodeid)
    if report.failed:
        _entry(_path_of(report.nodeid))["failed"] += 1
    elif report.when == "call" and report.passed:
        _entry(_path_of(report.nodeid))["passed"] += 1


def _text(value):
    """`value` with every string no UTF-8 can spell (a path of bytes no encoding decodes) left
    out: gate reads the record as JSON text. The outside list spells such a path as a name no
    file has (`_listed`)."""
    if isinstance(value, dict):
        return {k: _text(v) for k, v in value.items() if _spelled(k)}
    if isinstance(value, (list, tuple, set)):
        return [_text(v) for v in value if not isinstance(v, str) or _spelled(v)]
    return value


def _spelled(text):
    try:
        text.encode("utf-8")
        return True
    except (UnicodeEncodeError, AttributeError):
        return not isinstance(text, str)


def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get("GATE_PROBE_OUT")
    if out:
        with open(out, "w", encoding="utf-8") as f:
            opened = {k: sorted(v) for k, v in _opened.items()}
            read_by = {k: sorted(v) for k, v in _read_by.items() if v}
            env = {k: sorted(v) for k, v in _env.items()}
            record = {"exitstatus": int(exitstatus), "files": _files, "opened": opened}
            # What ran no test body at all: pytest's own modes, however they were asked for.
            option = session.config.option
            items = getattr(session, "items", None) or []
            unstarted = (
                sorted(i.nodeid for i in items if i.nodeid not in _started)
                if int(exitstatus) == 0
                else []
            )
            modes = [
                flag
                for dest, flag in _UNRUN_MODES
                if getattr(option, dest, False)
            ]
            record["unrun"] = {
                "modes": modes,
                "uncalled": len(_uncalled),
                "unstarted": len(unstarted),
                "first": (sorted(_uncalled) or unstarted)[:3],
            }
            loaded = {k: sorted(v) for k, v in _loaded.items()}
            outside = {"files": _outside, "at": _outside_at, "spawned": _spawned_by}
            json.dump(
                _text(
                    dict(
                        record,
                        read_by=read_by,
                        env=env,
                        loaded=loaded,
                        outside=outside,
                        ids=_ids,
                        moved=_moved,
                        ambiguous=sorted(_ambiguous),
                    )
                ),
                f,
            )
