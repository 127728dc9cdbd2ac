//! Go's identity for fingerprints: the `go env` values that change a build and a test run,
//! hashed, kept while what they follow from holds.

use crate::lang::toolchain::{Stat, ask, hash, resolve, stat};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `go env` values that change a build, asked once and kept while everything they follow
/// from holds: the `go` binary `PATH` finds (its resolved file), every `GO*`/`CGO_*` variable
/// and those that move the `go env` file (gate's environment under the runner's `[env]`),
/// that file, and the root `go.mod`/`go.work` (a `toolchain` line switches the toolchain).
pub(crate) fn identity(
    root: &Path,
    state: &Path,
    runner_env: &std::collections::BTreeMap<String, String>,
) -> Result<String, String> {
    let file = state.join("cache").join("toolchains.json");
    let mut vars: std::collections::BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("GO") || k.starts_with("CGO_"))
        .collect();
    for name in ["HOME", "XDG_CONFIG_HOME", "PATH"] {
        vars.extend(std::env::var(name).ok().map(|v| (name.to_string(), v)));
    }
    vars.extend(runner_env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let config = vars.get("GOENV").map(PathBuf::from).or_else(|| {
        let base = vars.get("XDG_CONFIG_HOME").map(PathBuf::from);
        let base = base.or_else(|| vars.get("HOME").map(|h| Path::new(h).join(".config")));
        base.map(|b| b.join("go").join("env"))
    });
    let binary = resolve("go", root).and_then(|p| std::fs::canonicalize(p).ok());
    let mut watched: Vec<PathBuf> = binary.into_iter().chain(config).collect();
    watched.extend(["go.mod", "go.work"].map(|f| root.join(f)));
    // Kept as a digest: a variable's value (a proxy's credentials) never reaches the disk. The
    // `2`: what is asked (GOROOT and GOMODCACHE joined it), so an identity kept before is not
    // taken for one asked now.
    let vars = hash(&serde_json::to_vec(&(2, &vars)).expect("a map of strings serializes"));
    let key = KeptGo {
        vars,
        watched: watched.into_iter().map(|p| (stat(&p), p)).collect(),
        identity: String::new(),
    };
    let kept: Vec<KeptGo> = std::fs::read(&file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    if let Some(k) = kept
        .iter()
        .find(|k| k.vars == key.vars && k.watched == key.watched)
    {
        return Ok(k.identity.clone());
    }
    let out = ask(
        &[
            "go",
            "env",
            "GOVERSION",
            "GOOS",
            "GOARCH",
            "CGO_ENABLED",
            "GOFLAGS",
            "GOEXPERIMENT",
            "GOAMD64",
            "GOARM64",
            "GOTOOLCHAIN",
            // Where the standard library and the module cache are: a test's digest binds their
            // files by path, and another machine's same paths are not these.
            "GOROOT",
            "GOMODCACHE",
        ],
        root,
        runner_env,
    )?;
    let identity = hash(&out);
    let mut all: Vec<KeptGo> = kept.into_iter().filter(|k| k.vars != key.vars).collect();
    all.push(KeptGo {
        identity: identity.clone(),
        ..key
    });
    let skip = all.len().saturating_sub(8);
    if let Ok(bytes) = serde_json::to_vec(&all[skip..]) {
        let _ = crate::cache::blocks::replace(&file, |w| std::io::Write::write_all(w, &bytes));
    }
    Ok(identity)
}

/// One kept Go identity and what it follows from.
#[derive(Serialize, Deserialize, PartialEq, Eq, Debug, Clone)]
struct KeptGo {
    /// The variables' digest.
    vars: String,
    watched: Vec<(Option<Stat>, PathBuf)>,
    identity: String,
}
