//! The configuration reference (`docs/src/configuration.md`, a page of the user guide) checked
//! against the parser, both ways, so neither can drift from the other.
//!
//! The accepted keys are not listed here: the parser is asked for them. `RawConfig` and every
//! table in it deny unknown fields, and serde's error for an unknown field names every field
//! the table accepts (`unknown field `x`, expected one of `a`, `b``). Probing each table with a
//! key no table has enumerates the accepted keys from the derive itself — a list kept in this
//! file would drift exactly as a hand-written reference does. Probing a key as a table and as an
//! array of tables tells `[python]` from `[[step]]` from a free map (`[env]`) from a plain value;
//! probing a plain key with a string no setting takes gives its enum's variants. The page's
//! `every-key` example goes through the real parser and must use every key, so a documented key
//! the parser no longer accepts fails as well as an accepted key the page leaves out.

use super::raw::RawConfig;
use super::{DEFAULT_INERT, DEFAULT_WHOLE_SUITE, DEFAULT_WINDOW_DAYS};
use std::collections::{BTreeMap, BTreeSet};

const PAGE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/docs/src/configuration.md"
));
/// The page's path as the error hint names it.
const PAGE_PATH: &str = "docs/src/configuration.md";
/// A key no table accepts.
const PROBE: &str = "zz_not_a_gate_key";

/// One segment of a table's path: its name, and whether it is an array of tables.
type Segment = (String, bool);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `[name]` with fixed keys.
    Table,
    /// `[[name]]`, each entry with fixed keys.
    Tables,
    /// `[name]` taking any key (`[env]`).
    FreeMap,
}

/// A table the parser accepts: where it is, what it is, its plain keys.
#[derive(Debug)]
struct Table {
    path: Vec<Segment>,
    kind: Kind,
    keys: BTreeSet<String>,
}

fn dotted(path: &[Segment]) -> String {
    path.iter()
        .map(|(name, _)| name.as_str())
        .collect::<Vec<_>>()
        .join(".")
}

/// The headers that open the table at `path`: every array of tables on the way gets its
/// `[[…]]` (a dotted `[a.b]` alone would make `a` a table), the table itself its own header.
fn headers(path: &[Segment]) -> String {
    let mut out = String::new();
    for i in 0..path.len() {
        let name = dotted(&path[..=i]);
        if path[i].1 {
            out.push_str(&format!("[[{name}]]\n"));
        } else if i + 1 == path.len() {
            out.push_str(&format!("[{name}]\n"));
        }
    }
    out
}

/// The parser's error message for `doc`, or `None` when it parses.
fn error_of(doc: &str) -> Option<String> {
    toml::from_str::<RawConfig>(doc)
        .err()
        .map(|e| e.message().to_string())
}

/// The code spans of `text`.
fn spans(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The names serde lists after `unknown field|variant `PROBE`, `, or `None` for another error.
fn listed(message: &str, what: &str) -> Option<BTreeSet<String>> {
    let rest = message.strip_prefix(&format!("unknown {what} `{PROBE}`, "))?;
    let expected = rest.strip_prefix("expected ").unwrap_or("");
    Some(spans(expected).into_iter().collect())
}

/// The keys the table at `path` accepts, asked of the parser with a key it cannot accept.
fn fields_at(path: &[Segment]) -> Option<BTreeSet<String>> {
    let doc = format!("{}{PROBE} = \"x\"\n", headers(path));
    listed(&error_of(&doc)?, "field")
}

/// Every table the parser accepts, the top level (path `[]`) first, each with its plain keys.
fn accepted() -> Vec<Table> {
    let mut out = Vec::new();
    let mut pending = vec![(Vec::<Segment>::new(), Kind::Table)];
    while let Some((path, kind)) = pending.pop() {
        let mut keys = BTreeSet::new();
        let fields = match kind {
            Kind::FreeMap => BTreeSet::new(),
            _ => fields_at(&path)
                .unwrap_or_else(|| panic!("the parser names the keys of `{}`", dotted(&path))),
        };
        for field in fields {
            let mut as_table = path.clone();
            as_table.push((field.clone(), false));
            let mut as_array = path.clone();
            as_array.push((field.clone(), true));
            let probe = format!("{}{PROBE} = \"x\"\n", headers(&as_table));
            if error_of(&probe).is_none() {
                pending.push((as_table, Kind::FreeMap));
            } else if fields_at(&as_table).is_some() {
                pending.push((as_table, Kind::Table));
            } else if fields_at(&as_array).is_some() {
                pending.push((as_array, Kind::Tables));
            } else {
                keys.insert(field);
            }
        }
        out.push(Table { path, kind, keys });
    }
    out.sort_by_key(|t| dotted(&t.path));
    out
}

/// The values an enum setting takes, or `None` for a setting that is no enum.
fn variants(path: &[Segment], key: &str) -> Option<BTreeSet<String>> {
    let doc = format!("{}{key} = \"{PROBE}\"\n", headers(path));
    listed(&error_of(&doc)?, "variant")
}

/// What the page documents: per table (by its dotted name, `""` for the top level) whether its
/// heading says `[[…]]`, and each key's row.
fn documented() -> BTreeMap<String, (bool, BTreeMap<String, String>)> {
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in PAGE.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            current = None;
            let name = if heading == "Top-level keys" {
                Some((String::new(), false))
            } else if let Some(inner) = heading
                .strip_prefix("`[[")
                .and_then(|h| h.strip_suffix("]]`"))
            {
                Some((inner.to_string(), true))
            } else {
                heading
                    .strip_prefix("`[")
                    .and_then(|h| h.strip_suffix("]`"))
                    .map(|inner| (inner.to_string(), false))
            };
            if let Some((name, array)) = name {
                out.insert(name.clone(), (array, BTreeMap::new()));
                current = Some(name);
            }
            continue;
        }
        let (Some(table), Some(row)) = (&current, line.strip_prefix("| `")) else {
            continue;
        };
        let key = row.split('`').next().unwrap_or_default().to_string();
        out.get_mut(table).unwrap().1.insert(key, line.to_string());
    }
    out
}

/// The page's `every-key` example.
fn example() -> &'static str {
    PAGE.split("<!-- every-key -->\n```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the reference holds the every-key example")
}

/// The keys `value` uses, per table, into `out`; free maps' own keys are not settings.
fn used(
    table: &toml::Table,
    prefix: &str,
    free: &BTreeSet<String>,
    out: &mut BTreeMap<String, BTreeSet<String>>,
) {
    out.entry(prefix.to_string()).or_default();
    if free.contains(prefix) {
        return;
    }
    for (key, value) in table {
        let name = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            toml::Value::Table(inner) => used(inner, &name, free, out),
            toml::Value::Array(items)
                if !items.is_empty() && items.iter().all(|i| i.is_table()) =>
            {
                for item in items {
                    used(item.as_table().unwrap(), &name, free, out);
                }
            }
            _ => {
                out.get_mut(prefix).unwrap().insert(key.clone());
            }
        }
    }
}

#[test]
fn the_probe_reads_the_parsers_keys() {
    // The probe's own premise, on a table whose keys this test knows: were serde's message to
    // change shape, every later check would compare empty sets and pass on nothing.
    let tables = accepted();
    let history = tables
        .iter()
        .find(|t| dotted(&t.path) == "history")
        .expect("[history] is found");
    assert_eq!(history.kind, Kind::Table);
    assert!(history.keys.contains("window"), "{history:?}");
    let step = tables.iter().find(|t| dotted(&t.path) == "step").unwrap();
    assert_eq!(step.kind, Kind::Tables);
    let env = tables.iter().find(|t| dotted(&t.path) == "env").unwrap();
    assert_eq!(env.kind, Kind::FreeMap);
    assert!(tables[0].path.is_empty() && tables[0].keys.contains("always_run"));
    assert_eq!(
        variants(&step.path, "when"),
        Some(["always", "pre-push", "verify"].map(String::from).into())
    );
    assert_eq!(variants(&[], "max_depth"), None);
}

#[test]
fn every_key_the_parser_accepts_is_documented_and_every_documented_key_is_accepted() {
    let documented = documented();
    let mut problems = Vec::new();
    let accepted = accepted();
    for table in &accepted {
        let name = dotted(&table.path);
        let shown = if name.is_empty() {
            "the top level".to_string()
        } else if table.kind == Kind::Tables {
            format!("`[[{name}]]`")
        } else {
            format!("`[{name}]`")
        };
        let Some((array, rows)) = documented.get(&name) else {
            problems.push(format!("{shown} is accepted but has no section"));
            continue;
        };
        if *array != (table.kind == Kind::Tables) {
            problems.push(format!("{shown} is headed as the other kind of table"));
        }
        for key in table.keys.difference(&rows.keys().cloned().collect()) {
            problems.push(format!("{shown}: `{key}` is accepted but not documented"));
        }
        for key in rows.keys().filter(|k| !table.keys.contains(*k)) {
            problems.push(format!("{shown}: `{key}` is documented but not accepted"));
        }
        for (key, row) in rows.iter().filter(|(k, _)| table.keys.contains(*k)) {
            for value in variants(&table.path, key).unwrap_or_default() {
                if !row.contains(&format!("`\"{value}\"`")) {
                    problems.push(format!(
                        "{shown}: `{key}` takes `\"{value}\"`, which its row does not name"
                    ));
                }
            }
        }
    }
    for name in documented.keys() {
        if !accepted.iter().any(|t| &dotted(&t.path) == name) {
            problems.push(format!(
                "the section `{name}` is no table the parser accepts"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{PAGE_PATH} and the parser (src/config/raw.rs) disagree:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_every_key_example_parses_and_uses_every_key() {
    let text = example();
    if let Err(e) = super::Config::parse(None, text) {
        panic!("the every-key example of {PAGE_PATH} does not parse: {e:#}");
    }
    let accepted = accepted();
    let free: BTreeSet<String> = accepted
        .iter()
        .filter(|t| t.kind == Kind::FreeMap)
        .map(|t| dotted(&t.path))
        .collect();
    let mut keys = BTreeMap::new();
    used(&toml::from_str(text).unwrap(), "", &free, &mut keys);
    let want: BTreeMap<String, BTreeSet<String>> = accepted
        .iter()
        .map(|t| (dotted(&t.path), t.keys.clone()))
        .collect();
    assert_eq!(keys, want, "the every-key example of {PAGE_PATH}");
}

#[test]
fn the_built_in_globs_and_defaults_are_the_ones_documented() {
    for glob in DEFAULT_INERT {
        assert!(
            PAGE.contains(&format!("`{glob}`")),
            "{PAGE_PATH} does not list the built-in inert glob `{glob}`"
        );
    }
    let languages = crate::lang::LANGUAGES.iter().flat_map(|l| l.whole_suite());
    for (glob, reason) in DEFAULT_WHOLE_SUITE.iter().chain(languages) {
        let row = format!("| `{glob}` | {reason} |");
        assert!(
            PAGE.lines().any(|l| l == row),
            "{PAGE_PATH} has no row `{row}`"
        );
    }
    let window = &documented()["history"].1["window"];
    assert!(
        window.contains(&format!("`\"{DEFAULT_WINDOW_DAYS}d\"`")),
        "{window}"
    );
}

#[test]
fn a_configuration_error_points_to_the_reference() {
    let hint = crate::error::Error::config(super::FILE, "x")
        .hint()
        .unwrap();
    assert!(hint.contains(PAGE_PATH), "{hint}");
}
