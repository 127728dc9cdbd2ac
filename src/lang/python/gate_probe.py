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
import sys
import sysconfig

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


def _repo_paths(name):
    """The repository files an open of the absolute path `name` reads: the file it resolves to
    and, when symlinks led there, each link on the way — a change to any of them selects."""
    real = os.path.realpath(name)
    found = {_repo_file(_under_root(real))}
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


def _audit(event, args):
    # Called for every audited event of the process (frames, imports, exec…): the cheapest
    # test first.
    if event != "open" or not args:
        return
    path = args[0]
    if not isinstance(path, (str, bytes, os.PathLike)):
        return
    try:
        name = _absolute(os.fsdecode(path))
        if name is None:
            return
        paths = _repo_paths(name)
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


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    _state["rootpath"] = config.rootpath
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
# Module name → its repository file (None: not the repository's code), asked once per module.
_MODULE_FILE = {}


def _repo_modules():
    # A copy made in C, with no Python code in between: a weakref callback run by the
    # collector (a template loader dropping its modules) cannot change it mid-copy.
    for name, module in sys.modules.copy().items():
        rel = _MODULE_FILE.get(name, False)
        if rel is False:
            rel = None
            file = getattr(module, "__file__", None)
            if isinstance(file, str) and _code_kind(file) == "repo":
                rel = _repo_file(_under_root(os.path.realpath(file)))
            _MODULE_FILE[name] = rel
        if rel is not None:
            _seen.add(rel)
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
            try:
                _loaded[_rel(item.path)] = _repo_modules()
            except Exception:
                pass


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


def pytest_collection_finish(session):
    for item in session.items:
        _entry(item.path)["selected"] += 1
    if os.environ.get("GATE_PROBE_IDS"):
        # Each test as an argument pytest takes from where the run started: its file relative
        # to that folder (whatever the rootdir its node id is relative to), then its name.
        for item in session.items:
            name = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else ""
            _ids.append([_rel(item.path), name])


def pytest_runtest_logreport(report):
    if report.failed:
        _entry(_path_of(report.nodeid))["failed"] += 1
    elif report.when == "call" and report.passed:
        _entry(_path_of(report.nodeid))["passed"] += 1


def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get("GATE_PROBE_OUT")
    if out:
        with open(out, "w", encoding="utf-8") as f:
            opened = {k: sorted(v) for k, v in _opened.items()}
            read_by = {k: sorted(v) for k, v in _read_by.items() if v}
            env = {k: sorted(v) for k, v in _env.items()}
            record = {"exitstatus": int(exitstatus), "files": _files, "opened": opened}
            loaded = {k: sorted(v) for k, v in _loaded.items()}
            json.dump(dict(record, read_by=read_by, env=env, loaded=loaded, ids=_ids), f)
