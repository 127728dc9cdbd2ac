//! The recommendations file's format, read strictly: `{version: 1, context: {repository,
//! revision, tree, configDigest, lockDigest, environmentDigest}, selectedFiles: [{file,
//! project, pool}]}`. A field gate does not know, at any level, is refused, named where it is
//! (`selectedFiles[3].fiel`): a field gate skipped could be a part of the recommendation it
//! cannot honour. Each object is kept as its fields' text in the document (borrowed, never
//! copied), so every error can say its line and column, and a value's text is never repeated
//! whole in an error.

use serde::Deserialize;
use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::collections::BTreeSet;

/// The one version of the format this gate reads.
const VERSION: u64 = 1;

/// The longest stretch of an outside value an error repeats: a 60 MB string in the wrong place
/// is named, not printed.
const SHOWN: usize = 120;

/// The document as gate reads it: the context to check, and the recommended paths in order.
pub(super) struct Recommendations {
    pub context: Context,
    pub files: Vec<String>,
}

/// The source and configuration the recommendations were made for: every field present,
/// `null` where the doc allows it (a working tree has no revision nor tree; a tree without a
/// lock file or environment digest has none).
pub(super) struct Context {
    pub repository: String,
    pub revision: Option<String>,
    pub tree: Option<String>,
    pub config_digest: String,
    pub lock_digest: Option<String>,
    pub environment_digest: Option<String>,
}

/// The document in `bytes`, its version checked before its shape (a later version may differ
/// in both); what is wrong, and where, when it is not.
pub(super) fn read(bytes: &[u8]) -> Result<Recommendations, String> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| format!("not UTF-8, at {}", place(bytes, e.valid_up_to())))?;
    let top: &RawValue = serde_json::from_str(text).map_err(|e| {
        format!(
            "not JSON: {} (line {}, column {})",
            said(&e),
            e.line(),
            e.column()
        )
    })?;
    let doc = Doc(text);
    let top = doc.object(top, String::new())?;
    match top
        .get("version")
        .map(|v| (v, serde_json::from_str::<u64>(v.get())))
    {
        Some((_, Ok(VERSION))) => {}
        Some((_, Ok(other))) => {
            return Err(format!(
                "version {other}: this gate reads version {VERSION}"
            ));
        }
        Some((v, Err(_))) => {
            return Err(format!(
                "version is not a whole number ({}): this gate reads version {VERSION}",
                doc.place(v)
            ));
        }
        None => return Err(format!("no version: this gate reads version {VERSION}")),
    }
    top.only(&doc, &["version", "context", "selectedFiles"])?;
    let context = doc.object(top.required(&doc, "context")?, "context".into())?;
    context.only(
        &doc,
        &[
            "repository",
            "revision",
            "tree",
            "configDigest",
            "lockDigest",
            "environmentDigest",
        ],
    )?;
    let context = Context {
        repository: context.value(&doc, "repository")?,
        revision: context.value(&doc, "revision")?,
        tree: context.value(&doc, "tree")?,
        config_digest: context.value(&doc, "configDigest")?,
        lock_digest: context.value(&doc, "lockDigest")?,
        environment_digest: context.value(&doc, "environmentDigest")?,
    };
    let listed = top.required(&doc, "selectedFiles")?;
    let entries: Vec<&RawValue> = doc.parse(listed, "selectedFiles")?;
    let mut files = Vec::with_capacity(entries.len());
    for (i, entry) in entries.into_iter().enumerate() {
        let entry = doc.object(entry, format!("selectedFiles[{i}]"))?;
        entry.only(&doc, &["file", "project", "pool"])?;
        // A Vitest project and worker pool name nothing in gate's runners: checked to be
        // strings when given, never read.
        for optional in ["project", "pool"] {
            if let Some(value) = entry.get(optional) {
                doc.parse::<Option<String>>(value, &entry.at(optional))?;
            }
        }
        files.push(entry.value(&doc, "file")?);
    }
    Ok(Recommendations { context, files })
}

/// The whole document's text, which every value's text is a slice of.
struct Doc<'a>(&'a str);

impl<'a> Doc<'a> {
    /// `raw` read as `T`; `at` names it when it is not one.
    fn parse<T: Deserialize<'a>>(&self, raw: &'a RawValue, at: &str) -> Result<T, String> {
        // serde's own place is within `raw`; the document's is said instead.
        serde_json::from_str(raw.get())
            .map_err(|e| format!("{at}: {} ({})", said(&e), self.place(raw)))
    }

    /// `raw` as an object named `at`.
    fn object(&self, raw: &'a RawValue, at: String) -> Result<Object<'a>, String> {
        let fields: Fields<'a> =
            self.parse(raw, if at.is_empty() { "the document" } else { &at })?;
        Ok(Object {
            at,
            raw,
            fields: fields.0,
        })
    }

    /// Where `raw` starts in the document.
    fn place(&self, raw: &RawValue) -> String {
        let at = (raw.get().as_ptr() as usize).saturating_sub(self.0.as_ptr() as usize);
        place(self.0.as_bytes(), at)
    }
}

/// One object of the document: where it is (`selectedFiles[3]`, empty for the document itself)
/// and its fields in the order written.
struct Object<'a> {
    at: String,
    raw: &'a RawValue,
    fields: Vec<(String, &'a RawValue)>,
}

impl<'a> Object<'a> {
    /// The path of `field` in this object: `context.tree`, `selectedFiles[3].fiel`. A name
    /// from the file that is not a plain word is quoted, its control characters escaped
    /// (`"a\nb"`, `"file "`, `""`), so an error stays one line and shows the name as it is.
    fn at(&self, field: &str) -> String {
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let field = if !field.is_empty() && field.chars().all(plain) {
            field.to_string()
        } else {
            cut(&format!("{field:?}"))
        };
        if self.at.is_empty() {
            field
        } else {
            format!("{}.{field}", self.at)
        }
    }

    fn get(&self, name: &str) -> Option<&'a RawValue> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    /// Refuses a field not in `known`, or one given twice, naming the first.
    fn only(&self, doc: &Doc<'_>, known: &[&str]) -> Result<(), String> {
        let mut seen = BTreeSet::new();
        for (name, value) in &self.fields {
            let why = if !known.contains(&name.as_str()) {
                "a field gate does not know"
            } else if !seen.insert(name.as_str()) {
                "given twice"
            } else {
                continue;
            };
            return Err(format!(
                "{}: {why} (its value at {}); {} holds {}",
                self.at(name),
                doc.place(value),
                if self.at.is_empty() {
                    "the document"
                } else {
                    &self.at
                },
                known.join(", ")
            ));
        }
        Ok(())
    }

    /// The value of `name`, which must be present.
    fn required(&self, doc: &Doc<'_>, name: &str) -> Result<&'a RawValue, String> {
        self.get(name).ok_or_else(|| {
            format!(
                "{}: missing from the object at {}",
                self.at(name),
                doc.place(self.raw)
            )
        })
    }

    /// The value of `name`, present and read as `T` (`null` where `T` is an `Option`).
    fn value<T: DeserializeOwned>(&self, doc: &Doc<'a>, name: &str) -> Result<T, String> {
        doc.parse(self.required(doc, name)?, &self.at(name))
    }
}

/// A JSON object's fields in the order written, each value as its text in the document.
struct Fields<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Fields<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Fields<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
                let mut fields = Vec::new();
                while let Some(field) = map.next_entry()? {
                    fields.push(field);
                }
                Ok(Fields(fields))
            }
        }
        d.deserialize_map(Each)
    }
}

/// What serde_json says went wrong, without its place (each caller says the document's), cut.
fn said(e: &serde_json::Error) -> String {
    let own = format!(" at line {} column {}", e.line(), e.column());
    let message = e.to_string();
    cut(message.strip_suffix(&own).unwrap_or(&message))
}

/// `line L, column C` of byte `at` in `bytes`, both from 1, the column in bytes as serde_json
/// counts it.
fn place(bytes: &[u8], at: usize) -> String {
    let before = &bytes[..at.min(bytes.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |n| n + 1);
    format!("line {line}, column {}", before.len() - start + 1)
}

/// `text` cut to `SHOWN` characters: a value from the file as a note or an error repeats it.
pub(super) fn cut(text: &str) -> String {
    match text.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        error_of(text.as_bytes())
    }

    fn error_of(bytes: &[u8]) -> String {
        read(bytes)
            .err()
            .unwrap_or_else(|| panic!("read: {bytes:?}"))
    }

    const CONTEXT: &str = r#"{"repository": "r", "revision": null, "tree": null,
        "configDigest": "c", "lockDigest": null, "environmentDigest": null}"#;

    #[test]
    fn a_field_gate_does_not_know_is_named_with_its_path_and_place() {
        let doc = |context: &str, entry: &str, top: &str| {
            format!(
                r#"{{"version": 1, "context": {context}, "selectedFiles": [{{"file": "a.py"}}, {entry}]{top}}}"#
            )
        };
        let fine = r#"{"file": "b.py", "project": "unit", "pool": null}"#;
        let read_fine = read(doc(CONTEXT, fine, "").as_bytes()).unwrap();
        assert_eq!(read_fine.files, ["a.py", "b.py"]);
        let e = error(&doc(CONTEXT, r#"{"fiel": "b.py"}"#, ""));
        assert!(
            e.starts_with(
                "selectedFiles[1].fiel: a field gate does not know (its value at line 2, column "
            ),
            "{e}"
        );
        let e = error(&doc(CONTEXT, fine, r#", "extra": {"deep": 1}"#));
        assert!(e.starts_with("extra: a field gate does not know"), "{e}");
        let context = CONTEXT.replace("\"tree\"", "\"mode\": 1, \"tree\"");
        assert!(error(&doc(&context, fine, "")).starts_with("context.mode: a field"));
        let e = error(&doc(
            CONTEXT,
            r#"{"file": "b.py", "project": {"x": 1}}"#,
            "",
        ));
        assert!(
            e.starts_with("selectedFiles[1].project: invalid type: map, expected a string"),
            "{e}"
        );
        let e = error(&doc(CONTEXT, r#"{"file": "b.py", "file": "c.py"}"#, ""));
        assert!(e.starts_with("selectedFiles[1].file: given twice"), "{e}");
        let e = error(&doc(
            &CONTEXT.replace(r#""lockDigest": null, "#, ""),
            fine,
            "",
        ));
        assert!(
            e.starts_with("context.lockDigest: missing from the object at line 1, column "),
            "{e}"
        );
    }

    #[test]
    fn bad_bytes_and_bad_json_say_where() {
        assert_eq!(
            error_of(b"{\"version\": 1,\n \"x\xff\": 2}"),
            "not UTF-8, at line 2, column 4"
        );
        assert!(
            error("{\"version\": 1, \"selectedFiles\": [")
                .starts_with("not JSON: EOF while parsing")
        );
        assert_eq!(
            error("{\"version\": \"1\"}"),
            "version is not a whole number (line 1, column 13): this gate reads version 1"
        );
        let long = format!(r#"{{"version": 1, "context": "{}"}}"#, "x".repeat(100_000));
        let e = error(&long);
        assert!(
            e.len() < 400 && e.starts_with("context: invalid type: string"),
            "{e}"
        );
        assert!(
            error("{\"version\": 1, \"\\u001b[2J\\n\": 1}")
                .starts_with(r#""\u{1b}[2J\n": a field"#)
        );
    }
}
