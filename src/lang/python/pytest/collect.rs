//! pytest's node ids of test files (`--collect-only -q`), for a shard split by test
//! (`--shard-by test`): a suite dominated by a few long files is split inside them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each of `files` → the node ids pytest collects from it, run with `base` (the runner's argv)
/// from `root`. A file whose ids cannot be read from the listing (it failed to collect, or
/// pytest's root is another folder and names it otherwise) is absent: it stays one unit, run
/// whole, so nothing it holds is left out. An error when pytest cannot be started.
pub(crate) fn node_ids(
    base: &[String],
    root: &Path,
    files: &[&str],
) -> Result<BTreeMap<String, Vec<String>>, String> {
    let Some((program, args)) = base.split_first() else {
        return Err("the runner's command is empty".into());
    };
    let output = std::process::Command::new(program)
        .args(args)
        .args(["--collect-only", "-q", "-p", "no:cacheprovider"])
        // `./`: a file named `-k…` or `@…` stays a path.
        .args(files.iter().map(|f| format!("./{f}")))
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("`{program}` could not be started to list the tests: {e}"))?;
    Ok(parse(&String::from_utf8_lossy(&output.stdout), files))
}

/// The node ids of `files` in a `--collect-only -q` listing: one per line, `file::name…`;
/// lines naming no asked file (a conftest's print, the summary) are not ids.
fn parse(listing: &str, files: &[&str]) -> BTreeMap<String, Vec<String>> {
    let asked: BTreeSet<&str> = files.iter().copied().collect();
    let mut ids: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in listing.lines() {
        let Some((file, _)) = line.split_once("::") else {
            continue;
        };
        if asked.contains(file) && !line.trim_end().ends_with("::") {
            ids.entry(file.to_string())
                .or_default()
                .push(line.trim_end().to_string());
        }
    }
    for list in ids.values_mut() {
        list.sort();
        list.dedup();
    }
    ids
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_the_lines_naming_an_asked_file() {
        let listing = "hello from conftest\ntests/test_a.py::test_x\ntests/test_a.py::TestK::test_y[1-2]\nother/test_b.py::test_z\n\n3 tests collected in 0.01s\n";
        let ids = super::parse(listing, &["tests/test_a.py", "tests/test_c.py"]);
        assert_eq!(
            ids.get("tests/test_a.py").unwrap(),
            &vec![
                "tests/test_a.py::TestK::test_y[1-2]".to_string(),
                "tests/test_a.py::test_x".to_string()
            ]
        );
        assert_eq!(ids.len(), 1, "{ids:?}");
    }
}
