//! `--recommendations FILE` against a generated space of hostile files (seeded, the same on
//! every machine): unknown fields at every level, wrong types and nesting, missing and repeated
//! fields, other versions, truncated and non-UTF-8 bytes, trailing bytes, paths that leave the
//! tree, values far too long or deep; devices, a FIFO, a folder, files about the size limit;
//! 100,000 entries that are no test files. A malformed file: exit 10, one line naming the file
//! and the fact, no control character in it, nothing run nor recorded, `--json` still a JSON
//! error document. A valid one: exactly the graph's selection and the recommended test files.

use crate::recommendations::{RANGE, context, recommending, shop_with_money_changed};
use crate::support::{Rng, TestRepo, selected, strings, text};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The shop's test files its money change does not select.
const UNSELECTED: [&str; 3] = [
    "tests/test_plugins.py",
    "tests/test_prices.py",
    "tests/unit/test_nested.py",
];

/// What a recommendation may name: test files, selected or not, and files that are no tests
/// (one with a two-byte character, so a cut can fall inside it).
const NAMED: [&str; 6] = [
    "tests/test_money.py",
    "tests/test_prices.py",
    "tests/unit/test_nested.py",
    "README.md",
    "docs/tést.md",
    "tests/helpers.py",
];

/// Names gate does not know, each as its error shows it: quoted unless a plain word, control
/// characters escaped, so a name can neither forge a line nor drive the terminal.
const UNKNOWN: [(&str, &str); 8] = [
    ("fiel", "fiel"),
    ("Version", "Version"),
    ("selectedfiles", "selectedfiles"),
    ("file ", r#""file ""#),
    ("fíle", r#""fíle""#),
    (
        "\u{1b}[2J\u{1b}]0;owned\u{7}",
        r#""\u{1b}[2J\u{1b}]0;owned\u{7}""#,
    ),
    ("a\nerror: forged", r#""a\nerror: forged""#),
    ("", r#""""#),
];

/// Values no string field holds (`null` is one only where the field may be null).
fn not_a_string(rng: &mut Rng) -> Value {
    let values = [
        json!(5),
        json!(true),
        json!(1.5),
        json!([1, {"a": [2]}]),
        json!({"deep": {"deeper": [{"deepest": null}]}}),
    ];
    values[rng.below(values.len())].clone()
}

/// Values an unknown field might hold: any, nested or not.
fn any_value(rng: &mut Rng) -> Value {
    let values = [
        json!(1),
        json!("x"),
        json!(null),
        json!({"deep": {"deeper": true}}),
        json!([[[]]]),
    ];
    values[rng.below(values.len())].clone()
}

/// Nesting no parser could follow by recursion, written where `"@DEEP@"` stands.
fn deep(text: &str) -> String {
    let n = 100_000;
    text.replace("\"@DEEP@\"", &format!("{}{}", "[".repeat(n), "]".repeat(n)))
}

/// One generated file and what its one error line must say.
struct Case {
    bytes: Vec<u8>,
    says: Vec<String>,
}

impl Case {
    fn of(doc: &Value, says: &[String]) -> Case {
        Case::text(doc.to_string(), says)
    }

    fn text(text: String, says: &[String]) -> Case {
        Case {
            bytes: text.into_bytes(),
            says: says.to_vec(),
        }
    }
}

const CONTEXT_FIELDS: [&str; 6] = [
    "repository",
    "revision",
    "tree",
    "configDigest",
    "lockDigest",
    "environmentDigest",
];

/// A malformed file of kind `kind` (0 to 12), drawn from `rng`, around a valid document of
/// this tree's context `ctx`.
fn malformed(kind: usize, rng: &mut Rng, ctx: &Value) -> Case {
    let n = 1 + rng.below(4);
    let files: Vec<&str> = (0..n).map(|_| rng.pick(&NAMED)).collect();
    let mut doc = recommending(ctx, &files);
    let i = rng.below(n);
    let (name, shown) = rng.pick(&UNKNOWN);
    let unknown = "a field gate does not know";
    match kind {
        0 => {
            doc[name] = any_value(rng);
            Case::of(&doc, &[format!("{shown}: {unknown}")])
        }
        1 => {
            doc["context"][name] = any_value(rng);
            Case::of(&doc, &[format!("context.{shown}: {unknown}")])
        }
        2 => {
            doc["selectedFiles"][i][name] = any_value(rng);
            Case::of(&doc, &[format!("selectedFiles[{i}].{shown}: {unknown}")])
        }
        3 => {
            let field = rng.pick(&CONTEXT_FIELDS);
            doc["context"][field] = not_a_string(rng);
            Case::of(&doc, &[format!("context.{field}: invalid type")])
        }
        4 => {
            let field = rng.pick(&["file", "project", "pool"]);
            doc["selectedFiles"][i][field] = not_a_string(rng);
            Case::of(&doc, &[format!("selectedFiles[{i}].{field}: invalid type")])
        }
        5 => wrong_container(rng, doc, i),
        6 => missing(rng, doc, i),
        7 => version(rng, doc),
        8 => repeated(rng, &doc),
        9 => broken_bytes(rng, &doc),
        10 => {
            let escaping = [
                "../\u{1b}[2J.py",
                "/etc/passwd",
                "tests/../../x.py",
                "",
                "a\\b.py",
                "tests/\0.py",
                "./",
                "tests//x.py",
            ];
            doc["selectedFiles"][i]["file"] = json!(rng.pick(&escaping));
            let at = format!("selectedFiles[{i}].file: ");
            Case::of(&doc, &[at, "is not a repository-relative path".into()])
        }
        11 => match rng.below(3) {
            0 => {
                doc["context"] = json!("x".repeat(200_000));
                Case::of(&doc, &["context: invalid type: string \"xxx".into()])
            }
            1 => {
                doc["extra"] = json!("@DEEP@");
                Case::text(deep(&doc.to_string()), &[format!("extra: {unknown}")])
            }
            _ => {
                doc["selectedFiles"][i]["file"] = json!("@DEEP@");
                let says = format!("selectedFiles[{i}].file: invalid type: sequence");
                Case::text(deep(&doc.to_string()), &[says])
            }
        },
        _ => {
            let trailing = rng.pick(&[" x", "{}", ",", "\u{0}", "\u{1b}[2J"]);
            let says = "not JSON: trailing characters (line 1, column ";
            Case::text(format!("{doc}{trailing}"), &[says.into()])
        }
    }
}

/// The context, the list or an entry (or the document) as something other than its kind.
fn wrong_container(rng: &mut Rng, mut doc: Value, i: usize) -> Case {
    let other = [json!(null), json!(7), json!("s"), json!([]), json!({})];
    let mut value = other[rng.below(other.len())].clone();
    match rng.below(4) {
        0 => {
            if value.is_object() {
                value = json!([{}]);
            }
            doc["context"] = value;
            Case::of(&doc, &["context: invalid type".into()])
        }
        1 => {
            if value.is_array() {
                value = json!({"file": "tests/test_prices.py"});
            }
            doc["selectedFiles"] = value;
            Case::of(&doc, &["selectedFiles: invalid type".into()])
        }
        2 => {
            if value.is_object() {
                value = json!("tests/test_prices.py");
            }
            doc["selectedFiles"][i] = value;
            Case::of(&doc, &[format!("selectedFiles[{i}]: invalid type")])
        }
        _ => {
            if value.is_object() {
                value = json!([doc]);
            }
            Case::of(&value, &["the document: invalid type".into()])
        }
    }
}

/// A field gate needs, left out.
fn missing(rng: &mut Rng, mut doc: Value, i: usize) -> Case {
    let (object, field, at) = match rng.below(4) {
        0 => {
            let field = rng.pick(&CONTEXT_FIELDS);
            (&mut doc["context"], field, format!("context.{field}"))
        }
        1 => (
            &mut doc["selectedFiles"][i],
            "file",
            format!("selectedFiles[{i}].file"),
        ),
        2 => (&mut doc, "context", "context".to_string()),
        _ => (&mut doc, "selectedFiles", "selectedFiles".to_string()),
    };
    object.as_object_mut().unwrap().remove(field);
    Case::of(
        &doc,
        &[format!("{at}: missing from the object at line 1, column ")],
    )
}

/// Another version, a version that is no whole number, or none.
fn version(rng: &mut Rng, mut doc: Value) -> Case {
    let says = match rng.below(4) {
        0 => {
            let v = rng.pick(&[0, 2, 10, u64::MAX]);
            doc["version"] = json!(v);
            format!("version {v}: this gate reads version 1")
        }
        1 => {
            let values = [json!("1"), json!(1.0), json!(null), json!([1]), json!(-1)];
            doc["version"] = values[rng.below(values.len())].clone();
            "version is not a whole number (line 1, column ".into()
        }
        2 => {
            // A later version is named as one, whatever fields it brings.
            doc["version"] = json!(2);
            doc["extra"] = json!(true);
            "version 2: this gate reads version 1".into()
        }
        _ => {
            doc.as_object_mut().unwrap().remove("version");
            "no version: this gate reads version 1".into()
        }
    };
    Case::of(&doc, &[says])
}

/// A field given twice: the second could override what gate checked or ran.
fn repeated(rng: &mut Rng, doc: &Value) -> Case {
    let text = doc.to_string();
    let (field, at) = if rng.chance(2) {
        ("\"configDigest\":", "context.configDigest")
    } else {
        ("\"file\":", "selectedFiles[0].file")
    };
    let twice = text.replacen(field, &format!("{field}\"x\",{field}"), 1);
    Case::text(twice, &[format!("{at}: given twice")])
}

/// The document cut short, or with a byte UTF-8 never holds put in.
fn broken_bytes(rng: &mut Rng, doc: &Value) -> Case {
    let mut bytes = doc.to_string().into_bytes();
    let at = 1 + rng.below(bytes.len() - 1);
    if rng.chance(2) {
        bytes.truncate(at);
        let says = match std::str::from_utf8(&bytes) {
            Ok(_) => vec![
                "not JSON: EOF while parsing".into(),
                "(line 1, column ".into(),
            ],
            Err(_) => vec!["not UTF-8, at line 1, column ".into()],
        };
        return Case { bytes, says };
    }
    let bad: [&[u8]; 5] = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\x80", b"\x80"];
    bytes.splice(at..at, bad[rng.below(bad.len())].iter().copied());
    Case {
        bytes,
        says: vec!["not UTF-8, at line 1, column ".into()],
    }
}

/// `gate --affected RANGE` with `extra` and `--recommendations file`, run for real and
/// recorded were it to run at all.
fn gate(t: &TestRepo, file: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--affected", RANGE, "--record"];
    args.extend(extra);
    t.gate(&args)
        .arg("--recommendations")
        .arg(file)
        .output()
        .unwrap()
}

/// `out` is the refusal of `file`: exit 10, one line on stderr naming the file and holding each
/// of `says`, no control character in it, and nothing on stdout (nothing ran).
fn assert_refused(out: &std::process::Output, file: &Path, says: &[String], label: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(10), "{label}: {}", text(out));
    assert!(out.stdout.is_empty(), "{label}: nothing ran: {}", text(out));
    let line = stderr.strip_suffix('\n').unwrap_or(&stderr);
    assert!(!line.contains('\n'), "{label}: one line: {stderr}");
    assert!(!line.chars().any(char::is_control), "{label}: {line:?}");
    assert!(line.len() < 1000, "{label}: {} bytes", line.len());
    let named = format!("error: {}: ", file.display());
    assert!(line.starts_with(&named), "{label}: {line}");
    for said in says {
        assert!(line.contains(said.as_str()), "{label}: {said:?} in {line}");
    }
}

/// `out` is `--json`'s refusal: one error document on stdout, exit 10, the fact in it.
fn assert_json_refused(out: &std::process::Output, says: &[String], label: &str) {
    assert_eq!(out.status.code(), Some(10), "{label}: {}", text(out));
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{label}: not JSON ({e}): {}", text(out)));
    crate::plans::validate("error.schema.json", &doc);
    assert_eq!(doc["exit_code"], 10, "{label}");
    let error = doc["error"].as_str().unwrap();
    for said in says {
        assert!(
            error.contains(said.as_str()),
            "{label}: {said:?} in {error}"
        );
    }
}

/// The results the history store holds (none when it was never made).
fn recorded(t: &TestRepo) -> i64 {
    let store = t.root.join(".git/gate/history.sqlite");
    if !store.exists() {
        return 0;
    }
    rusqlite::Connection::open(store)
        .unwrap()
        .query_row("SELECT count(*) FROM results", [], |r| r.get(0))
        .unwrap()
}

fn beside(t: &TestRepo, name: &str) -> PathBuf {
    t.root.parent().unwrap().join(name)
}

#[test]
fn a_generated_space_of_malformed_files_is_refused_in_one_line_and_nothing_runs() {
    let t = shop_with_money_changed();
    let ctx = context(&t);
    let mut rng = Rng(49_007);
    for n in 0..52 {
        let kind = n % 13;
        let case = malformed(kind, &mut rng, &ctx);
        let file = beside(&t, &format!("recommendations-{n}.json"));
        std::fs::write(&file, &case.bytes).unwrap();
        let label = format!(
            "case {n} (kind {kind}): {}",
            String::from_utf8_lossy(&case.bytes)
        );
        let label = label.chars().take(400).collect::<String>();
        assert_refused(&gate(&t, &file, &[]), &file, &case.says, &label);
        if n % 3 == 0 {
            assert_json_refused(&gate(&t, &file, &["--json"]), &case.says, &label);
        }
    }
    let file = beside(&t, "recommendations-0.json");
    let verify = t
        .gate(&["verify", RANGE, "--recommendations"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(verify.status.code(), Some(10), "{}", text(&verify));
    assert_eq!(recorded(&t), 0, "nothing was recorded");
    // The same run with a valid file runs and records: the check above could see it.
    let fine = beside(&t, "fine.json");
    std::fs::write(
        &fine,
        recommending(&ctx, &["tests/test_prices.py"]).to_string(),
    )
    .unwrap();
    let out = gate(&t, &fine, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(recorded(&t) > 0, "{}", text(&out));
}

/// A valid file of the space: test files and other files, `./`-prefixed or not, repeated,
/// `project` and `pool` given, `null` or left out, keys written with escapes, compact or
/// pretty. The tests it names, and what they add to the graph's selection.
fn valid(rng: &mut Rng, ctx: &Value) -> (String, Vec<String>) {
    let mut entries = Vec::new();
    let mut tests: Vec<String> = Vec::new();
    for _ in 0..1 + rng.below(6) {
        let file = rng.pick(&NAMED);
        if UNSELECTED.contains(&file) {
            tests.push(file.to_string());
        }
        let mut entry =
            json!({"file": if rng.chance(3) { format!("./{file}") } else { file.into() }});
        for field in ["project", "pool"] {
            match rng.below(3) {
                0 => entry[field] = json!("unit"),
                1 => entry[field] = Value::Null,
                _ => {}
            }
        }
        entries.push(entry);
    }
    let doc = json!({"version": 1, "context": ctx, "selectedFiles": entries});
    let text = if rng.chance(2) {
        serde_json::to_string_pretty(&doc).unwrap()
    } else {
        doc.to_string()
    };
    let text = if rng.chance(2) {
        text.replace("\"file\"", "\"fi\\u006ce\"")
    } else {
        text
    };
    (text, tests)
}

#[test]
fn generated_valid_files_add_exactly_their_test_files() {
    let t = shop_with_money_changed();
    let ctx = context(&t);
    let graph = selected(&t.report(&["--affected", RANGE]));
    let mut rng = Rng(49_070);
    for n in 0..8 {
        let (doc, tests) = valid(&mut rng, &ctx);
        let file = beside(&t, &format!("valid-{n}.json"));
        std::fs::write(&file, &doc).unwrap();
        let r = t.report(&[
            "--affected",
            RANGE,
            "--recommendations",
            file.to_str().unwrap(),
        ]);
        let mut expected: Vec<String> = graph.iter().cloned().chain(tests).collect();
        expected.sort();
        expected.dedup();
        assert_eq!(selected(&r), expected, "{doc}");
    }
}

/// `gate` on `file`, stopped if it has not ended within 30 seconds (a FIFO read waits for a
/// writer that never comes). Its output goes to files, which never fill as a pipe would.
fn within_30s(t: &TestRepo, file: &Path, json: bool) -> std::process::Output {
    let mut cmd = t.gate_process(&["--affected", RANGE, "--list"]);
    cmd.arg("--recommendations").arg(file);
    if json {
        cmd.arg("--json");
    }
    let (stdout, stderr) = (beside(t, "gate.stdout"), beside(t, "gate.stderr"));
    let mut child = cmd
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed().as_secs() >= 30 {
            child.kill().unwrap();
            panic!("{}: gate did not end within 30 s", file.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: std::fs::read(stdout).unwrap(),
        stderr: std::fs::read(stderr).unwrap(),
    }
}

#[test]
fn a_device_a_fifo_or_a_folder_is_refused_before_it_is_read() {
    let t = shop_with_money_changed();
    let fifo = beside(&t, "recommendations.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success());
    let folder = beside(&t, "recommendations.d");
    std::fs::create_dir(&folder).unwrap();
    let says = ["not a regular file (a pipe, a device or a folder)".to_string()];
    for file in [
        &folder,
        &fifo,
        Path::new("/dev/zero"),
        Path::new("/dev/urandom"),
    ] {
        let label = file.display().to_string();
        assert_refused(&within_30s(&t, file, false), file, &says, &label);
        assert_json_refused(&within_30s(&t, file, true), &says, &label);
    }
}

/// The limit `proof::recommendations` reads up to.
const LIMIT: u64 = 64 << 20;

#[test]
fn a_file_past_the_size_limit_is_refused_and_one_at_it_is_read() {
    let t = shop_with_money_changed();
    let doc = recommending(&context(&t), &["tests/test_prices.py"]).to_string();
    let file = beside(&t, "recommendations.json");
    let mut bytes = doc.into_bytes();
    bytes.resize(usize::try_from(LIMIT).unwrap(), b' ');
    std::fs::write(&file, &bytes).unwrap();
    let r = t.report(&[
        "--affected",
        RANGE,
        "--recommendations",
        file.to_str().unwrap(),
    ]);
    assert!(
        selected(&r).contains(&"tests/test_prices.py".to_string()),
        "{r:#}"
    );
    let says = ["larger than 64 MiB (67108864 bytes), the limit for a recommendations file".into()];
    for size in [LIMIT + 1, 3 << 30] {
        // Past the limit by a byte, then far past it (sparse: no disk is spent).
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_len(size)
            .unwrap();
        let label = format!("{size} bytes");
        assert_refused(&within_30s(&t, &file, false), &file, &says, &label);
        assert_json_refused(&within_30s(&t, &file, true), &says, &label);
    }
}

#[test]
fn a_hundred_thousand_entries_that_are_no_tests_are_counted_not_listed() {
    let t = shop_with_money_changed();
    let graph = selected(&t.report(&["--affected", RANGE]));
    let mut files: Vec<String> = (0..99_998).map(|i| format!("docs/n{i}.md")).collect();
    files.push("docs/\u{1b}[2J\u{1b}]0;owned\u{7}.md".into());
    files.push("docs/a\nwarning: forged.md".into());
    let names: Vec<&str> = files.iter().map(String::as_str).collect();
    let file = beside(&t, "recommendations.json");
    let doc = recommending(&context(&t), &names).to_string();
    std::fs::write(&file, doc).unwrap();
    let out = within_30s(&t, &file, false);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let notes: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("recommended"))
        .collect();
    assert_eq!(notes.len(), 6, "{:#?}", &notes[..notes.len().min(8)]);
    assert!(
        notes[5].ends_with(
            "… and 99995 more recommended files are not test files of this tree: nothing added for them"
        ),
        "{stdout}"
    );
    assert!(stdout.contains(r"recommended docs/\u{1b}[2J\u{1b}]0;owned\u{7}.md is not"));
    assert!(stdout.contains(r"recommended docs/a\nwarning: forged.md is not"));
    assert!(!text(&out).contains('\u{1b}') && !text(&out).contains('\u{7}'));
    assert!(!stdout.lines().any(|l| l.starts_with("warning: forged")));
    let out = within_30s(&t, &file, true);
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(selected(&r), graph, "{r:#}");
    let notes = strings(&r["notes"]);
    let recommended: Vec<&String> = notes.iter().filter(|n| n.contains("recommended")).collect();
    assert_eq!(recommended.len(), 6, "{notes:#?}");
}
