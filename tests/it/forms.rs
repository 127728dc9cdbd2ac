//! `docs/src/load-forms.md` (the guide's page of load forms), executed: every row's example is
//! written into a repository built from `tests/fixtures/forms/`, `gate plan --out` runs once,
//! and each row's stated treatment (exact, over, unbounded, not seen) is checked against the
//! plans. When gate learns a form (or loses one), the row's failure says what the plans show
//! now: update the table.

use crate::support::TestRepo;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gate {
    Exact,
    Over,
    Unbounded,
    NotSeen,
}

#[derive(Debug)]
struct Row {
    /// The line of the table row in the document.
    doc_line: usize,
    form: String,
    example: String,
    /// The file the example is written to (or found in).
    file: String,
    gate: Gate,
    /// What `Checked` lists; `None` for a row the table says cannot be checked.
    checked: Option<Vec<String>>,
}

/// Where a row's example stands: its file, its first and last line, and whether the file
/// holds other rows or fixture code (then only edges on those lines are the row's).
struct Placed {
    start: u32,
    end: u32,
    shared: bool,
}

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/load-forms.md");

/// A table row's cells, split on `|` not escaped as `\|` (the escape undone).
fn cells(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                out.last_mut().unwrap().push('|');
            }
            '|' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    // The text before the first `|` and after the last is no cell.
    out.pop();
    out.into_iter()
        .skip(1)
        .map(|c| c.trim().to_string())
        .collect()
}

/// The code spans of a cell, in order.
fn spans(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn parse(doc: &str) -> Vec<Row> {
    let (mut section, mut numbers) = (String::new(), BTreeMap::<&str, u32>::new());
    let mut rows = Vec::new();
    for (at, line) in doc.lines().enumerate() {
        if let Some(heading) = line.strip_prefix("## ") {
            section = heading.to_string();
            continue;
        }
        if !line.starts_with("| ") || line.starts_with("| Form ") {
            continue;
        }
        let c = cells(line);
        assert_eq!(c.len(), 6, "line {}: six cells: {line}", at + 1);
        let example = spans(&c[1])
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("line {}: the example is a code span: {line}", at + 1));
        let gate = match c[3].trim_end_matches(" (being widened)") {
            "exact" => Gate::Exact,
            "over" => Gate::Over,
            "unbounded" => Gate::Unbounded,
            "not seen" => Gate::NotSeen,
            other => panic!("line {}: unknown treatment `{other}`", at + 1),
        };
        let go = section == "Go";
        let file = spans(&c[2]).into_iter().next().unwrap_or_else(|| {
            let n = numbers.entry(if go { "go" } else { "py" }).or_default();
            *n += 1;
            if go {
                format!("gosrc/app/r{n:02}.go")
            } else {
                format!("lib/r{n:02}.py")
            }
        });
        let checked = (!c[4].starts_with("unchecked:")).then(|| spans(&c[4]));
        assert!(
            checked.as_ref().is_none_or(|c| !c.is_empty()),
            "line {}: a row lists what it reaches, or says why it is unchecked",
            at + 1
        );
        rows.push(Row {
            doc_line: at + 1,
            form: c[0].clone(),
            example,
            file,
            gate,
            checked,
        });
    }
    rows
}

/// A Go file holding `example`: at the top for an import or an embed, else in a function
/// (a test function, with `testing` imported, in a `_test.go` file). The example's first line.
fn go_file(example: &str, file: &str) -> (String, u32) {
    let lines: Vec<&str> = example.split('⏎').collect();
    if example.starts_with("import ") {
        return (format!("package app\n\n{example}\n"), 3);
    }
    if example.starts_with("//go:embed") {
        let text = format!("package app\n\nimport _ \"embed\"\n\n{example}\nvar embedded string\n");
        return (text, 5);
    }
    let (head, func) = if file.ends_with("_test.go") {
        ("import \"testing\"\n\n", "func TestRow(t *testing.T) {\n")
    } else {
        ("", "func row() {\n")
    };
    let body: String = lines.iter().map(|l| format!("\t{l}\n")).collect();
    let text = format!("package app\n\n{head}{func}{body}}}\n");
    let start = text.lines().position(|l| l == func.trim_end()).unwrap() as u32 + 2;
    (text, start)
}

/// Writes each row's example where it goes (a fixture file must already hold it as a line).
fn place(t: &TestRepo, rows: &[Row]) -> Vec<Option<Placed>> {
    let mut written = BTreeSet::new();
    let mut out = Vec::new();
    for row in rows {
        if row.checked.is_none() {
            out.push(None);
            continue;
        }
        let lines = row.example.split('⏎').count() as u32;
        let full = t.root.join(&row.file);
        if full.exists() && !written.contains(&row.file) {
            let text = std::fs::read_to_string(&full).unwrap();
            let first = row.example.split('⏎').next().unwrap();
            let at = text
                .lines()
                .position(|l| l.trim() == first.trim())
                .unwrap_or_else(|| {
                    panic!(
                        "docs/src/load-forms.md line {}: {} does not hold `{first}`",
                        row.doc_line, row.file
                    )
                }) as u32
                + 1;
            out.push(Some(Placed {
                start: at,
                end: at + lines - 1,
                shared: true,
            }));
            continue;
        }
        assert!(
            written.insert(row.file.clone()),
            "docs/src/load-forms.md line {}: {} holds another row's example",
            row.doc_line,
            row.file
        );
        let (text, start) = if row.file.ends_with(".go") {
            go_file(&row.example, &row.file)
        } else {
            (format!("{}\n", row.example.replace('⏎', "\n")), 1)
        };
        t.write(&row.file, &text);
        out.push(Some(Placed {
            start,
            end: start + lines - 1,
            shared: false,
        }));
    }
    out
}

/// Every file of the work tree, `.git` aside.
fn files_of(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(root).unwrap();
                out.insert(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out
}

/// What the plans show.
struct Plans {
    files: BTreeSet<String>,
    ast: Value,
    /// `(from, to, kind, line)` of every edge.
    edges: Vec<(String, String, String, u32)>,
}

impl Plans {
    fn file(&self, path: &str) -> Option<&Value> {
        self.ast["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
    }

    /// The row's own edges: from its file, on its lines when the file is shared; with
    /// `structural`, also the package-parent, conftest and plugin edges.
    fn row_edges(
        &self,
        row: &Row,
        at: &Placed,
        structural: bool,
    ) -> Vec<&(String, String, String, u32)> {
        let kinds = [
            "package_init",
            "conftest",
            "plugin",
            "go_package",
            "go_test",
        ];
        self.edges
            .iter()
            .filter(|e| e.0 == row.file)
            .filter(|e| !at.shared || (at.start..=at.end).contains(&e.3))
            .filter(|e| structural || !kinds.contains(&e.2.as_str()))
            .collect()
    }

    /// The files a path, folder (`dir/`) or glob names.
    fn expand(&self, token: &str) -> BTreeSet<String> {
        if let Some(dir) = token.strip_suffix('/') {
            let prefix = format!("{dir}/");
            return self
                .files
                .iter()
                .filter(|f| f.starts_with(&prefix) && !f.ends_with("/__init__.py"))
                .cloned()
                .collect();
        }
        if token.contains('*') {
            let glob = globset::GlobBuilder::new(token)
                .literal_separator(true)
                .build()
                .unwrap()
                .compile_matcher();
            return self
                .files
                .iter()
                .filter(|f| glob.is_match(f.as_str()))
                .filter(|f| !f.ends_with("/__init__.py"))
                .cloned()
                .collect();
        }
        BTreeSet::from([token.to_string()])
    }
}

/// Whether a token is a reach (a path, glob or folder), not an edge, role, variable or bound.
fn is_reach(token: &str) -> bool {
    !token.contains(" → ")
        && !token.contains(" is ")
        && !token.starts_with("env ")
        && token != "may_load"
}

/// What is wrong with one row, if anything.
fn check(row: &Row, at: &Placed, plans: &Plans) -> Option<String> {
    let tokens = row.checked.as_ref().unwrap();
    let mut wrong = Vec::new();
    let listed: BTreeSet<&str> = tokens.iter().map(String::as_str).collect();
    let expected: BTreeSet<String> = tokens
        .iter()
        .filter(|t| is_reach(t))
        .flat_map(|t| plans.expand(t))
        .filter(|f| *f != row.file)
        .collect();
    let seen = row.gate != Gate::NotSeen;
    let own = plans.row_edges(row, at, !seen);
    let reached: BTreeSet<String> = own
        .iter()
        .map(|e| e.1.clone())
        .filter(|to| {
            !seen
                || listed.contains(to.as_str())
                || !(to.ends_with("/__init__.py") || to.starts_with("go:") || to.starts_with("./"))
        })
        .collect();
    match row.gate {
        Gate::Exact | Gate::Over if reached != expected => {
            wrong.push(format!("reaches {reached:?}, the table says {expected:?}"))
        }
        Gate::NotSeen if !reached.is_disjoint(&expected) => wrong.push(format!(
            "now reaches {:?}",
            reached.intersection(&expected).collect::<Vec<_>>()
        )),
        Gate::Unbounded if tokens.iter().any(|t| t == "may_load") => {
            let dynamic = plans
                .file(&row.file)
                .map(|f| f["dynamic_imports"].as_array().cloned().unwrap_or_default())
                .unwrap_or_default();
            let unbounded = dynamic.iter().any(|d| {
                let line = d["line"].as_u64().unwrap() as u32;
                (at.start..=at.end).contains(&line)
                    && d["prefix"] == ""
                    && d.get("anchor").is_none_or(Value::is_null)
            });
            if !unbounded {
                wrong.push(format!(
                    "no dynamic import without prefix and anchor: {dynamic:?}; edges {:?}",
                    own.iter().map(|e| &e.1).collect::<Vec<_>>()
                ));
            }
        }
        _ => {}
    }
    for token in tokens {
        if let Some(problem) = check_token(row, token, plans) {
            wrong.push(problem);
        }
    }
    (!wrong.is_empty()).then(|| {
        format!(
            "docs/src/load-forms.md line {} ({}: `{}` in {}, {:?}): {}",
            row.doc_line,
            row.form,
            row.example,
            row.file,
            row.gate,
            wrong.join("; ")
        )
    })
}

/// An edge, role or variable token: whether the plans agree with the row.
fn check_token(row: &Row, token: &str, plans: &Plans) -> Option<String> {
    let seen = row.gate != Gate::NotSeen;
    if let Some((from, to)) = token.split_once(" → ") {
        let found = plans.edges.iter().any(|e| e.0 == from && e.1 == to);
        return (found != seen).then(|| format!("edge {from} → {to}: found = {found}"));
    }
    if let Some((path, role)) = token.split_once(" is ") {
        let got = plans.file(path).map(|f| f["role"].clone());
        return (got.as_ref().and_then(Value::as_str) != Some(role))
            .then(|| format!("{path} is {got:?}, not {role}"));
    }
    if let Some(name) = token.strip_prefix("env ") {
        let env: Vec<String> = plans
            .file(&row.file)
            .map(|f| serde_json::from_value(f["env"].clone()).unwrap_or_default())
            .unwrap_or_default();
        let found = if name == "*" {
            !env.is_empty()
        } else {
            env.iter().any(|e| e == name)
        };
        return (found != seen).then(|| format!("variables read: {env:?}"));
    }
    None
}

#[test]
fn every_load_form_is_treated_as_the_table_says() {
    let doc = std::fs::read_to_string(DOC).unwrap();
    let rows = parse(&doc);
    let t = TestRepo::from_fixture("forms");
    let placed = place(&t, &rows);
    t.commit("every example");
    let dir = t.root.parent().unwrap().join("plans");
    let out = t
        .gate(&["plan", "--out", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", crate::support::text(&out));
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
    };
    let mut edges = Vec::new();
    for plan in ["import-graph.json", "reference-edges.json"] {
        for e in read(plan)["edges"].as_array().unwrap() {
            let s = |k: &str| e[k].as_str().unwrap().to_string();
            edges.push((
                s("from"),
                s("to"),
                s("kind"),
                e["line"].as_u64().unwrap() as u32,
            ));
        }
    }
    let plans = Plans {
        files: files_of(&t.root),
        ast: read("ast-plan.json"),
        edges,
    };
    let wrong: Vec<String> = rows
        .iter()
        .zip(&placed)
        .filter_map(|(row, at)| check(row, at.as_ref()?, &plans))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} rows of docs/src/load-forms.md no longer hold (update the table):\n{}",
        wrong.len(),
        rows.len(),
        wrong.join("\n")
    );
    // Every treatment and every language is exercised.
    for gate in [Gate::Exact, Gate::Over, Gate::Unbounded, Gate::NotSeen] {
        assert!(rows.iter().any(|r| r.gate == gate), "{gate:?}");
    }
}
