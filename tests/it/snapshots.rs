//! The human output and the verdict rows, pinned as snapshots (insta): a change to what gate
//! says shows in review as a diff of these files. Each repository's commits have fixed dates,
//! so its commit ids are the same on every machine and in every test order.

use crate::support::TestRepo;

/// A change of each kind: a module (resolved), a doc (inert), a dependency file (named_full)
/// and a script nothing reaches (refused).
fn mixed_change() -> TestRepo {
    let t = TestRepo::from_fixture("shop");
    t.append("src/shop/money.py", "\nDOLLAR = 1\n");
    t.append("README.md", "more\n");
    t.write("requirements.txt", "requests==2.0\n");
    t.append("scripts/deploy.ini", "port = 22\n");
    t.commit("a change of each kind");
    t
}

#[test]
fn the_human_report_of_a_mixed_change() {
    let t = mixed_change();
    let out = t
        .gate(&[
            "--affected",
            "HEAD~1...HEAD",
            "--list",
            "--affected-decision",
            "OPS-1 reviewed",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The decision line carries who and when: the rest is the snapshot.
    let stable: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with("decision: "))
        .collect();
    insta::assert_snapshot!(stable.join("\n"));
}

#[test]
fn the_verdict_rows_of_a_mixed_change() {
    let t = mixed_change();
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    insta::assert_json_snapshot!(r["files"]);
}
