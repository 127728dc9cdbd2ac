//! `gate report`: the pull request comment of a recorded run (rendered by a CommonMark parser,
//! its tables counted; pinned as a snapshot), its size bound under thousands of huge hostile
//! names, its escaping, the step summary, the annotations' cap and escaping, the JUnit report
//! of the verdicts, and an unknown run named.

use crate::history::{Kind, Store, p, record};
use crate::support::{TestRepo, text};
use std::path::PathBuf;

const MONEY: &str = "tests/test_money.py::test_to_cents";
const CART: &str = "tests/test_cart.py::test_total";
const PLUGINS: &str = "tests/test_plugins.py::test_discount";

/// A JUnit report (xunit1, as pytest writes it) of `cases`: (test file, name, outcome); the
/// name is XML text, so a control character is a character reference (`&#27;`).
fn junit(t: &TestRepo, name: &str, cases: &[(&str, String, &str)]) -> PathBuf {
    let mut xml = String::from("<?xml version=\"1.0\"?><testsuites><testsuite name=\"pytest\">");
    for (file, test, outcome) in cases {
        let classname = file.trim_end_matches(".py").replace('/', ".");
        let body = match *outcome {
            "passed" => "",
            "failed" => "<failure message=\"boom\">assert False</failure>",
            other => panic!("{other}"),
        };
        xml.push_str(&format!(
            "<testcase classname=\"{classname}\" name=\"{test}\" file=\"{file}\" time=\"0.250\">{body}</testcase>"
        ));
    }
    xml.push_str("</testsuite></testsuites>");
    let path = t.root.parent().unwrap().join(format!("{name}.xml"));
    std::fs::write(&path, xml).unwrap();
    path
}

fn case(id: &'static str, outcome: &'static str) -> (&'static str, String, &'static str) {
    let (file, name) = id.split_once("::").unwrap();
    (file, name.to_string(), outcome)
}

fn rec(t: &TestRepo, store: &Store, run: &str, attempt: &str, cases: &[(&str, String, &str)]) {
    let xml = junit(t, &format!("{run}-{attempt}"), cases);
    let args = [
        "--junit",
        p(&xml),
        "--run",
        run,
        "--attempt",
        attempt,
        "--leg",
        "linux",
    ];
    let out = record(t, store, &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// The shop on `master` with test_money failing there; a feature commit changing
/// `src/shop/money.py` (which selects test_cart) and a script nothing reaches (refused).
fn feature(t: &TestRepo, store: &Store) {
    rec(
        t,
        store,
        "m1",
        "1",
        &[case(MONEY, "failed"), case(CART, "passed")],
    );
    t.branch("feature");
    t.checkout("feature");
    t.append("src/shop/money.py", "\n# rounding reviewed\n");
    t.append("scripts/deploy.ini", "port = 22\n");
    t.commit("money and deploy");
}

/// `gate report ARGS --db STORE`, outside any GitHub workflow unless `env` says so.
fn report(t: &TestRepo, store: &Store, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let mut all = vec!["report"];
    all.extend(args);
    all.extend(["--db", store.url.as_str()]);
    let mut cmd = t.gate(&all);
    cmd.env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_WORKFLOW");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (out.status.code().unwrap(), text(&out))
}

/// The markdown as HTML, by a CommonMark parser with GitHub's tables: each table's rows, each
/// row's cell count.
fn tables(markdown: &str) -> (String, Vec<Vec<usize>>) {
    use pulldown_cmark::{Event, Options, Parser, Tag};
    let parser = Parser::new_ext(markdown, Options::ENABLE_TABLES);
    let events: Vec<Event<'_>> = parser.collect();
    let mut tables: Vec<Vec<usize>> = Vec::new();
    for e in &events {
        match e {
            Event::Start(Tag::Table(_)) => tables.push(Vec::new()),
            Event::Start(Tag::TableHead | Tag::TableRow) => tables.last_mut().unwrap().push(0),
            Event::Start(Tag::TableCell) => *tables.last_mut().unwrap().last_mut().unwrap() += 1,
            _ => {}
        }
    }
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    (html, tables)
}

on_both!(the_comment_of_a_recorded_run: comment_sqlite, comment_postgres);
/// A run with a new regression, a test failing on main and a flaky test: the marker carries
/// the workflow, head and attempt; the triage table opens with the regression and its
/// evidence; every table renders with its columns; the step summary gets the same text
/// appended after what was there.
fn the_comment_of_a_recorded_run(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    feature(&t, &store);
    rec(&t, &store, "9", "1", &[case(PLUGINS, "passed")]);
    rec(
        &t,
        &store,
        "9",
        "2",
        &[
            case(MONEY, "failed"),
            case(CART, "failed"),
            case(PLUGINS, "failed"),
        ],
    );
    let summary = t.root.parent().unwrap().join("step-summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let (code, out) = report(
        &t,
        &store,
        &["--markdown", "--run", "9"],
        &[
            ("GITHUB_WORKFLOW", "CI pr"),
            ("GITHUB_STEP_SUMMARY", p(&summary)),
        ],
    );
    assert_eq!(code, 0, "{out}");
    let sha = git2::Repository::open(&t.root)
        .unwrap()
        .head()
        .unwrap()
        .target()
        .unwrap()
        .to_string();
    let first = out.lines().next().unwrap();
    assert_eq!(
        first,
        format!("<!-- gate-report workflow=CI%20pr head={sha} attempt=2 -->")
    );
    let (html, tables) = tables(&out);
    // Triage: header and 3 rows of 5 cells, the new regression first.
    assert_eq!(tables[0], vec![5; 4], "{out}");
    let triage = html.split("<h3>Triage</h3>").nth(1).unwrap();
    let first_row = triage.split("<tbody>").nth(1).unwrap();
    assert!(
        first_row
            .trim_start()
            .starts_with("<tr><td>new_regression</td>"),
        "{first_row}"
    );
    assert!(html.contains("tests/test_cart.py tests changed src/shop/money.py"));
    assert!(html.contains("failing on main on linux since "));
    // Not run: the selected units no leg recorded a result for, never listed as ran.
    assert_eq!(tables[1], vec![2; 3], "{out}");
    let not_run = html.split("<h3>Not run</h3>").nth(1).unwrap();
    let not_run = not_run.split("<h3>").next().unwrap();
    for unit in ["tests/test_checkout.py", "tests/test_patch.py"] {
        assert!(not_run.contains(&format!("<td>{unit}</td>")), "{html}");
        let ran = html.split("<h3>Tests that ran</h3>").nth(1).unwrap();
        assert!(!ran.split("<h3>").next().unwrap().contains(unit), "{html}");
    }
    assert!(
        out.contains("3 test unit(s) ran, 2 not run, 0 reused"),
        "{out}"
    );
    // Changed paths: both rows with their verdicts, the script refused.
    assert_eq!(tables[2], vec![3; 3], "{out}");
    assert!(
        html.contains("<td>scripts/deploy.ini</td><td>refused</td>"),
        "{html}"
    );
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<h3>Triage</h3>\n<p>None"), "{html}");
    let kept = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(kept, format!("earlier step\n{out}"));
    if matches!(kind, Kind::Sqlite) {
        let since = regex::Regex::new(r"since [0-9TZ:+-]+").unwrap();
        let stable = since.replace_all(&out, "since <recorded>");
        insta::assert_snapshot!(
            "the_comment_of_a_recorded_run",
            stable.replace(&sha, "<head>")
        );
    }
}

/// 10,000 failing tests of 1,000-character hostile names (a cell boundary, HTML, a newline
/// that would end the row, a terminal escape): the comment stays under GitHub's 65,536
/// characters, cut between rows with the count left out, every row whole.
#[test]
fn thousands_of_huge_hostile_names_stay_under_the_comment_limit() {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(Kind::Sqlite, &t);
    feature(&t, &store);
    let hostile = "a|b&lt;script&gt;alert(1)&lt;/script&gt;`*_[x](y)&#10;| forged | row |&#27;[2J";
    let cases: Vec<_> = (0..10_000)
        .map(|n| {
            let name = format!("test_{n:05}_{}", hostile.repeat(12));
            ("tests/test_cart.py", name, "failed")
        })
        .collect();
    rec(&t, &store, "9", "1", &cases);
    let (code, out) = report(&t, &store, &["--markdown"], &[]);
    assert_eq!(code, 0, "{}", &out[..out.len().min(2000)]);
    let chars = out.chars().count();
    assert!(chars < 65_536, "{chars} characters");
    assert!(out.contains(" more not shown."), "cut without a count");
    assert!(!out.chars().any(|c| c.is_control() && c != '\n'));
    let (html, tables) = tables(&out);
    assert!(!html.contains("<script"));
    assert!(tables[0].len() > 10, "{:?}", tables[0].len());
    assert!(
        tables[0].iter().all(|cells| *cells == 5),
        "a row was cut or split"
    );
    let cut: usize = out
        .lines()
        .find_map(|l| {
            l.strip_prefix("… and ")?
                .strip_suffix(" more not shown.")?
                .parse()
                .ok()
        })
        .unwrap();
    assert_eq!(
        cut + tables[0].len() - 1,
        10_000,
        "rows shown + rows counted"
    );
    eprintln!(
        "worst case: {chars} characters, {} bytes, {} triage rows shown",
        out.len(),
        tables[0].len() - 1
    );
}

on_both!(annotations_are_capped_and_escaped: annotations_sqlite, annotations_postgres);
/// 13 new regressions and 12 refused paths: ten errors (file and the line of the test's
/// `def`), ten warnings, one line counting the rest; values escaped per GitHub's rules. The
/// JUnit report of the verdicts fails the regressions and the refusals.
fn annotations_are_capped_and_escaped(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    rec(&t, &store, "m1", "1", &[case(CART, "passed")]);
    t.branch("feature");
    t.checkout("feature");
    t.append("src/shop/money.py", "\n# rounding reviewed\n");
    for n in 0..12 {
        t.write(&format!("scripts/s{n:02}.ini"), "port = 22\n");
    }
    t.commit("money and scripts");
    let mut cases = vec![case(CART, "failed")];
    cases.extend((0..12).map(|n| {
        let name = format!("test_z{n:02}[a,b:50%&#10;::error::forged]");
        ("tests/test_cart.py", name, "failed")
    }));
    rec(&t, &store, "9", "1", &cases);
    let out_xml = t.root.parent().unwrap().join("verdicts.xml");
    let (code, out) = report(&t, &store, &["--annotations", "--junit", p(&out_xml)], &[]);
    assert_eq!(code, 0, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    let errors: Vec<&&str> = lines.iter().filter(|l| l.starts_with("::error ")).collect();
    let warnings: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("::warning "))
        .collect();
    assert_eq!((errors.len(), warnings.len()), (10, 10), "{out}");
    assert_eq!(lines.len(), 21, "{out}");
    assert_eq!(
        lines[20],
        "gate: 3 more new regression(s) and 2 more refused path(s) not annotated (GitHub keeps 10 of each per step); `gate triage` lists them all"
    );
    let def = std::fs::read_to_string(t.root.join("tests/test_cart.py"))
        .unwrap()
        .lines()
        .position(|l| l.starts_with("def test_total("))
        .unwrap()
        + 1;
    assert!(
        lines.contains(&format!("::error file=tests/test_cart.py,line={def},title=new regression%3A tests/test_cart.py%3A%3Atest_total::[linux] tests/test_cart.py tests changed src/shop/money.py").as_str()),
        "{out}"
    );
    // A forged command inside a name stays inside its property: `,` `:` `%` and the newline
    // are escaped, so each line is one command.
    assert!(
        lines
            .iter()
            .any(|l| l.contains("test_z00[a%2Cb%3A50%25\\n%3A%3Aerror%3A%3Aforged]")),
        "{out}"
    );
    assert!(
        lines.iter().all(|l| !l.contains("::error::forged")),
        "{out}"
    );
    assert!(
        warnings[0].starts_with("::warning file=scripts/s00.ini,title=gate refused this change::"),
        "{out}"
    );
    let xml = std::fs::read_to_string(&out_xml).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 13 + 13, "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 13 + 12, "{xml}");
    assert!(xml.contains("<testsuite name=\"gate.triage\" tests=\"13\" failures=\"13\">"));
}

#[test]
fn an_unknown_run_is_named() {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(Kind::Sqlite, &t);
    rec(&t, &store, "m1", "1", &[case(CART, "passed")]);
    let (code, out) = report(&t, &store, &["--markdown", "--run", "nope"], &[]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("run nope: nothing recorded under that id"),
        "{out}"
    );
    let (code, out) = report(&t, &store, &[], &[]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("--markdown, --annotations or --junit FILE"),
        "{out}"
    );
}

on_both!(the_comment_of_a_real_gated_run: real_sqlite, real_postgres);
/// A real gate run, recorded (`--record`, the CI run id and attempt from GitHub's variables),
/// then a shadow run of the whole suite at the same commit: the comment names the rows' reasons
/// from the decision frozen before the run, the new regressions the broken module made, the
/// shadow compare and real durations.
fn the_comment_of_a_real_gated_run(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    t.branch("feature");
    t.checkout("feature");
    t.append("src/shop/money.py", crate::support::BREAK_MONEY);
    t.commit("break money");
    let gated = t
        .gate(&["--affected", "master...HEAD", "--record", "--leg", "linux"])
        .env("GATE_DB", &store.url)
        .env("GITHUB_RUN_ID", "77")
        .env("GITHUB_RUN_ATTEMPT", "3")
        .output()
        .unwrap();
    assert_eq!(gated.status.code(), Some(1), "{}", text(&gated));
    let shadow = t
        .gate(&["shadow", "master...HEAD"])
        .env("GATE_DB", &store.url)
        .env_remove("GITHUB_RUN_ID")
        .output()
        .unwrap();
    assert!(shadow.status.code().is_some(), "{}", text(&shadow));
    let (code, out) = report(&t, &store, &["--markdown", "--run", "77"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with("<!-- gate-report workflow=gate head="),
        "{out}"
    );
    assert!(
        out.lines().next().unwrap().ends_with(" attempt=3 -->"),
        "{out}"
    );
    let (html, tables) = tables(&out);
    assert!(
        tables[0].len() > 1 && tables[0].iter().all(|c| *c == 5),
        "{out}"
    );
    assert!(html.contains("<td>new_regression</td>"), "{out}");
    assert!(
        html.contains("<td>src/shop/money.py</td><td>resolved</td><td>selects "),
        "the row's reason from the frozen decision: {out}"
    );
    assert!(html.contains("failing in the whole suite:"), "{out}");
    assert!(!html.contains("0 result(s)"), "{out}");
    // The guide shows this comment: the same up to the durations, which are this run's, and
    // the decision's id, which hashes this machine's interpreter.
    let guide = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/ci.md"),
    )
    .unwrap();
    let shown = guide
        .split("```markdown\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap();
    let decision = regex::Regex::new(r"decision [0-9a-f]{12}").unwrap();
    let stable = |text: &str| {
        let text = text.split("### Durations").next().unwrap().to_string();
        decision.replace_all(&text, "decision <id>").into_owned()
    };
    assert_eq!(
        stable(shown),
        stable(&out),
        "docs/src/ci.md's comment drifted"
    );
}

/// A gate after a pass of the same tests: the ledger's reuses are listed apart, with where
/// they passed, and are not among the tests that ran; the earlier run shows no reuse.
#[test]
fn reused_passes_are_listed_apart() {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(Kind::Sqlite, &t);
    t.branch("feature");
    t.checkout("feature");
    t.append("src/shop/money.py", "\n# reviewed\n");
    t.commit("money");
    let gate = |run: &str| {
        let out = t
            .gate(&["--affected", "master...HEAD", "--record", "--leg", "linux"])
            .env("GATE_DB", &store.url)
            .env("GITHUB_RUN_ID", run)
            .env("GITHUB_RUN_ATTEMPT", "1")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    };
    gate("1");
    // Only test_cart's inputs move: it runs, the other three money tests are reused.
    t.append("tests/test_cart.py", "\n# reviewed\n");
    t.commit("cart");
    gate("2");
    let (code, out) = report(&t, &store, &["--markdown", "--run", "2"], &[]);
    assert_eq!(code, 0, "{out}");
    let (html, tables) = tables(&out);
    let section = |title: &str| {
        let from = html.split(&format!("<h3>{title}</h3>")).nth(1).unwrap();
        from.split("<h3>").next().unwrap().to_string()
    };
    let reused = section("Reused passes");
    assert_eq!(reused.matches("<tr><td>tests/test_").count(), 3, "{out}");
    assert!(reused.contains(" on linux</td>"), "{out}");
    let ran = section("Tests that ran");
    assert_eq!(ran.matches("<tr><td>tests/test_").count(), 1, "{out}");
    assert!(ran.contains("<td>tests/test_cart.py</td>"), "{out}");
    assert!(tables.iter().all(|t| t.iter().all(|c| *c == t[0])));
    let (_, first) = report(&t, &store, &["--markdown", "--run", "1"], &[]);
    assert!(first.contains("### Reused passes\n\nNone."), "{first}");
    assert!(
        first.contains("| tests/test\\_money.py | src/shop/money.py |"),
        "{first}"
    );
}
