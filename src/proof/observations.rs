//! Observation exports: one recorded run as a versioned JSON document another machine or team
//! can read back — the identities as digests (from the decision frozen for its commit), the
//! inventory, and per test file and leg its outcome, duration and dependencies; no test names,
//! error text or log lines. Bounded: over the limit the dependencies take a compact form (one
//! shared path table, integer references), then become null — unknown, never an empty list,
//! which would say "depends on nothing" — and past that nothing is written. The digest is the
//! SHA-256 of the canonical JSON of the expanded form, so both forms of one export verify to
//! the same digest. `plans/observations.schema.json` is its shape.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The outer document's version; the payload (`observations.version`) is 1 (paths written
/// out) or 2 (a shared path table).
pub(crate) const EXPORT_VERSION: u32 = 1;

/// The export as gate holds it: dependencies as paths.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Export<P = Payload> {
    pub version: u32,
    /// SHA-256 of the canonical JSON of this document without `digest`, its payload expanded.
    #[serde(default)]
    pub digest: String,
    pub source: Source,
    /// The frozen decision the identities and the inventory are taken from.
    pub decision: String,
    pub repository: String,
    pub commit: String,
    pub tree: Option<String>,
    pub base: Option<String>,
    pub base_tree: Option<String>,
    pub config_digest: String,
    pub lock_digest: Option<String>,
    pub environment_digest: Option<String>,
    pub inventory: Vec<String>,
    pub observations: P,
    pub warnings: Vec<String>,
}

/// Where the observations come from: the recorded run and the attempt of each leg.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Source {
    pub run: String,
    pub legs: Vec<LegSource>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct LegSource {
    pub leg: String,
    pub attempt: u32,
    /// The store's time the leg was recorded at, in seconds since the epoch.
    pub recorded_unix: i64,
}

/// Payload version 1: every file's dependencies written out.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Payload {
    pub version: u32,
    pub files: Vec<Observed<String>>,
}

/// Payload version 2: the dependencies as indexes into one shared path table.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Compact {
    pub version: u32,
    pub dependency_paths: Vec<String>,
    pub files: Vec<Observed<u32>>,
}

/// One test file (or Go package) on one leg.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Observed<D> {
    pub file: String,
    pub leg: String,
    /// `passed`, `failed`, `skipped`, or `unknown` (no result: never a pass).
    pub outcome: String,
    /// Its tests with a result.
    pub tests: u32,
    /// The last attempts' milliseconds, summed; null with no result.
    pub duration_ms: Option<u64>,
    /// The files it depends on, by the graph and, when `traced`, what its audited run opened;
    /// null when unknown (the graph cannot bound it — one run's trace does not bound it either —
    /// or the export had to leave them out to fit).
    pub dependencies: Option<Vec<D>>,
    /// The dependencies include a `gate audit` trace of this tree (absent: the graph's alone).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub traced: bool,
}

/// Why an export cannot be written within its limit: its smallest form's size.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooBig {
    pub bytes: usize,
}

/// The export as written: its bytes, and what was given up to fit.
#[derive(Debug)]
pub(crate) struct Written {
    pub bytes: Vec<u8>,
    pub form: &'static str,
    pub warning: Option<String>,
}

impl Export {
    /// Sets the digest over the document as it now stands.
    pub(crate) fn seal(&mut self) {
        self.digest = digest_of(self);
    }

    /// The smallest form within `max` bytes: paths written out, else the shared path table,
    /// else no dependencies (with a warning in the document); none fits: `TooBig`.
    pub(crate) fn bounded(mut self, max: usize) -> Result<Written, TooBig> {
        self.seal();
        let full = to_bytes(&self);
        if full.len() <= max {
            return Ok(Written {
                bytes: full,
                form: "expanded",
                warning: None,
            });
        }
        let compact = to_bytes(&self.compact());
        if compact.len() <= max {
            return Ok(Written {
                bytes: compact,
                form: "compact",
                warning: None,
            });
        }
        let warning = format!(
            "dependencies left out (null: unknown): the export is {} bytes with them, {} in compact form, over the limit of {max}",
            full.len(),
            compact.len()
        );
        for f in &mut self.observations.files {
            f.dependencies = None;
            f.traced = false;
        }
        self.warnings.push(warning.clone());
        self.seal();
        let bare = to_bytes(&self);
        if bare.len() <= max {
            return Ok(Written {
                bytes: bare,
                form: "without dependencies",
                warning: Some(warning),
            });
        }
        Err(TooBig { bytes: bare.len() })
    }

    /// Payload version 2 of the same observations.
    fn compact(&self) -> Export<Compact> {
        let mut table: BTreeMap<&str, u32> = BTreeMap::new();
        for path in self
            .observations
            .files
            .iter()
            .flat_map(|f| f.dependencies.iter().flatten())
        {
            table.insert(path, 0);
        }
        for (i, index) in table.values_mut().enumerate() {
            *index = u32::try_from(i).expect("fewer than 2^32 paths");
        }
        let files = self
            .observations
            .files
            .iter()
            .map(|f| Observed {
                file: f.file.clone(),
                leg: f.leg.clone(),
                outcome: f.outcome.clone(),
                tests: f.tests,
                duration_ms: f.duration_ms,
                dependencies: f
                    .dependencies
                    .as_ref()
                    .map(|d| d.iter().map(|p| table[p.as_str()]).collect()),
                traced: f.traced,
            })
            .collect();
        self.with(Compact {
            version: 2,
            dependency_paths: table.keys().map(|p| (*p).to_string()).collect(),
            files,
        })
    }
}

impl<P> Export<P> {
    fn with<Q>(&self, observations: Q) -> Export<Q> {
        Export {
            version: self.version,
            digest: self.digest.clone(),
            source: self.source.clone(),
            decision: self.decision.clone(),
            repository: self.repository.clone(),
            commit: self.commit.clone(),
            tree: self.tree.clone(),
            base: self.base.clone(),
            base_tree: self.base_tree.clone(),
            config_digest: self.config_digest.clone(),
            lock_digest: self.lock_digest.clone(),
            environment_digest: self.environment_digest.clone(),
            inventory: self.inventory.clone(),
            observations,
            warnings: self.warnings.clone(),
        }
    }
}

fn to_bytes<T: Serialize>(doc: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(doc).expect("an export serializes");
    bytes.push(b'\n');
    bytes
}

fn digest_of(doc: &Export) -> String {
    let mut value = serde_json::to_value(doc).expect("an export serializes");
    value.as_object_mut().expect("an object").remove("digest");
    crate::proof::frozen::digest_of_value(&value)
}

/// Reads an export in either form, checking it as another party's input: the versions, every
/// path repository-relative, every reference inside the path table, every outcome known, and
/// the digest. The expanded export, or what is wrong with it.
pub(crate) fn read(bytes: &[u8]) -> Result<Export, String> {
    let doc: Export<serde_json::Value> =
        serde_json::from_slice(bytes).map_err(|e| format!("not a gate observation export: {e}"))?;
    if doc.version != EXPORT_VERSION {
        return Err(format!(
            "export version {} (this gate reads version {EXPORT_VERSION})",
            doc.version
        ));
    }
    let version = doc
        .observations
        .get("version")
        .and_then(serde_json::Value::as_u64);
    let payload = match version {
        Some(1) => serde_json::from_value::<Payload>(doc.observations.clone())
            .map_err(|e| format!("observations: {e}"))?,
        Some(2) => expand(
            serde_json::from_value::<Compact>(doc.observations.clone())
                .map_err(|e| format!("observations: {e}"))?,
        )?,
        other => {
            return Err(format!(
                "observations: payload version {} (1 or 2 are read)",
                other.map_or_else(|| "missing".to_string(), |v| v.to_string())
            ));
        }
    };
    let export = doc.with(payload);
    check_paths(&export)?;
    let digest = digest_of(&export);
    if digest != export.digest {
        return Err(format!(
            "its digest {} is not the SHA-256 of its content ({digest}): it was changed after it was written",
            export.digest
        ));
    }
    Ok(export)
}

/// Version 2's references resolved against its table.
fn expand(c: Compact) -> Result<Payload, String> {
    let paths = &c.dependency_paths;
    let files = c
        .files
        .into_iter()
        .map(|f| {
            let dependencies = match f.dependencies {
                None => None,
                Some(refs) => Some(
                    refs.iter()
                        .map(|&i| {
                            paths.get(i as usize).cloned().ok_or_else(|| {
                                format!(
                                    "observations: {} refers to dependency path {i}, past the table's {} entries",
                                    f.file,
                                    paths.len()
                                )
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                ),
            };
            Ok(Observed {
                file: f.file,
                leg: f.leg,
                outcome: f.outcome,
                tests: f.tests,
                duration_ms: f.duration_ms,
                dependencies,
                traced: f.traced,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Payload { version: 1, files })
}

const OUTCOMES: [&str; 4] = ["passed", "failed", "skipped", "unknown"];

fn check_paths(e: &Export) -> Result<(), String> {
    let all = e.inventory.iter().chain(
        e.observations
            .files
            .iter()
            .flat_map(|f| std::iter::once(&f.file).chain(f.dependencies.iter().flatten())),
    );
    for path in all {
        if !repo_relative(path) {
            return Err(format!(
                "{path:?} is not a repository-relative path (a path of the repository, `/`-separated, no `..`)"
            ));
        }
    }
    if let Some(f) = e
        .observations
        .files
        .iter()
        .find(|f| !OUTCOMES.contains(&f.outcome.as_str()))
    {
        return Err(format!("{}: unknown outcome {:?}", f.file, f.outcome));
    }
    if let Some(f) = e
        .observations
        .files
        .iter()
        .find(|f| f.traced && f.dependencies.is_none())
    {
        return Err(format!(
            "{}: traced, yet its dependencies are null (a trace is only ever added to known dependencies)",
            f.file
        ));
    }
    Ok(())
}

/// A path as gate writes one: relative, `/`-separated, no empty, `.` or `..` part (a Go
/// package's `./dir` aside), no NUL.
pub(crate) fn repo_relative(path: &str) -> bool {
    let path = path.strip_prefix("./").unwrap_or(path);
    !path.is_empty()
        && !path.contains('\0')
        && !path.contains('\\')
        && path
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn export(files: usize, deps: usize) -> Export {
        let dep = |i: usize| format!("src/pkg/module_with_a_long_name_{i:04}.py");
        Export {
            version: EXPORT_VERSION,
            digest: String::new(),
            source: Source {
                run: "r1".into(),
                legs: vec![LegSource {
                    leg: "py".into(),
                    attempt: 1,
                    recorded_unix: 1_700_000_000,
                }],
            },
            decision: "d".repeat(64),
            repository: "https://example.com/o/r".into(),
            commit: "c".repeat(40),
            tree: Some("t".repeat(40)),
            base: None,
            base_tree: None,
            config_digest: "a".repeat(64),
            lock_digest: None,
            environment_digest: Some("e".repeat(64)),
            inventory: (0..files).map(|i| format!("tests/test_{i}.py")).collect(),
            observations: Payload {
                version: 1,
                files: (0..files)
                    .map(|i| Observed {
                        file: format!("tests/test_{i}.py"),
                        leg: "py".into(),
                        outcome: if i == 0 { "unknown" } else { "passed" }.into(),
                        tests: 3,
                        duration_ms: (i > 0).then_some(12),
                        dependencies: (i != 1).then(|| (0..deps).map(dep).collect()),
                        traced: i == 2,
                    })
                    .collect(),
            },
            warnings: vec![],
        }
    }

    #[test]
    fn each_form_reads_back_to_the_same_export() {
        let e = export(20, 30);
        let full = e.clone().bounded(usize::MAX).unwrap();
        assert_eq!(full.form, "expanded");
        let compact = e.clone().bounded(full.bytes.len() - 1).unwrap();
        assert_eq!(compact.form, "compact");
        assert!(compact.bytes.len() < full.bytes.len() / 3);
        let a = read(&full.bytes).unwrap();
        let b = read(&compact.bytes).unwrap();
        assert_eq!(a, b, "one digest and one content for both forms");
        assert_eq!(
            a.observations.files[1].dependencies, None,
            "null stays null"
        );
        assert_eq!(
            a.observations.files[2].dependencies.as_ref().unwrap().len(),
            30
        );
        assert!(
            a.observations.files[2].traced,
            "the trace's mark kept in both forms"
        );
        // Untraced files carry no mark: an export written before traces reads as it was.
        let written = String::from_utf8(full.bytes.clone()).unwrap();
        assert_eq!(written.matches("\"traced\"").count(), 1, "{written}");
        let bare = e.clone().bounded(compact.bytes.len() - 1).unwrap();
        assert_eq!(bare.form, "without dependencies");
        let c = read(&bare.bytes).unwrap();
        assert!(
            c.observations
                .files
                .iter()
                .all(|f| f.dependencies.is_none() && !f.traced)
        );
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert_ne!(c.digest, a.digest);
        let err = e.bounded(bare.bytes.len() - 1).unwrap_err();
        assert_eq!(err.bytes, bare.bytes.len());
    }

    #[test]
    fn an_edited_or_hostile_export_is_refused() {
        let bytes = export(3, 2).bounded(usize::MAX).unwrap().bytes;
        let text = String::from_utf8(bytes).unwrap();
        let edited = text.replacen("\"passed\"", "\"failed\"", 1);
        assert!(read(edited.as_bytes()).unwrap_err().contains("its digest"));
        let outside = text.replacen("src/pkg/", "../pkg/", 1);
        assert!(
            read(outside.as_bytes())
                .unwrap_err()
                .contains("not a repository-relative")
        );
        let mut untraced = export(3, 2);
        untraced.observations.files[1].traced = true;
        let bytes = untraced.bounded(usize::MAX).unwrap().bytes;
        assert!(
            read(&bytes)
                .unwrap_err()
                .contains("traced, yet its dependencies are null")
        );
        let compact = export(3, 2).bounded(200).err();
        assert!(compact.is_some(), "3 files do not fit 200 bytes");
        let small = export(3, 2);
        let mut c = small.compact();
        c.observations.files[0].dependencies = Some(vec![7]);
        let bytes = serde_json::to_vec(&c).unwrap();
        assert!(
            read(&bytes)
                .unwrap_err()
                .contains("past the table's 2 entries")
        );
        assert!(
            read(b"{}")
                .unwrap_err()
                .starts_with("not a gate observation export")
        );
        for bad in ["/etc/passwd", "a//b", "a/./b", "", "a\\b"] {
            assert!(!repo_relative(bad), "{bad:?}");
        }
        for good in ["tests/test_a.py", "./ws/shop/cart", ".gate.toml"] {
            assert!(repo_relative(good), "{good:?}");
        }
    }
}
