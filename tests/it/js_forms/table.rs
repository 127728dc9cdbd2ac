//! `docs/src/load-forms.md`'s JavaScript and TypeScript table, executed: every row's example
//! written into a repository with a small fixture, `gate plan --out` once, each row's stated
//! treatment (exact, over, unbounded, not seen) checked against the plans.

use super::generate::ESM_TARGET;
use super::{Plans, Space, plans};
use serde_json::Value;
use std::collections::BTreeSet;

/// `docs/src/load-forms.md`'s JavaScript and TypeScript table.
const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/load-forms.md");

/// The fixture the table's rows load and read.
const DOC_FIXTURE: &[(&str, &str)] = &[
    (
        "package.json",
        "{\"name\": \"js-forms-doc\", \"private\": true}\n",
    ),
    ("js/lib/a.mjs", ESM_TARGET),
    ("js/lib/b.cjs", "module.exports = 1;\n"),
    ("js/lib/c.js", "module.exports = 1;\n"),
    ("js/lib/index.js", "module.exports = 1;\n"),
    ("js/lib/types.ts", "export type T = number;\n"),
    ("js/lib/types.d.ts", "declare const x: number;\n"),
    ("js/data/x.json", "{\"x\": 1}\n"),
    ("js/data/y.json", "{\"y\": 1}\n"),
    ("js/locale/en.mjs", ESM_TARGET),
    ("js/locale/fr.mjs", ESM_TARGET),
    ("js/tool.mjs", "// a tool\n"),
];

struct DocRow {
    line: usize,
    form: String,
    example: String,
    file: String,
    gate: String,
    checked: Vec<String>,
}

/// A cell's code spans, delimited by runs of one or more backticks.
fn code_spans(cell: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = cell;
    while let Some(start) = rest.find('`') {
        let run = rest[start..].chars().take_while(|c| *c == '`').count();
        let fence = "`".repeat(run);
        let body = &rest[start + run..];
        let Some(end) = body.find(&fence) else { break };
        let span = &body[..end];
        let span = match (span.strip_prefix(' '), run > 1) {
            (Some(inner), true) => inner.strip_suffix(' ').unwrap_or(inner),
            _ => span,
        };
        out.push(span.to_string());
        rest = &body[end + run..];
    }
    out
}

/// The section's rows: lines of cells between `|`s, the header and its rule left out.
fn doc_rows(doc: &str) -> Vec<DocRow> {
    let mut inside = false;
    let mut rows = Vec::new();
    for (at, line) in doc.lines().enumerate() {
        if let Some(heading) = line.strip_prefix("## ") {
            inside = heading == "JavaScript and TypeScript";
            continue;
        }
        if !inside || !line.contains(" | ") || line.starts_with("Form |") || line.starts_with("---")
        {
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 6, "line {}: six cells: {line}", at + 1);
        let example = code_spans(cells[1])
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("line {}: the example is a code span: {line}", at + 1));
        let file = code_spans(cells[2])
            .into_iter()
            .next()
            .unwrap_or_else(|| format!("js/r{:02}.mjs", rows.len() + 1));
        rows.push(DocRow {
            line: at + 1,
            form: cells[0].to_string(),
            example,
            file,
            gate: cells[3].to_string(),
            checked: code_spans(cells[4]),
        });
    }
    rows
}

/// What is wrong with one row, if anything.
fn doc_check(
    row: &DocRow,
    edges: &[(String, String)],
    plans: &Plans,
    files: &BTreeSet<String>,
) -> Option<String> {
    let expand = |token: &str| -> BTreeSet<String> {
        if let Some(dir) = token.strip_suffix('/') {
            let prefix = format!("{dir}/");
            return files
                .iter()
                .filter(|f| f.starts_with(&prefix))
                .cloned()
                .collect();
        }
        if token.contains('*') {
            let glob = globset::GlobBuilder::new(token)
                .literal_separator(true)
                .build()
                .unwrap()
                .compile_matcher();
            return files
                .iter()
                .filter(|f| glob.is_match(f.as_str()))
                .cloned()
                .collect();
        }
        BTreeSet::from([token.to_string()])
    };
    let reached: BTreeSet<String> = edges
        .iter()
        .filter(|(from, _)| *from == row.file)
        .map(|(_, to)| to.clone())
        .collect();
    let expected: BTreeSet<String> = row
        .checked
        .iter()
        .filter(|t| !t.starts_with("env ") && *t != "may_load")
        .flat_map(|t| expand(t))
        .collect();
    let env: BTreeSet<String> = plans.env(&BTreeSet::from([row.file.clone()]));
    let named: BTreeSet<String> = row
        .checked
        .iter()
        .filter_map(|t| t.strip_prefix("env "))
        .map(str::to_string)
        .collect();
    let wrong = match row.gate.as_str() {
        "exact" | "over" if !named.is_empty() => {
            (!named.is_subset(&env)).then(|| format!("variables {env:?}"))
        }
        "exact" | "over" => (reached != expected)
            .then(|| format!("reaches {reached:?}, the table says {expected:?}")),
        "unbounded" => (!plans.unbounded(&row.file))
            .then(|| format!("no unbounded import: {}", plans.said(&row.file))),
        "not seen" if named.contains("*") => {
            (!env.is_empty()).then(|| format!("now names variables {env:?}"))
        }
        "not seen" => (!reached.is_disjoint(&expected)).then(|| format!("now reaches {reached:?}")),
        other => Some(format!("unknown treatment `{other}`")),
    };
    let errors = plans.parse_errors(&row.file);
    let wrong = match (wrong, errors.is_empty()) {
        (None, true) => return None,
        (w, _) => format!("{} parse errors {errors:?}", w.unwrap_or_default()),
    };
    Some(format!(
        "docs/src/load-forms.md line {} ({}: `{}` in {}, {}): {wrong}",
        row.line, row.form, row.example, row.file, row.gate
    ))
}

#[test]
fn every_javascript_form_is_treated_as_the_table_says() {
    let doc = std::fs::read_to_string(DOC).unwrap();
    let rows = doc_rows(&doc);
    assert!(
        rows.len() >= 30,
        "the JavaScript table has {} rows",
        rows.len()
    );
    let space = Space::new();
    let mut files = BTreeSet::new();
    for (path, content) in DOC_FIXTURE {
        space.write(path, content);
        files.insert(path.to_string());
    }
    for row in &rows {
        assert!(
            files.insert(row.file.clone()),
            "docs/src/load-forms.md line {}: {} holds another row's example",
            row.line,
            row.file
        );
        space.write(&row.file, &format!("{}\n", row.example.replace('⏎', "\n")));
    }
    let out = space.plan();
    let plans = plans(&out);
    let mut edges = Vec::new();
    for plan in ["import-graph.json", "reference-edges.json"] {
        let v: Value = serde_json::from_slice(&std::fs::read(out.join(plan)).unwrap()).unwrap();
        for e in v["edges"].as_array().unwrap() {
            let s = |k: &str| e[k].as_str().unwrap().to_string();
            edges.push((s("from"), s("to")));
        }
    }
    let wrong: Vec<String> = rows
        .iter()
        .filter_map(|row| doc_check(row, &edges, &plans, &files))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} JavaScript rows of docs/src/load-forms.md no longer hold (update the table):\n{}",
        wrong.len(),
        rows.len(),
        wrong.join("\n")
    );
    for gate in ["exact", "over", "unbounded", "not seen"] {
        assert!(rows.iter().any(|r| r.gate == gate), "{gate}");
    }
}
