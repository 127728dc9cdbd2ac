//! `--recommendations FILE` (`{version: 1, context, selectedFiles}`): the test files it names
//! join the selection with a reason of their own and really run; it never removes one; a
//! context that is not this tree's source and configuration is refused (exit 10) naming the
//! field; a hostile path never becomes an option nor leaves the tree.

use crate::support::{TestRepo, selected, strings, text};
use serde_json::{Value, json};

/// The shop with a money change in its last commit: the money tests are selected, and
/// `tests/test_prices.py` is not.
pub(crate) fn shop_with_money_changed() -> TestRepo {
    let t = TestRepo::from_fixture("shop");
    t.append("src/shop/money.py", "\n# reviewed\n");
    t.commit("money");
    t
}

pub(crate) const RANGE: &str = "HEAD~1...HEAD";

/// This tree's context, as the frozen decision of the same gate holds it.
pub(crate) fn context(t: &TestRepo) -> Value {
    context_under(t, &[])
}

/// This tree's context under the variables `vars` (those a runner's toolchain is asked under).
fn context_under(t: &TestRepo, vars: &[(&str, std::ffi::OsString)]) -> Value {
    let file = t.root.parent().unwrap().join("decision.json");
    let out = t
        .gate(&["--affected", RANGE, "--list", "--decision-out"])
        .arg(&file)
        .envs(vars.iter().map(|(k, v)| (*k, v)))
        .output()
        .unwrap();
    assert!(file.is_file(), "{}", text(&out));
    let d: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    json!({
        "repository": d["repository"],
        "revision": d["commit"],
        "tree": d["tree"],
        "configDigest": d["config_digest"],
        "lockDigest": d["lock_digest"],
        "environmentDigest": d["environment_digest"],
    })
}

/// Writes `doc` beside the repository; its path.
fn write(t: &TestRepo, doc: &Value) -> String {
    let file = t.root.parent().unwrap().join("recommendations.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    file.display().to_string()
}

pub(crate) fn recommending(context: &Value, files: &[&str]) -> Value {
    let files: Vec<Value> = files
        .iter()
        .map(|f| json!({"file": f, "project": "unit", "pool": "forks"}))
        .collect();
    json!({"version": 1, "context": context, "selectedFiles": files})
}

#[test]
fn a_recommended_test_is_added_with_its_reason_and_runs() {
    let t = shop_with_money_changed();
    let graph = selected(&t.report(&["--affected", RANGE]));
    assert!(!graph.contains(&"tests/test_prices.py".to_string()));
    let file = write(&t, &recommending(&context(&t), &["tests/test_prices.py"]));
    let r = t.report(&["--affected", RANGE, "--recommendations", &file]);
    crate::plans::validate("report.schema.json", &r);
    let now = selected(&r);
    assert!(graph.iter().all(|g| now.contains(g)), "{r:#}");
    let prices = r["selected"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["path"] == "tests/test_prices.py")
        .unwrap_or_else(|| panic!("not added: {r:#}"));
    assert_eq!(
        strings(&prices["reasons"]),
        [format!("recommended by {file}")]
    );
    assert!(strings(&r["command"]).contains(&"./tests/test_prices.py".to_string()));
    let out = t
        .gate(&["--affected", RANGE, "--recommendations", &file])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("test_prices.py"), "{}", text(&out));
}

#[test]
fn recommendations_never_remove_a_selected_test() {
    let t = shop_with_money_changed();
    let graph = t.report(&["--affected", RANGE]);
    let ctx = context(&t);
    for files in [&[][..], &["tests/test_money.py"][..]] {
        let file = write(&t, &recommending(&ctx, files));
        let r = t.report(&["--affected", RANGE, "--recommendations", &file]);
        assert_eq!(selected(&r), selected(&graph), "{files:?}: {r:#}");
        assert_eq!(r["command"], graph["command"], "{files:?}");
    }
}

#[test]
fn a_context_of_other_source_or_configuration_is_refused_naming_the_field() {
    let t = shop_with_money_changed();
    let ctx = context(&t);
    for (field, value) in [
        ("revision", json!("0".repeat(40))),
        ("tree", json!("1".repeat(40))),
        ("configDigest", json!("2".repeat(64))),
        ("environmentDigest", Value::Null),
        ("repository", json!("https://example.com/other/repo")),
    ] {
        let mut other = ctx.clone();
        other[field] = value;
        let file = write(&t, &recommending(&other, &["tests/test_prices.py"]));
        let out = t
            .gate(&["--affected", RANGE, "--recommendations", &file])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(10), "{field}: {}", text(&out));
        assert!(stderr.contains(&format!("context.{field}")), "{stderr}");
        assert!(!stderr.contains("passed"), "nothing ran: {stderr}");
    }
    let mut later = recommending(&ctx, &[]);
    later["version"] = json!(2);
    let out = t
        .gate(&["--affected", RANGE, "--recommendations", &write(&t, &later)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(10), "{}", text(&out));
    assert!(text(&out).contains("version 2"), "{}", text(&out));
}

#[test]
fn a_hostile_recommended_path_never_becomes_an_option_nor_leaves_the_tree() {
    let t = shop_with_money_changed();
    let ctx = context(&t);
    for escaping in ["../etc/passwd", "/etc/passwd", "tests/../../x.py", ""] {
        let file = write(&t, &recommending(&ctx, &[escaping]));
        let out = t
            .gate(&["--affected", RANGE, "--recommendations", &file])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(10), "{escaping:?}: {}", text(&out));
        assert!(
            text(&out).contains("not a repository-relative path"),
            "{}",
            text(&out)
        );
    }
    let file = write(&t, &recommending(&ctx, &["-x", "--co", "README.md"]));
    let r = t.report(&["--affected", RANGE, "--recommendations", &file]);
    let command = strings(&r["command"]);
    assert!(
        !command.iter().any(|w| w == "-x" || w == "--co"),
        "{command:?}"
    );
    let notes = strings(&r["notes"]).join("\n");
    assert!(
        notes.contains("recommended -x is not a test file of this tree"),
        "{notes}"
    );
    assert!(
        notes.contains("recommended README.md is not a test file"),
        "{notes}"
    );
}

#[test]
fn a_refusal_stays_refused_and_an_inert_change_stays_idle() {
    let t = TestRepo::from_fixture("shop");
    t.append("scripts/deploy.ini", "port = 22\n");
    t.append("src/shop/money.py", "\n");
    t.commit("script");
    let file = write(&t, &recommending(&context(&t), &["tests/test_prices.py"]));
    let out = t
        .gate(&["--affected", RANGE, "--recommendations", &file])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        !text(&out).contains("passed"),
        "nothing ran: {}",
        text(&out)
    );

    t.append("README.md", "\nMore words.\n");
    t.commit("words");
    let file = write(&t, &recommending(&context(&t), &["tests/test_prices.py"]));
    let r = t.report(&["--affected", RANGE, "--recommendations", &file]);
    assert_eq!(r["verdict"], "inert", "{r:#}");
    assert!(selected(&r).is_empty(), "{r:#}");
    assert!(
        strings(&r["notes"])
            .join("\n")
            .contains("recommended tests/test_prices.py is not run: every change is inert"),
        "{r:#}"
    );
}

#[test]
fn a_recommended_go_test_file_adds_its_package() {
    let t = TestRepo::from_fixture("goshop");
    t.append("ws/shop/web/templates/index.html", "<p>more</p>\n");
    t.commit("template");
    let vars = crate::golang::go_vars();
    let ctx = context_under(&t, &vars);
    let file = write(&t, &recommending(&ctx, &["rep/app/app_test.go"]));
    let out = crate::golang::gate(
        &t,
        &[
            "--affected",
            RANGE,
            "--json",
            "--list",
            "--recommendations",
            &file,
        ],
    );
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    crate::plans::validate("report.schema.json", &r);
    assert_eq!(selected(&r), ["./rep/app", "./ws/shop/web"], "{r:#}");
    let argvs: Vec<Vec<String>> = r["go_commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| strings(&c["argv"]))
        .collect();
    assert!(
        argvs.contains(&vec!["go".into(), "test".into(), "./app".into()]),
        "{argvs:?}"
    );
}
