//! Results a run made elsewhere, read back: JUnit XML and `go test -json` files, each result
//! placed under the id gate's own runs give it. `gate record` and `gate shadow --junit` read
//! them; a file that cannot be read or parsed is an error naming it, and nothing is kept.

use crate::error::{Error, Result};
use crate::project::Project;
use crate::run::events::TestResult;
use std::path::{Path, PathBuf};

/// The results in JUnit XML and `go test -json` files, placed in `project`'s tree; a file that
/// cannot be read or parsed is an error naming it.
pub(crate) fn read_results(
    junit: &[PathBuf],
    go_json: &[PathBuf],
    project: &Project,
) -> Result<Vec<TestResult>> {
    let read = |path: &Path| std::fs::read(path).map_err(|e| Error::io(path, "cannot read", e));
    let bad = |path: &Path, message: String| Error::Input {
        path: path.to_path_buf(),
        message,
    };
    let mut results = Vec::new();
    for path in junit {
        let cases = crate::run::junit::parse(&read(path)?).map_err(|e| bad(path, e.to_string()))?;
        results.extend(crate::run::junit::results(&cases, &project.tests));
    }
    for path in go_json {
        let found = crate::lang::go::gotest::read_json(&read(path)?, &project.go)
            .map_err(|e| bad(path, e.to_string()))?;
        results.extend(found);
    }
    Ok(results)
}
