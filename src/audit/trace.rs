//! Running one test file under `strace` and reading back the repository files its run opened
//! (subprocesses included): Ekstazi-style file-level dependencies, observed rather than inferred.

use crate::error::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};

/// What one traced run opened and how it ended.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Observed {
    /// Repository files the run opened or executed, repository-relative.
    pub files: BTreeSet<String>,
    /// The runner's exit code (`None`: killed by a signal).
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
}

/// Is strace there to trace with?
pub(crate) fn available() -> bool {
    Command::new("strace")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `argv` (the runner and one test) in `cwd` under `strace -f`, with bytecode writing
/// off, and keeps the opened paths that are files of the tree under `root` (`known`).
pub(crate) fn run(
    argv: &[String],
    env: &BTreeMap<String, String>,
    cwd: &Path,
    root: &Path,
    known: &BTreeSet<String>,
    scratch: &Path,
) -> Result<Observed> {
    let log = scratch.join(format!(
        "strace-{}-{:?}.log",
        std::process::id(),
        std::thread::current().id()
    ));
    let started = std::time::Instant::now();
    let status = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-y",
            "-s",
            "4096",
            "-e",
            "trace=openat,open,execve",
        ])
        .arg("-o")
        .arg(&log)
        .args(argv)
        .current_dir(cwd)
        .envs(env)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|source| crate::run::RunnerError::Start {
            program: "strace".into(),
            source,
        })?;
    let duration_ms = started.elapsed().as_millis() as u64;
    let text = std::fs::read(&log).map_err(|e| Error::io(&log, "cannot read the trace", e))?;
    let _ = std::fs::remove_file(&log);
    let root = root
        .canonicalize()
        .map_err(|e| Error::io(root, "cannot resolve the repository root", e))?;
    let files = parse(&String::from_utf8_lossy(&text), &root, known);
    Ok(Observed {
        files,
        exit_code: status.code(),
        duration_ms,
    })
}

/// The repository files a trace shows opened (`= fd</abs/path>` with `-y`) or executed.
pub(crate) fn parse(trace: &str, root: &Path, known: &BTreeSet<String>) -> BTreeSet<String> {
    let prefix = format!("{}/", root.display());
    let mut out = BTreeSet::new();
    for line in trace.lines() {
        let path = if line.contains("execve(") {
            quoted_first_arg(line).filter(|_| line.trim_end().ends_with("= 0"))
        } else {
            opened_path(line)
        };
        let Some(path) = path else { continue };
        let relative = match path.strip_prefix(&prefix) {
            Some(rest) => rest.to_string(),
            None if !path.starts_with('/') => path.trim_start_matches("./").to_string(),
            None => continue,
        };
        let file = source_of_bytecode(&relative);
        if !file.starts_with(".git/") && known.contains(&file) {
            out.insert(file);
        }
    }
    out
}

/// `… = 3</abs/path>` → `/abs/path`; failed opens (`= -1 ENOENT`) give nothing.
fn opened_path(line: &str) -> Option<String> {
    let at = line.rfind(") = ")?;
    let result = &line[at + 4..];
    let start = result.find('<')?;
    let fd: i64 = result[..start].trim().parse().ok()?;
    if fd < 0 {
        return None;
    }
    let end = result.rfind('>')?;
    Some(unescape(&result[start + 1..end]))
}

fn quoted_first_arg(line: &str) -> Option<String> {
    let start = line.find("(\"")? + 2;
    let end = start + line[start..].find('"')?;
    Some(unescape(&line[start..end]))
}

/// strace escapes unusual bytes as `\xNN` (and `\"`): undo the common ones.
fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut out = Vec::new();
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            if bytes[i + 1] == b'x'
                && i + 3 < bytes.len()
                && let Ok(b) = u8::from_str_radix(&s[i + 2..i + 4], 16)
            {
                out.push(b);
                i += 4;
                continue;
            }
            out.push(bytes[i + 1]);
            i += 2;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `pkg/__pycache__/mod.cpython-311.pyc` → `pkg/mod.py`: a cached module read stands for its
/// source, or an old cache would hide the dependency.
fn source_of_bytecode(path: &str) -> String {
    let Some((dir, name)) = path.rsplit_once("/__pycache__/") else {
        return path.to_string();
    };
    match name.strip_suffix(".pyc") {
        Some(stem) => format!("{dir}/{}.py", stem.split('.').next().unwrap_or(stem)),
        None => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_opens_execs_and_bytecode() {
        let known: BTreeSet<String> = ["a.py", "pkg/mod.py", "scripts/x.sh", "data/p q.json"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let trace = "\
1 openat(AT_FDCWD</r>, \"/r/a.py\", O_RDONLY) = 3</r/a.py>
1 openat(AT_FDCWD</r>, \"/r/missing.py\", O_RDONLY) = -1 ENOENT (No such file or directory)
1 openat(AT_FDCWD</r>, \"/r/pkg/__pycache__/mod.cpython-311.pyc\", O_RDONLY) = 4</r/pkg/__pycache__/mod.cpython-311.pyc>
2 execve(\"/r/scripts/x.sh\", [\"/r/scripts/x.sh\"], 0x1 /* 3 vars */) = 0
2 openat(AT_FDCWD</r>, \"/r/.git/HEAD\", O_RDONLY) = 3</r/.git/HEAD>
3 openat(AT_FDCWD</r>, \"data/p q.json\", O_RDONLY <unfinished ...>
3 <... openat resumed>) = 5</r/data/p\\x20q.json>
4 openat(AT_FDCWD</r>, \"/etc/passwd\", O_RDONLY) = 3</etc/passwd>
";
        let got: Vec<String> = parse(trace, Path::new("/r"), &known).into_iter().collect();
        assert_eq!(got, ["a.py", "data/p q.json", "pkg/mod.py", "scripts/x.sh"]);
    }
}
