//! pytest's command lines, and its exit codes read with the probe's record.

use super::probe::{ProbeFile, whole};
use super::*;

fn set(files: &[&str]) -> BTreeSet<String> {
    files.iter().map(|f| f.to_string()).collect()
}

#[test]
fn paths_are_given_as_paths_and_unpassable_names_go_through_their_folder() {
    let files = set(&[
        "-kx_test.py",
        "tests/__init__.py",
        "tests/conftest.py",
        "tests/data/x.json",
        "tests/test_[x].py",
        "tests/test_a.py",
        "tests/test_b.py",
    ]);
    let base = vec!["pytest".to_string()];
    let c = Command::new(base.clone(), &["-kx_test.py", "tests/test_a.py"], &files);
    assert_eq!(c.argv(), ["pytest", "./-kx_test.py", "./tests/test_a.py"]);
    let c = Command::new(base, &["tests/test_[x].py", "tests/test_a.py"], &files);
    assert_eq!(
        c.argv(),
        [
            "pytest",
            "--ignore=./tests/data",
            "--ignore=./tests/test_b.py",
            "./tests",
            "./tests/test_a.py"
        ]
    );
    // The whole suite goes on past a file that fails to collect; a wrapper is not told.
    assert_eq!(
        Command::whole_suite(vec!["pytest".into()]).argv(),
        ["pytest", "--continue-on-collection-errors"]
    );
    assert_eq!(
        Command::whole_suite(vec!["tox".into(), "-e".into(), "py".into()]).argv(),
        ["tox", "-e", "py"]
    );
}

/// (file, collected, items, deselected, failed); what is neither deselected nor failed ran.
fn probe(files: &[(&str, bool, u64, u64, u64)]) -> Probe {
    Probe {
        files: files
            .iter()
            .map(|&(p, collected, items, deselected, failed)| {
                (
                    p.to_string(),
                    ProbeFile {
                        collected,
                        error: false,
                        items,
                        deselected,
                        selected: items - deselected,
                        failed,
                        passed: items - deselected - failed,
                    },
                )
            })
            .collect(),
        opened: BTreeMap::new(),
        read_by: BTreeMap::new(),
        loaded: BTreeMap::new(),
        env: BTreeMap::new(),
        outside: Default::default(),
        unrun: Default::default(),
        moved: BTreeMap::new(),
        ambiguous: BTreeSet::new(),
    }
}

#[test]
fn a_trace_is_whole_only_when_every_test_of_the_whole_file_ran_and_passed() {
    let files = set(&["t/test_a.py", "t/test_b.py"]);
    let file = Command::new(vec!["pytest".into()], &["t/test_a.py"], &files);
    let node = Command::new(vec!["pytest".into()], &["t/test_a.py::test_x"], &files);
    // (items, deselected, failed, passed)
    let ran = |(items, deselected, failed, passed): (u64, u64, u64, u64)| {
        let mut p = probe(&[("t/test_a.py", true, items, deselected, failed)]);
        p.files.get_mut("t/test_a.py").unwrap().passed = passed;
        p
    };
    assert!(whole(&file, &ran((2, 0, 0, 2)), "t/test_a.py"));
    for (case, why) in [
        ((2, 1, 0, 1), "a deselected test"),
        ((2, 0, 1, 1), "a failed test"),
        (
            (2, 0, 0, 1),
            "a test that never ran (-x, an interruption) or was skipped",
        ),
        ((0, 0, 0, 0), "no test"),
    ] {
        assert!(!whole(&file, &ran(case), "t/test_a.py"), "{why}");
    }
    assert!(
        !whole(&node, &ran((1, 0, 0, 1)), "t/test_a.py"),
        "a node id"
    );
    assert!(
        !whole(&file, &ran((2, 0, 0, 2)), "t/test_b.py"),
        "never collected"
    );
}

#[test]
fn exit_codes_are_read_with_what_pytest_collected() {
    let c = Command::new(
        vec!["pytest".into()],
        &["t/test_a.py", "t/test_b.py"],
        &set(&["t/test_a.py", "t/test_b.py"]),
    );
    let is = |r: &Ran| match r.outcome {
        Outcome::Passed => "passed",
        Outcome::Failed(_) => "failed",
        Outcome::Broken(_) => "broken",
        Outcome::NothingRan => "nothing_ran",
    };
    let both = probe(&[
        ("t/test_a.py", true, 2, 0, 0),
        ("t/test_b.py", true, 0, 0, 0),
    ]);
    let r = judge(Some(0), Some(&both), &c);
    assert_eq!(is(&r), "passed");
    assert_eq!(r.notes, ["t/test_b.py yielded no test: it holds none"]);
    let deselected = probe(&[
        ("t/test_a.py", true, 2, 2, 0),
        ("t/test_b.py", true, 1, 1, 0),
    ]);
    let r = judge(Some(5), Some(&deselected), &c);
    assert_eq!(is(&r), "passed");
    assert!(
        r.notes.iter().all(|n| n.contains("deselected")),
        "{:?}",
        r.notes
    );
    let one = probe(&[("t/test_a.py", true, 2, 0, 0)]);
    let r = judge(Some(5), Some(&one), &c);
    assert_eq!(is(&r), "broken");
    assert!(r.notes[0].contains("did not collect 1 selected file(s): t/test_b.py"));
    assert_eq!(is(&judge(Some(0), None, &c)), "broken");
    assert_eq!(is(&judge(Some(1), Some(&both), &c)), "broken");
    let failing = probe(&[
        ("t/test_a.py", true, 2, 0, 1),
        ("t/test_b.py", true, 1, 0, 0),
    ]);
    assert_eq!(is(&judge(Some(1), Some(&failing), &c)), "failed");
    assert_eq!(is(&judge(Some(2), Some(&both), &c)), "broken");
    assert_eq!(is(&judge(None, Some(&both), &c)), "broken");
}

/// A result under an id no selected file defines breaks the run, whatever it was; a user's
/// arguments that left no test to run are no pass; none of it otherwise changes a verdict.
#[test]
fn foreign_ids_break_the_run_and_narrowed_to_nothing_is_no_pass() {
    let broken_by = |ran: Ran| match (ran.outcome, ran.notes.first()) {
        (Outcome::Broken(code), Some(note)) => Some((code, note.clone())),
        _ => None,
    };
    let (code, note) =
        broken_by(super::probe::placed(passed(Vec::new()), &["X.t::a".into()])).expect("broken");
    assert_eq!(code, None);
    assert!(note.contains("1 result(s) under ids no selected file defines alone (`X.t::a`)"));
    let (code, _) =
        broken_by(super::probe::placed(failed(), &["a".into(), "b".into()])).expect("broken");
    assert_eq!(code, Some(1));
    assert!(matches!(
        super::probe::placed(failed(), &[]).outcome,
        Outcome::Failed(1)
    ));
    let mut c = Command::new(
        vec!["pytest".into()],
        &["t/test_a.py"],
        &set(&["t/test_a.py"]),
    );
    let deselected = probe(&[("t/test_a.py", true, 2, 2, 0)]);
    assert!(matches!(
        judge(Some(5), Some(&deselected), &c).outcome,
        Outcome::Passed
    ));
    c.extra = vec!["-k".into(), "nomatch".into()];
    let r = judge(Some(5), Some(&deselected), &c);
    assert!(matches!(r.outcome, Outcome::NothingRan), "{:?}", r.notes);
    assert!(r.notes[0].contains("`-k nomatch` left none of the selected tests"));
}
