//! pytest's tests of test files, listed by its collection (`--collect-only` with gate's probe),
//! for a shard split by test (`--shard-by test`): a suite dominated by a few long files is split
//! inside them.

use super::PROBE;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each of `files` → its tests as pytest takes them from `root` (`file::name`), listed by the
/// runner `base` there. The probe names each test's file relative to `root`, not to pytest's
/// rootdir (which node ids are relative to, and which a runner option can move): a name is
/// never taken for another file's. A file that lists no test (it failed to collect, or
/// pytest left it out) is absent: it stays one unit, run whole, so nothing it holds is left
/// out. An error when pytest cannot be started.
pub(crate) fn node_ids(
    base: &[String],
    root: &Path,
    files: &[&str],
) -> Result<BTreeMap<String, Vec<String>>, String> {
    let Some((program, args)) = base.split_first() else {
        return Err("the runner's command is empty".into());
    };
    let scratch = crate::process::temp_dir("gate-collect")
        .map_err(|e| format!("cannot create a folder for pytest's probe: {e}"))?;
    let probe = scratch.path().join("gate_probe.py");
    let out = scratch.path().join("probe.json");
    std::fs::write(&probe, PROBE).map_err(|e| format!("cannot write pytest's probe: {e}"))?;
    let python_path = match std::env::var("PYTHONPATH").ok().filter(|p| !p.is_empty()) {
        Some(p) => format!("{}:{p}", scratch.path().display()),
        None => scratch.path().display().to_string(),
    };
    let status = std::process::Command::new(program)
        .args(args)
        .args([
            "--collect-only",
            "-q",
            "-p",
            "gate_probe",
            "-p",
            "no:cacheprovider",
        ])
        // `./`: a file named `-k…` or `@…` stays a path.
        .args(files.iter().map(|f| format!("./{f}")))
        .env("PYTHONPATH", python_path)
        .env("GATE_PROBE_OUT", &out)
        .env("GATE_PROBE_IDS", "1")
        .env_remove("GATE_PROBE_TRACE")
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("`{program}` could not be started to list the tests: {e}"))?;
    let listed: Listed = std::fs::read(&out)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| {
            format!(
                "pytest listed no test to split ({status}): its collection of {} file(s) did not finish",
                files.len()
            )
        })?;
    Ok(by_file(&listed.ids, files))
}

#[derive(serde::Deserialize)]
struct Listed {
    #[serde(default)]
    ids: Vec<(String, String)>,
}

/// The tests of the asked `files`, each `file::name`; a test of another file, or one without a
/// name, is none of theirs.
fn by_file(ids: &[(String, String)], files: &[&str]) -> BTreeMap<String, Vec<String>> {
    let asked: BTreeSet<&str> = files.iter().copied().collect();
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (file, name) in ids {
        if asked.contains(file.as_str()) && !name.is_empty() {
            out.entry(file.clone())
                .or_default()
                .push(format!("{file}::{name}"));
        }
    }
    for list in out.values_mut() {
        list.sort();
        list.dedup();
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn tests_are_kept_for_the_asked_files_only() {
        let ids = [
            ("tests/test_a.py", "test_x"),
            ("tests/test_a.py", "TestK::test_y[1-2]"),
            ("sub/tests/test_a.py", "test_x"),
            ("tests/test_c.py", ""),
        ]
        .map(|(f, n)| (f.to_string(), n.to_string()));
        let out = super::by_file(&ids, &["tests/test_a.py", "tests/test_c.py"]);
        assert_eq!(
            out.get("tests/test_a.py").unwrap(),
            &vec![
                "tests/test_a.py::TestK::test_y[1-2]".to_string(),
                "tests/test_a.py::test_x".to_string()
            ]
        );
        assert_eq!(out.len(), 1, "{out:?}");
    }
}
