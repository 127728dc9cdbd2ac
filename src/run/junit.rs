//! JUnit XML, as pytest (`--junitxml`, xunit1 and xunit2), gotestsum and go-junit-report write
//! it, read with a real XML parser (quick-xml) into per-test results whose ids are the ones the
//! selection uses: pytest's `classname` and `name` placed back on the test file of the tree
//! (`tests.test_cart.TestCart` + `test_total[2-3]` → `tests/test_cart.py::TestCart::test_total[2-3]`).
//! A file that is not JUnit, or breaks off, is an error naming where.

use super::events::{TestOutcome, TestResult};
use quick_xml::events::{BytesStart, Event};
use std::collections::BTreeSet;

/// One `<testcase>`, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Case {
    pub classname: String,
    pub name: String,
    /// xunit1's `file` attribute, when written.
    pub file: Option<String>,
    pub duration_ms: u64,
    pub outcome: TestOutcome,
    /// Failed attempts before the last within the run (`rerunFailure`, `flakyFailure`, …).
    pub earlier_failures: u32,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    #[error("not well-formed XML at byte {at}")]
    Xml {
        at: u64,
        #[source]
        source: quick_xml::Error,
    },
    #[error("not a JUnit report: its root element is `{0}`, not `testsuites` or `testsuite`")]
    NotJunit(String),
    #[error("the report ends inside `{0}`")]
    Truncated(String),
    #[error("not a JUnit report: no `testsuites` or `testsuite` element")]
    Empty,
}

/// The test cases of a JUnit report.
pub(crate) fn parse(bytes: &[u8]) -> Result<Vec<Case>, Error> {
    let mut reader = quick_xml::Reader::from_reader(bytes);
    let mut buf = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let mut cases = Vec::new();
    let mut case: Option<Case> = None;
    let mut rooted = false;
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|source| Error::Xml {
                at: reader.buffer_position(),
                source,
            })?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let name = e.local_name().as_ref().to_string();
                if open.is_empty() && !matches!(name.as_str(), "testsuites" | "testsuite") {
                    return Err(Error::NotJunit(name));
                }
                rooted = true;
                let empty = matches!(event, Event::Empty(_));
                match name.as_str() {
                    "testcase" => {
                        let c = testcase(e);
                        if empty {
                            cases.push(c);
                        } else {
                            case = Some(c);
                        }
                    }
                    _ => {
                        if let Some(c) = case.as_mut() {
                            mark(c, &name);
                        }
                    }
                }
                if !empty {
                    open.push(name);
                }
            }
            Event::End(_) => {
                if open.pop().as_deref() == Some("testcase")
                    && let Some(c) = case.take()
                {
                    cases.push(c);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    match open.last() {
        Some(element) => Err(Error::Truncated(element.clone())),
        // Text, a bare XML declaration, nothing at all: no report (an empty suite still has
        // its root), never an empty one.
        None if !rooted => Err(Error::Empty),
        None => Ok(cases),
    }
}

fn attribute(e: &BytesStart<'_>, key: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == key)
        .and_then(|a| {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .ok()
                .map(|v| v.into_owned())
        })
}

fn testcase(e: &BytesStart<'_>) -> Case {
    let seconds: f64 = attribute(e, "time")
        .and_then(|t| t.parse().ok())
        .unwrap_or(0.0);
    Case {
        classname: attribute(e, "classname").unwrap_or_default(),
        name: attribute(e, "name").unwrap_or_default(),
        file: attribute(e, "file"),
        duration_ms: (seconds * 1000.0).round().max(0.0) as u64,
        outcome: TestOutcome::Passed,
        earlier_failures: 0,
    }
}

/// What an element inside a `<testcase>` says of it.
fn mark(case: &mut Case, element: &str) {
    let rank = |o: TestOutcome| match o {
        TestOutcome::Passed => 0,
        TestOutcome::Skipped => 1,
        TestOutcome::Failed => 2,
        TestOutcome::Error => 3,
    };
    let outcome = match element {
        "failure" => TestOutcome::Failed,
        "error" => TestOutcome::Error,
        "skipped" => TestOutcome::Skipped,
        "rerunFailure" | "rerunError" | "flakyFailure" | "flakyError" => {
            case.earlier_failures += 1;
            return;
        }
        _ => return,
    };
    // A test that failed and then errored in teardown is reported with both: the worst counts.
    if rank(outcome) > rank(case.outcome) {
        case.outcome = outcome;
    }
}

/// The cases as results, each placed on a test file of the tree (`files`): by its `file`
/// attribute when written, else by the longest file whose dotted path its `classname` starts
/// with. Earlier failed attempts come first, each its own result.
pub(crate) fn results(cases: &[Case], files: &BTreeSet<String>) -> Vec<TestResult> {
    // A module's classname is its dotted path; a doctest text file's (`docs/guide.md`) is its
    // path dotted with the extension kept (`docs.guide.md`).
    let dotted: Vec<(String, &String)> = files
        .iter()
        .map(|f| (f.strip_suffix(".py").unwrap_or(f).replace('/', "."), f))
        .collect();
    let mut out = Vec::new();
    for case in cases {
        let placed = match &case.file {
            Some(file) => {
                let file = file.trim_start_matches("./").to_string();
                let module = file.strip_suffix(".py").unwrap_or(&file).replace('/', ".");
                let classes = case
                    .classname
                    .strip_prefix(&module)
                    .map(|rest| rest.trim_start_matches('.').to_string())
                    .unwrap_or_default();
                Some((file, classes))
            }
            None => dotted
                .iter()
                .filter(|(d, _)| {
                    case.classname == *d || case.classname.starts_with(&format!("{d}."))
                })
                .max_by_key(|(d, _)| d.len())
                .map(|(d, f)| {
                    let classes = case.classname[d.len()..].trim_start_matches('.');
                    ((*f).clone(), classes.to_string())
                }),
        };
        // pytest writes a file that failed to collect as a case with no classname, named by
        // the file's dotted path: the error is the file's own.
        let collect_error = (case.file.is_none() && case.classname.is_empty())
            .then(|| dotted.iter().find(|(d, _)| *d == case.name))
            .flatten();
        let (id, file) = match placed {
            _ if collect_error.is_some() => {
                let file = collect_error.map(|(_, f)| (*f).clone());
                (file.clone().unwrap_or_default(), file)
            }
            Some((file, classes)) => {
                let mut id = file.clone();
                for part in classes.split('.').filter(|p| !p.is_empty()) {
                    id.push_str("::");
                    id.push_str(part);
                }
                id.push_str("::");
                id.push_str(&case.name);
                (id, Some(file))
            }
            None if case.classname.is_empty() => (case.name.clone(), None),
            None => (format!("{}::{}", case.classname, case.name), None),
        };
        for attempt in 1..=case.earlier_failures {
            out.push(TestResult {
                id: id.clone(),
                file: file.clone(),
                outcome: TestOutcome::Failed,
                duration_ms: 0,
                attempt,
            });
        }
        out.push(TestResult {
            id,
            file,
            outcome: case.outcome,
            duration_ms: case.duration_ms,
            attempt: case.earlier_failures + 1,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_file_with_no_root_element_is_no_report() {
        for text in ["not xml", "", "<?xml version=\"1.0\"?>\n"] {
            assert!(
                matches!(super::parse(text.as_bytes()), Err(super::Error::Empty)),
                "{text:?}"
            );
        }
        assert!(super::parse(b"<testsuites/>").unwrap().is_empty());
    }

    use super::*;

    /// `--continue-on-collection-errors`: a file that failed to collect is placed on itself.
    #[test]
    fn a_collection_error_is_its_files() {
        let xml = r#"<testsuite name="pytest"><testcase classname="" name="tests.test_checkout" time="0.000"><error message="collection failure">boom</error></testcase><testcase classname="" name="conftest" time="0"><error message="x">y</error></testcase></testsuite>"#;
        let files: BTreeSet<String> = ["tests/test_checkout.py".to_string()].into();
        let r = results(&parse(xml.as_bytes()).unwrap(), &files);
        assert_eq!(r[0].id, "tests/test_checkout.py");
        assert_eq!(r[0].file.as_deref(), Some("tests/test_checkout.py"));
        assert_eq!(r[0].outcome, TestOutcome::Error);
        assert_eq!((r[1].id.as_str(), r[1].file.as_deref()), ("conftest", None));
    }

    const PYTEST: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5" time="0.1"><testcase classname="tests.test_a" name="test_a[1]" time="0.001" /><testcase classname="tests.test_a" name="test_a[2]" time="0.003"><failure message="assert 2 == 1">x = 2 &gt; 1</failure></testcase><testcase classname="tests.test_a.TestC" name="test_b" time="0.250"><skipped type="pytest.skip" message="later" /></testcase><testcase classname="tests.v1.2.test_dots" name="test_d" time="0"><error message="fixture">boom</error></testcase><testcase classname="tests.test_a" name="test_flaky" time="0.002"><rerunFailure message="once">x</rerunFailure></testcase></testsuite></testsuites>"#;

    #[test]
    fn pytest_cases_are_placed_on_their_test_files() {
        let files: BTreeSet<String> = ["tests/test_a.py", "tests/v1.2/test_dots.py"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let results = results(&parse(PYTEST.as_bytes()).unwrap(), &files);
        let got: Vec<(&str, TestOutcome, u64, u32)> = results
            .iter()
            .map(|r| (r.id.as_str(), r.outcome, r.duration_ms, r.attempt))
            .collect();
        assert_eq!(
            got,
            [
                ("tests/test_a.py::test_a[1]", TestOutcome::Passed, 1, 1),
                ("tests/test_a.py::test_a[2]", TestOutcome::Failed, 3, 1),
                (
                    "tests/test_a.py::TestC::test_b",
                    TestOutcome::Skipped,
                    250,
                    1
                ),
                ("tests/v1.2/test_dots.py::test_d", TestOutcome::Error, 0, 1),
                ("tests/test_a.py::test_flaky", TestOutcome::Failed, 0, 1),
                ("tests/test_a.py::test_flaky", TestOutcome::Passed, 2, 2),
            ]
        );
        assert!(results.iter().all(|r| r.file.is_some()));
    }

    #[test]
    fn xunit1_files_and_what_is_not_junit() {
        let x1 = r#"<testsuite name="pytest"><testcase classname="tests.test_a.TestC" file="tests/test_a.py" line="4" name="test_b" time="1.5"/></testsuite>"#;
        let r = results(&parse(x1.as_bytes()).unwrap(), &BTreeSet::new());
        assert_eq!(r[0].id, "tests/test_a.py::TestC::test_b");
        assert_eq!(r[0].duration_ms, 1500);
        let e = parse(b"<html><body/></html>").unwrap_err().to_string();
        assert_eq!(
            e,
            "not a JUnit report: its root element is `html`, not `testsuites` or `testsuite`"
        );
        let cut = &PYTEST[..PYTEST.len() - 40];
        assert!(parse(cut.as_bytes()).is_err());
        assert!(parse(b"<testsuite><testcase name=\"x\"").is_err());
    }
}
