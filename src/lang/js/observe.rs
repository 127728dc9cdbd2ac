//! What a Vitest or Jest run read that no commit holds, observed: the run goes under `strace -f`, and
//! every path its processes (node, its workers, whatever a test starts) opened, looked up or
//! executed is read back from the trace — the installed packages' files, a git-ignored `.env`,
//! a file outside the repository, and each one looked for and absent. Node has no audit hook
//! as Python has, and its resolution and `.env` loading look files up by `stat` and `access`,
//! not only by `open`: a trace of the system calls is the one complete record, and the ledger
//! binds a pass to it as it binds pytest's to the probe's list.

use super::suite::JsCommand;
use crate::run::At;
use crate::run::events::{Event, Sink};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// strace's arguments before the traced argv: every process followed, each path printed in
/// full with the file a descriptor names (`-y`), the calls that read, look up, execute, write
/// or move a path, and those that change or hand down a working folder. The kernel stops the
/// traced processes only at those calls (`--seccomp-bpf`): `bench/js_trace.py` measures a
/// gated Vitest run at 1.12× its untraced time, a Jest run at 1.21×.
pub(super) fn prefix(log: &Path) -> Vec<String> {
    [
        "strace",
        "-f",
        "--seccomp-bpf",
        "-qq",
        "-y",
        "-s",
        "8192",
        "-e",
        "signal=none",
        "-e",
        "trace=open,openat,openat2,creat,access,faccessat,faccessat2,stat,lstat,newfstatat,statx,readlink,readlinkat,execve,execveat,chdir,fchdir,rename,renameat,renameat2,link,linkat,symlink,symlinkat,truncate,mkdir,mkdirat,clone,clone3,fork,vfork,io_uring_setup",
        "-o",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([log.display().to_string()])
    .collect()
}

/// Whether strace can trace here: on `PATH` (looked up, not run: the warm path asks this)
/// for the ledger's look-up.
pub(super) fn on_path(root: &Path) -> bool {
    crate::lang::toolchain::resolve("strace", root).is_some()
}

/// Whether strace traces a process here, as `prefix` asks (a container may forbid `ptrace`,
/// an old strace lack the filter): one short run before the tests, so a run that cannot be
/// traced still runs, unobserved.
pub(super) fn works() -> bool {
    let mut argv = prefix(Path::new("/dev/null"));
    argv.push("true".into());
    std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A runner's run, traced when the ledger may enter it: its argv under strace, its
/// environment, and after it the reads it made, to the event stream.
pub(super) struct Traced<'a> {
    at: &'a At<'a>,
    /// The trace, when the run is traced.
    log: Option<PathBuf>,
    /// gate's scratch folder for the run: its files are gate's, not the run's inputs.
    scratch: PathBuf,
    /// The runner's environment: the caller's, with libuv's io_uring off when traced (its
    /// file operations make no system call strace sees).
    pub env: BTreeMap<String, String>,
}

impl<'a> Traced<'a> {
    /// `argv` put under strace when the ledger is on, strace is on `PATH` and traces here.
    pub(super) fn begin(at: &'a At<'a>, scratch: &Path, argv: &mut Vec<String>) -> Traced<'a> {
        let mut env = at.env.clone();
        let log = (at.project.config.ledger.enabled && on_path(at.root) && works())
            .then(|| scratch.join("reads.strace"));
        if let Some(log) = &log {
            argv.splice(0..0, prefix(log));
            env.insert("UV_USE_IO_URING".into(), "0".into());
        }
        Traced {
            at,
            log,
            scratch: scratch.to_path_buf(),
            env,
        }
    }

    /// What the run of `command` from `cwd` read outside the tree, to `sink`: the list with
    /// every unit of the run at its end, or each unit unobserved with why. `own`: the
    /// runner's own state (a cache it reads and rewrites, derived from what is listed).
    pub(super) fn end(self, command: &JsCommand, cwd: &Path, own: &[PathBuf], sink: &mut dyn Sink) {
        if !self.at.project.config.ledger.enabled {
            return;
        }
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let mut mine: Vec<PathBuf> = own.iter().map(|p| real(p)).collect();
        mine.push(real(&self.scratch));
        let read = match self.log.as_deref().map(std::fs::read) {
            None => Reads::Unknown(
                "strace cannot trace here (not on PATH, or `ptrace` is not allowed)".into(),
            ),
            Some(Err(e)) => Reads::Unknown(format!("its trace cannot be read ({e})")),
            Some(Ok(bytes)) => reads(
                &String::from_utf8_lossy(&bytes),
                (&real(cwd), &real(&self.at.workspace.dir), &mine),
                &real(&std::env::temp_dir()),
            ),
        };
        match read {
            Reads::Listed(files) => {
                let files = spelled(files, self.at.project);
                let at = shares(&command.files, &files);
                sink.event(Event::Outside {
                    files: &files,
                    at: &at,
                });
            }
            Reads::Unknown(why) => {
                let what = format!("a run whose reads are not observed: {why}");
                for unit in &command.files {
                    sink.event(Event::Unobserved { unit, what: &what });
                }
            }
        }
    }
}

/// The list as the ledger binds it: a file under the root that a test is, or that a file
/// imports (or a convention ties to its user), as its path — the ledger leaves the tree's to
/// the closures, which reach it for whoever needs it; any other file under the root spelled
/// `./PATH` (`ledger::outside::TRACKED`), so that a file of the tree the run read but no
/// closure holds — a committed `.env` Vite loads, a base `tsconfig` an `extends` names, data
/// read by a path no analysis evaluates — is bound by its blob. Every unit of a run shares the
/// list: an import bound so would make one test's change every other test's.
fn spelled(files: Vec<String>, project: &crate::project::Project) -> Vec<String> {
    files
        .into_iter()
        .map(|f| {
            let closures = f.starts_with('/')
                || f.starts_with(ABSENT)
                || project.tests.contains(&f)
                || project.graph.imported(&f);
            if closures {
                f
            } else {
                format!("{}{f}", crate::ledger::TRACKED)
            }
        })
        .collect()
}

/// What a trace shows the run read: its paths in the order first read (relative to `root`
/// under it, absolute elsewhere), or why what it read cannot be named.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Reads {
    Listed(Vec<String>),
    Unknown(String),
}

/// The paths a trace shows read, looked up or executed, first-seen order. `cwd` is where the
/// first process started; `root` the repository's folder where the run ran; paths under
/// `own` (gate's scratch folder, the runner's own cache) are no inputs. A path the run only
/// wrote before any read of it is the run's output, not an input; one it read first is
/// listed, so a write during the run is the ledger's "changed during the run". The kernel's
/// and devices' files are not inputs.
///
/// In the temporary folder, a name the run looked for and then made itself is its own
/// scratch (`scratch`).
pub(super) fn reads(
    trace: &str,
    (cwd, root, own): (&Path, &Path, &[PathBuf]),
    temp: &Path,
) -> Reads {
    let mut state = State {
        group: HashMap::new(),
        cwd: Vec::new(),
        first: cwd.display().to_string(),
        written: BTreeSet::new(),
        seen: BTreeSet::new(),
        probed: BTreeSet::new(),
        made: BTreeSet::new(),
        present: BTreeSet::new(),
        listed: Vec::new(),
        pending: HashMap::new(),
    };
    for line in trace.lines() {
        if let Err(why) = state.line(line) {
            return Reads::Unknown(why);
        }
    }
    let root = format!("{}/", root.display());
    let probed = std::mem::take(&mut state.probed);
    let gates = |p: &str| own.iter().any(|o| Path::new(p).starts_with(o));
    Reads::Listed(
        state
            .listed
            .into_iter()
            .filter(|p| !gates(p) && !PSEUDO.iter().any(|d| p.starts_with(d)))
            .filter(|p| !scratch(Path::new(p), temp, &probed, &state.made))
            // A folder the run made holds what the run put there.
            .filter(|p| {
                p.strip_suffix('/')
                    .is_none_or(|dir| !state.made.contains(dir))
            })
            // What a folder of the tree holds is the tree's (an untracked file a test lists
            // there is named by the analysis or unknown); an installed folder's is not.
            .filter(|p| !p.ends_with('/') || !p.starts_with(&root) || p.contains("/node_modules/"))
            .map(|p| {
                // What the run only ever found absent is listed as such (`?PATH`): the run saw
                // it absent, so it is absent after the run or the run is not entered.
                let absent = if state.present.contains(&p) {
                    ""
                } else {
                    ABSENT
                };
                match p.strip_prefix(&root) {
                    Some(rel) => format!("{absent}{rel}"),
                    None => format!("{absent}{p}"),
                }
            })
            .collect(),
    )
}

/// Whether `path` is in the temporary folder `temp`, was only ever looked for there
/// (`probed`) and not found, and the run itself then made it or a folder above it (`made`):
/// a name tried before making it, its own scratch — Vitest and Vite make folders of random
/// names there. Anything else the run read there is listed, as anywhere: a file that was
/// there before the run, a name looked for and never made.
fn scratch(path: &Path, temp: &Path, probed: &BTreeSet<String>, made: &BTreeSet<String>) -> bool {
    path.starts_with(temp)
        && path != temp
        && path.to_str().is_some_and(|p| probed.contains(p))
        && path
            .ancestors()
            .take_while(|a| *a != temp)
            .any(|a| a.to_str().is_some_and(|a| made.contains(a)))
}

use crate::ledger::ABSENT;

/// The kernel's and devices' files: no commit or install changes them between runs.
const PSEUDO: [&str; 3] = ["/proc/", "/sys/", "/dev/"];

struct State {
    /// Each process's share of working folders: threads made with `CLONE_FS` share their
    /// parent's (a `chdir` in one moves all), a new process starts with a copy.
    group: HashMap<String, usize>,
    /// Each share's working folder, as its `chdir`s left it; `None` once gate cannot tell
    /// (`fchdir` to a descriptor strace did not name).
    cwd: Vec<Option<String>>,
    /// The first process's folder: where the traced command started.
    first: String,
    written: BTreeSet<String>,
    seen: BTreeSet<String>,
    /// Paths only looked up (`stat`, `access`) and not found, never opened to be read but
    /// once the run made them.
    probed: BTreeSet<String>,
    /// Every path the run made or wrote, whenever it did.
    made: BTreeSet<String>,
    /// Every path the run found there (read, looked up, listed).
    present: BTreeSet<String>,
    listed: Vec<String>,
    /// A call strace split (`<unfinished ...>`) by process, waiting for its `resumed` end.
    pending: HashMap<String, String>,
}

impl State {
    fn line(&mut self, line: &str) -> Result<(), String> {
        let (pid, call) = match line.split_once(' ') {
            // `-o` pads the process id to its column: `7729  openat(…)`.
            Some((pid, rest)) if pid.bytes().all(|b| b.is_ascii_digit()) => {
                (pid, rest.trim_start())
            }
            _ => return Ok(()),
        };
        let joined;
        let call = if let Some(start) = call.strip_suffix(" <unfinished ...>") {
            self.pending.insert(pid.to_string(), start.to_string());
            return Ok(());
        } else if call.starts_with("<... ") {
            let Some(start) = self.pending.remove(pid) else {
                return Err(format!("the trace resumes a call it never began: {line}"));
            };
            let rest = call.split_once("resumed>").map_or("", |(_, r)| r);
            joined = format!("{start}{rest}");
            joined.as_str()
        } else {
            call
        };
        if call.starts_with("+++") || call.starts_with("---") {
            return Ok(());
        }
        self.call(pid, call, line)
    }

    /// One whole call of process `pid` (`line` as the trace wrote it, for errors).
    fn call(&mut self, pid: &str, call: &str, line: &str) -> Result<(), String> {
        let Some((name, args)) = call.split_once('(') else {
            return Ok(());
        };
        // `) = 0`, or `)             = -1 ENOENT …` once strace pads a resumed call's end.
        let result = call
            .rfind(" = ")
            .filter(|&at| call[..at].trim_end().ends_with(')'))
            .map_or("", |at| &call[at + 3..]);
        let failed = result.starts_with('-');
        let absent = failed && (result.contains("ENOENT") || result.contains("ENOTDIR"));
        let group = match self.group.get(pid) {
            Some(&g) => g,
            None => {
                let group = self.born(pid);
                self.group.insert(pid.to_string(), group);
                group
            }
        };
        let cwd = self.cwd[group].clone();
        let strings = quoted(args);
        let path_at = |i: usize, at: Option<&str>| -> Result<Option<String>, String> {
            let Some(text) = strings.get(i) else {
                return Ok(None);
            };
            let text = text.as_ref().map_err(|e| format!("{e}: {line}"))?;
            absolute(text, at.or(cwd.as_deref()))
                .map(Some)
                .ok_or_else(|| {
                    format!("a process looked up `{text}` from a folder the trace does not name")
                })
        };
        // `openat(AT_FDCWD</dir>, "x", …)`: `-y` names the folder a descriptor argument is.
        let dir = folder_argument(args, 0);
        match name {
            "clone" | "clone3" | "fork" | "vfork" => self.cloned(group, args, result),
            // A ring's file operations are no system calls of their own: what it opened
            // would not be in the trace (the run is given `UV_USE_IO_URING=0`, so libuv
            // makes none).
            "io_uring_setup" if !failed => {
                return Err(
                    "a process read files through io_uring, which strace does not show".into(),
                );
            }
            "chdir" if !failed => {
                self.cwd[group] = path_at(0, None)?;
            }
            "fchdir" if !failed => {
                let to = args.split_once('<').and_then(|(_, r)| r.split_once('>'));
                self.cwd[group] = to.map(|(p, _)| unescape(p));
            }
            "open" | "creat" | "openat" | "openat2" => {
                let path = match name {
                    "open" | "creat" => path_at(0, None)?,
                    _ => path_at(0, dir.as_deref())?,
                };
                if let Some(path) = path {
                    self.opened(path, Open::of(name, args), result);
                }
            }
            "access" | "stat" | "lstat" | "readlink" | "execve" => {
                if let Some(path) = path_at(0, None)? {
                    self.looked(path, absent);
                }
            }
            "faccessat" | "faccessat2" | "newfstatat" | "statx" | "readlinkat" | "execveat" => {
                // `newfstatat(3</x>, "", …, AT_EMPTY_PATH)` looks at an open descriptor: read.
                if strings.first().is_some_and(|s| s.as_deref() == Ok("")) {
                    return Ok(());
                }
                if let Some(path) = path_at(0, dir.as_deref())? {
                    self.looked(path, absent);
                }
            }
            "rename" | "link" | "symlink" | "renameat" | "renameat2" | "linkat" | "symlinkat"
            | "truncate" | "mkdir" | "mkdirat"
                if !failed =>
            {
                // What it makes is the run's output: its last path. What a rename or a link
                // takes its content from is read: the new name holds it.
                let at = match name {
                    "renameat" | "renameat2" | "linkat" => folder_argument(args, 2),
                    "symlinkat" => folder_argument(args, 1),
                    "mkdirat" => dir.clone(),
                    _ => None,
                };
                let last = strings.len().saturating_sub(1);
                if matches!(
                    name,
                    "rename" | "link" | "renameat" | "renameat2" | "linkat"
                ) && let Some(from) = path_at(0, dir.as_deref())?
                {
                    self.read(from);
                }
                if let Some(path) = path_at(last, at.as_deref())? {
                    if name != "truncate" {
                        self.made.insert(path.clone());
                    }
                    self.wrote(path);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A process made by one in `group` (its id the call's `result`): a thread made with
    /// `CLONE_FS` shares its folder, anything else starts with a copy. One seen already (it
    /// spoke before the call returned) was placed then.
    fn cloned(&mut self, group: usize, args: &str, result: &str) {
        let Ok(child) = result.trim().parse::<u64>() else {
            return;
        };
        if self.group.contains_key(&child.to_string()) {
            return;
        }
        let shared = if args.contains("CLONE_FS") {
            group
        } else {
            self.cwd.push(self.cwd[group].clone());
            self.cwd.len() - 1
        };
        self.group.insert(child.to_string(), shared);
    }

    /// An open of `path` as `open` asks it, ended with `result`.
    fn opened(&mut self, path: String, open: Open, result: &str) {
        let failed = result.starts_with('-');
        // The file the descriptor names, links resolved: a link's target is opened too.
        let real = descriptor_path(result);
        for path in std::iter::once(path).chain(real) {
            if failed && (result.contains("ENOENT") || result.contains("ENOTDIR")) {
                let _ = self.missed(path.clone());
            } else if failed || !open.output {
                self.read(path.clone());
            } else {
                self.wrote(path.clone());
            }
            if open.creates && !failed {
                self.made.insert(path.clone());
            }
            // A folder opened to be listed: what it holds is read too (`DIR/`).
            if open.lists && !failed {
                self.read(format!("{path}/"));
            }
        }
    }

    /// The share of working folders of a process first seen: the first process's is where
    /// the command started; a child that speaks before its parent's `clone` returns (strace
    /// shows it then) is placed by the one `clone` under way; any other's folder the trace
    /// does not name.
    fn born(&mut self, _pid: &str) -> usize {
        if self.cwd.is_empty() {
            self.cwd.push(Some(self.first.clone()));
            return 0;
        }
        let cloning: Vec<(&String, &String)> = self
            .pending
            .iter()
            .filter(|(_, start)| {
                ["clone(", "clone3(", "fork(", "vfork("]
                    .iter()
                    .any(|c| start.starts_with(c))
            })
            .collect();
        if let [(parent, start)] = cloning.as_slice()
            && let Some(&group) = self.group.get(*parent)
        {
            if start.contains("CLONE_FS") {
                return group;
            }
            let cwd = self.cwd[group].clone();
            self.cwd.push(cwd);
            return self.cwd.len() - 1;
        }
        self.cwd.push(None);
        self.cwd.len() - 1
    }

    /// A path looked up and not found: its shallowest missing folder stands for it (a
    /// loader probes folders that do not exist by the dozen; one of them appearing is the
    /// change), read as the trace is parsed, right after the run.
    fn missed(&mut self, path: String) -> String {
        let mut at = PathBuf::from(&path);
        while let Some(parent) = at.parent() {
            if parent.as_os_str().is_empty() || std::fs::symlink_metadata(parent).is_ok() {
                break;
            }
            at = parent.to_path_buf();
        }
        let at = at.display().to_string();
        self.list(at.clone());
        at
    }

    /// A path the run read, or found there.
    fn read(&mut self, path: String) {
        self.present.insert(path.clone());
        self.list(path);
    }

    fn list(&mut self, path: String) {
        if !self.made.contains(&path) {
            self.probed.remove(&path);
        }
        if !self.written.contains(&path) && self.seen.insert(path.clone()) {
            self.listed.push(path);
        }
    }

    fn looked(&mut self, path: String, absent: bool) {
        if absent {
            let before = self.seen.len();
            let at = self.missed(path);
            if self.seen.len() > before {
                self.probed.insert(at);
            }
        } else {
            self.read(path);
        }
    }

    fn wrote(&mut self, path: String) {
        if !self.seen.contains(&path) {
            self.written.insert(path);
        }
    }
}

/// What an open asks of a path, by its flags.
struct Open {
    /// It only writes, whatever the path held (`creat`, `O_WRONLY` with `O_TRUNC`, a new file
    /// with `O_CREAT|O_EXCL`): the run's output. Anything else reads what was there — a
    /// read-write open, an append —, and is listed.
    output: bool,
    /// It makes the path when it is not there (`O_CREAT`).
    creates: bool,
    /// It opens a folder to list it (`O_DIRECTORY`).
    lists: bool,
}

impl Open {
    fn of(name: &str, args: &str) -> Open {
        let has = |f: &str| args.contains(f);
        let creates = name == "creat" || has("O_CREAT");
        let output = name == "creat"
            || has("O_WRONLY") && (has("O_TRUNC") || has("O_EXCL"))
            || has("O_CREAT") && has("O_EXCL");
        Open {
            output,
            creates,
            lists: has("O_DIRECTORY"),
        }
    }
}

/// `path` as an absolute, normalised path: relative ones against `cwd` (none: unknown).
fn absolute(path: &str, cwd: Option<&str>) -> Option<String> {
    let joined = if path.starts_with('/') {
        PathBuf::from(path)
    } else {
        Path::new(cwd?).join(path)
    };
    let mut out = PathBuf::from("/");
    for part in joined.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(p) => out.push(p),
            _ => {}
        }
    }
    Some(out.display().to_string())
}

/// Each quoted string argument of a call, unescaped; one strace cut short (longer than its
/// limit) or that is not text is an error: a path gate cannot name.
fn quoted(args: &str) -> Vec<Result<String, String>> {
    let mut out = Vec::new();
    let bytes = args.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut j = start;
        while j < bytes.len() && bytes[j] != b'"' {
            j += if bytes[j] == b'\\' { 2 } else { 1 };
        }
        let end = j.min(bytes.len());
        let text = unescape_bytes(&args[start..end]);
        let cut = args[end..].starts_with("\"...");
        out.push(match (String::from_utf8(text), cut) {
            (_, true) => Err("a path longer than the trace shows".to_string()),
            (Ok(s), false) => Ok(s),
            (Err(_), false) => Err("a path that is not text".to_string()),
        });
        i = end + 1;
    }
    out
}

/// The folder `-y` shows for a call's argument `n` (`AT_FDCWD</dir>`, `3</dir>`): the first
/// of `openat`, the third of `renameat(OLDDIR, "a", NEWDIR, "b")`. A path before it that
/// holds `, ` moves the count: then a write's folder is missed, and what it wrote counts as
/// read when read again — more inputs, never fewer.
fn folder_argument(args: &str, n: usize) -> Option<String> {
    let arg = args.split(", ").nth(n)?;
    let (fd, rest) = arg.split_once('<')?;
    if fd.starts_with('"') {
        return None;
    }
    Some(unescape(rest.strip_suffix('>')?))
}

/// `3</abs/path>` → `/abs/path`: the file an open's descriptor names.
fn descriptor_path(result: &str) -> Option<String> {
    let (fd, rest) = result.split_once('<')?;
    fd.trim().parse::<u64>().ok()?;
    let end = rest.rfind('>')?;
    Some(unescape(&rest[..end]))
}

fn unescape(s: &str) -> String {
    String::from_utf8_lossy(&unescape_bytes(s)).into_owned()
}

/// strace's escapes (`\xNN`, `\"`, `\\`, `\n`, `\t`) undone.
fn unescape_bytes(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            match bytes[i + 1] {
                b'x' if i + 3 < bytes.len() => {
                    if let Ok(b) = u8::from_str_radix(&s[i + 2..i + 4], 16) {
                        out.push(b);
                        i += 4;
                        continue;
                    }
                    out.push(b'x');
                }
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                other => out.push(other),
            }
            i += 2;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// The outside reads of a run, with every unit of it at the list's end: workers load modules
/// for whichever file they run, so each unit's share is the whole list (a superset).
pub(super) fn shares(units: &[String], files: &[String]) -> BTreeMap<String, usize> {
    units.iter().map(|u| (u.clone(), files.len())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository folder on disk with `app/` in it (a path looked up and not found is
    /// placed by what exists), and `trace` with `ROOT` spelling it.
    fn listed(trace: &str) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("app/out")).unwrap();
        let trace = trace.replace("ROOT", &root.display().to_string());
        let temp = root.join("tmp");
        std::fs::create_dir_all(temp.join("old")).unwrap();
        std::fs::create_dir_all(temp.join("made/sub")).unwrap();
        let app = root.join("app");
        let own = [PathBuf::from("/tmp/own")];
        let paths = (app.as_path(), root.as_path(), own.as_slice());
        match reads(&trace, paths, &temp) {
            Reads::Listed(l) => l,
            Reads::Unknown(why) => panic!("{why}"),
        }
    }

    #[test]
    fn reads_lookups_and_execs_are_listed_once_in_order_outputs_never() {
        let trace = r#"10  execve("/usr/bin/node", ["node"], 0x1 /* 3 vars */) = 0
10 openat(AT_FDCWD<ROOT/app>, "node_modules/pkg/index.js", O_RDONLY|O_CLOEXEC) = 20<ROOT/node_modules/.pnpm/pkg/index.js>
10 statx(AT_FDCWD<ROOT/app>, ".env.local", AT_STATX_SYNC_AS_STAT, STATX_ALL, 0x7ffe) = -1 ENOENT (No such file or directory)
10 access("/etc/hosts", F_OK) = 0
10 openat(AT_FDCWD<ROOT/app>, "out/report.xml", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 21<ROOT/app/out/report.xml>
10 openat(AT_FDCWD<ROOT/app>, "out/report.xml", O_RDONLY|O_CLOEXEC) = 22<ROOT/app/out/report.xml>
10 openat(AT_FDCWD<ROOT/app>, "cache.json", O_RDONLY|O_CLOEXEC) = 23<ROOT/app/cache.json>
10 openat(AT_FDCWD<ROOT/app>, "cache.json", O_WRONLY|O_TRUNC|O_CLOEXEC) = 23<ROOT/app/cache.json>
10 openat(AT_FDCWD</proc>, "self/maps", O_RDONLY) = 24</proc/10/maps>
10 openat(AT_FDCWD</tmp/own>, "files.json", O_RDONLY) = 25</tmp/own/files.json>
10 newfstatat(25</tmp/own/files.json>, "", {st_mode=S_IFREG|0644, st_size=2, ...}, AT_EMPTY_PATH) = 0
10 access("ROOT/app/gone/deeper/x.so", F_OK) = -1 ENOENT (No such file or directory)
10 access("ROOT/app/gone/other.so", F_OK) = -1 ENOENT (No such file or directory)
10 access("ROOT/tmp/made/sub/x", F_OK) = -1 ENOENT (No such file or directory)
10 access("ROOT/tmp/made", F_OK) = -1 ENOENT (No such file or directory)
10 mkdir("ROOT/tmp/made", 0777) = 0
10 openat(AT_FDCWD<ROOT/app>, "db.sqlite", O_RDWR|O_CREAT|O_CLOEXEC, 0644) = 26<ROOT/app/db.sqlite>
10 openat(AT_FDCWD<ROOT/app>, "log.txt", O_WRONLY|O_APPEND|O_CREAT, 0644) = 27<ROOT/app/log.txt>
10 link("/etc/hostname", "ROOT/app/out/copy") = 0
10 openat(AT_FDCWD<ROOT/app>, "out/copy", O_RDONLY) = 28<ROOT/app/out/copy>
10 access("ROOT/tmp/old/y", F_OK) = -1 ENOENT (No such file or directory)
10 access("ROOT/tmp/gone", F_OK) = -1 ENOENT (No such file or directory)
10 access("ROOT/tmp/cleaned/sub", F_OK) = -1 ENOENT (No such file or directory)
10 mkdir("ROOT/tmp/cleaned", 0777) = 0
10 openat(AT_FDCWD<ROOT>, "ROOT/tmp/cleaned", O_RDONLY|O_DIRECTORY) = 3<ROOT/tmp/cleaned>
10 openat(AT_FDCWD<ROOT>, "ROOT/tmp/wanted", O_RDONLY) = -1 ENOENT (No such file or directory)
10 +++ exited with 0 +++
"#;
        assert_eq!(
            listed(trace),
            [
                "/usr/bin/node",
                "app/node_modules/pkg/index.js",
                "node_modules/.pnpm/pkg/index.js",
                "?app/.env.local",
                "/etc/hosts",
                "app/cache.json",
                "?app/gone",
                "app/db.sqlite",
                "app/log.txt",
                "/etc/hostname",
                "?tmp/old/y",
                "?tmp/gone",
                "?tmp/wanted",
            ]
        );
    }

    #[test]
    fn working_folders_follow_chdir_and_pass_to_children_and_split_calls_join() {
        let trace = r#"10 clone(child_stack=NULL, flags=CLONE_VM|SIGCHLD) = 11
10 clone3({flags=CLONE_VM|CLONE_FS|CLONE_THREAD, exit_signal=0, stack=0x1, stack_size=0x2}, 88) = 13
10 chdir("/etc") = 0
10 access("hosts", F_OK) = 0
11 access("fixture.json", R_OK <unfinished ...>
10 clone3({flags=CLONE_VM, exit_signal=SIGCHLD, stack=0x1, stack_size=0x2}, 88) = 12
11 <... access resumed>) = -1 ENOENT (No such file or directory)
12 access("resolv.conf", F_OK) = 0
13 stat("passwd", {st_mode=S_IFREG|0644, st_size=1, ...}) = 0
12 clone(child_stack=NULL, flags=CLONE_VM|SIGCHLD <unfinished ...>
14 access("group", F_OK) = 0
12 <... clone resumed>, child_tidptr=0x7f) = 14
14 access("shadow", F_OK <unfinished ...>
14 <... access resumed>)             = -1 ENOENT (No such file or directory)
"#;
        assert_eq!(
            listed(trace),
            [
                "/etc/hosts",
                "?app/fixture.json",
                "/etc/resolv.conf",
                "/etc/passwd",
                "/etc/group",
                "?/etc/shadow"
            ]
        );
    }

    #[test]
    fn a_path_gate_cannot_place_or_read_whole_makes_the_reads_unknown() {
        let unplaced = "10 fchdir(7) = 0\n10 access(\"x\", F_OK) = 0\n";
        let cut = format!("10 access(\"/a/{}\"..., F_OK) = 0\n", "b".repeat(10));
        let orphan = "10 <... access resumed>) = 0\n";
        let ring = "10 io_uring_setup(64, {flags=0}) = 3<anon_inode:[io_uring]>\n";
        for trace in [unplaced, cut.as_str(), orphan, ring] {
            assert!(
                matches!(
                    reads(
                        trace,
                        (Path::new("/r"), Path::new("/r"), &[PathBuf::from("/o")]),
                        Path::new("/t")
                    ),
                    Reads::Unknown(_)
                ),
                "{trace}"
            );
        }
    }

    #[test]
    fn escapes_are_undone() {
        let trace = "10 access(\"/etc/a\\\"b\\x41\", F_OK) = 0\n";
        assert_eq!(listed(trace), ["/etc/a\"bA"]);
    }

    /// Every way a Node process reads a file, each path spelled every way (absolute, from
    /// the working folder, through `..`, through a linked folder), run by the real `node`
    /// under `prefix`: each file read is on the list, each one looked for and absent too,
    /// and what the run only wrote is not.
    #[test]
    fn every_way_node_reads_a_file_is_on_the_list() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        let (root, data) = (top.join("repo"), top.join("data"));
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(data.join("d")).unwrap();
        std::os::unix::fs::symlink(&data, top.join("link")).unwrap();
        const FORMS: [&str; 15] = [
            "fs.readFileSync(@P@)",
            "fs.existsSync(@P@)",
            "fs.statSync(@P@)",
            "fs.lstatSync(@P@)",
            "fs.accessSync(@P@)",
            "fs.readSync(fs.openSync(@P@, 'r'), Buffer.alloc(1))",
            "await fs.promises.readFile(@P@)",
            "await (await fs.promises.open(@P@)).close()",
            "await new Promise((ok) => fs.readFile(@P@, ok))",
            "await new Promise((ok) => fs.createReadStream(@P@).on('close', ok).resume())",
            "require(@P@)",
            "await import(url.pathToFileURL(path.resolve(@P@)).href)",
            "cp.execFileSync('cat', [@P@])",
            "cp.execSync('cat ' + @P@)",
            "await new Promise((ok) => new wt.Worker(`require('fs').readFileSync(${JSON.stringify(@P@)})`, { eval: true }).on('exit', ok))",
        ];
        let mut script = String::from(
            "const fs = require('fs'), path = require('path'), url = require('url'), cp = require('child_process'), wt = require('worker_threads');\n(async () => {\n",
        );
        let mut expected = Vec::new();
        for (i, form) in FORMS.iter().enumerate() {
            for (j, spell) in ["abs", "rel", "up", "link"].iter().enumerate() {
                let name = format!("f{i}_{j}.js");
                std::fs::write(data.join("d").join(&name), "module.exports = 1;\n").unwrap();
                let p = match *spell {
                    "abs" => data.join("d").join(&name).display().to_string(),
                    "rel" => format!("../../data/d/{name}"),
                    "up" => format!("../../data/d/../d/{name}"),
                    _ => top.join("link/d").join(&name).display().to_string(),
                };
                script.push_str(&format!("  {};\n", form.replace("@P@", &format!("{p:?}"))));
                // A look-up through the link is listed as spelled: its state follows the link.
                let through = top.join("link/d").join(&name).display().to_string();
                expected.push((data.join("d").join(&name).display().to_string(), through));
            }
        }
        // One looked for and absent, one only written, and a folder changed to mid-run.
        script.push_str("  fs.existsSync('../../data/none.js');\n");
        script.push_str("  fs.writeFileSync('../../data/out.txt', 'x');\n");
        std::fs::write(data.join("d/after.js"), "").unwrap();
        script.push_str("  process.chdir('../../data'); fs.existsSync('d/after.js');\n})();\n");
        let log = top.join("trace");
        let mut argv = prefix(&log);
        argv.extend(["node".into(), "-e".into(), script]);
        let status = std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(root.join("sub"))
            .env("UV_USE_IO_URING", "0")
            .status()
            .unwrap();
        assert!(status.success());
        let trace = std::fs::read_to_string(&log).unwrap();
        let paths = (root.join("sub"), root.clone(), [top.join("own")]);
        let Reads::Listed(listed) = reads(
            &trace,
            (&paths.0, &paths.1, paths.2.as_slice()),
            Path::new("/nonexistent"),
        ) else {
            panic!("unknown")
        };
        for (real, through) in &expected {
            assert!(
                listed.contains(real) || listed.contains(through),
                "{real} is not on the list"
            );
        }
        assert!(listed.contains(&format!("{ABSENT}{}", data.join("none.js").display())));
        assert!(listed.contains(&data.join("d/after.js").display().to_string()));
        assert!(!listed.contains(&data.join("out.txt").display().to_string()));
    }
}
