//! A version manager's shim resolved the way the manager resolves it, not run: pyenv's shim
//! is a shell script that runs `pyenv exec`, a chain of some forty processes and a tenth of a
//! second or more, on every call. pyenv picks the version from `PYENV_VERSION`, else the
//! nearest `.python-version` from the folder it runs in upwards, else its global `version`
//! file, and runs `versions/<name>/bin/<command>` of the first listed version that has it.
//! What this cannot follow (a version not installed under that name, `system`'s lookup of
//! a script) is `None`: the shim is then asked, as before.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The interpreter the pyenv shim `shim` runs from `cwd` under `env` (the runner's `[env]`
/// over gate's own environment), or none when `shim` is no pyenv shim or its choice cannot
/// be followed.
pub(super) fn pyenv(shim: &Path, cwd: &Path, env: &BTreeMap<String, String>) -> Option<PathBuf> {
    let shims = shim.parent()?;
    let root = shims.parent()?;
    if shims.file_name()? != "shims" || !root.join("versions").is_dir() || !mentions_pyenv(shim) {
        return None;
    }
    let command = shim.file_name()?;
    let var = |name: &str| env.get(name).cloned().or_else(|| std::env::var(name).ok());
    let names: Vec<String> = match var("PYENV_VERSION").filter(|v| !v.is_empty()) {
        Some(v) => v.split(':').map(str::to_string).collect(),
        None => {
            let start = var("PYENV_DIR").map_or_else(|| cwd.to_path_buf(), PathBuf::from);
            let local = start
                .ancestors()
                .map(|d| d.join(".python-version"))
                .find(|f| f.is_file());
            let file = local.unwrap_or_else(|| root.join("version"));
            match std::fs::read_to_string(&file) {
                Ok(text) => words(&text),
                Err(_) if !file.exists() => vec!["system".to_string()],
                Err(_) => return None,
            }
        }
    };
    // `system` is the next one on PATH; a name that climbs out of `versions` is not pyenv's;
    // one not installed is pyenv's error to give.
    let installed = |name: &String| {
        name != "system"
            && !name.split('/').any(|p| p == ".." || p.is_empty())
            && root.join("versions").join(name).is_dir()
    };
    if !names.iter().all(installed) {
        return None;
    }
    names
        .iter()
        .map(|name| root.join("versions").join(name).join("bin").join(command))
        .find(|candidate| candidate.is_file())
}

/// The version names of a version file: whitespace-separated words, `#` comments left out.
fn words(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(str::split_whitespace)
        .map(str::to_string)
        .collect()
}

/// Whether the script names pyenv in its first bytes (its shims run `pyenv exec`).
fn mentions_pyenv(shim: &Path) -> bool {
    let mut head = vec![0u8; 4096];
    let Ok(n) = std::fs::File::open(shim).and_then(|mut f| std::io::Read::read(&mut f, &mut head))
    else {
        return false;
    };
    head[..n].windows(5).any(|w| w == b"pyenv")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    #[test]
    fn a_pyenv_shim_resolves_as_pyenv_does() {
        let dir = std::env::temp_dir().join(format!("gate-shims-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let root = dir.join("pyenv");
        let shim = root.join("shims/python3");
        for v in ["3.10.1", "3.12.0"] {
            let bin = root.join("versions").join(v).join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            std::fs::write(bin.join("python3"), "").unwrap();
        }
        std::fs::create_dir_all(shim.parent().unwrap()).unwrap();
        std::fs::write(
            &shim,
            "#!/usr/bin/env bash\nexec \"/x/libexec/pyenv\" exec \"$@\"\n",
        )
        .unwrap();
        let project = dir.join("work/project");
        std::fs::create_dir_all(&project).unwrap();
        let none = BTreeMap::new();
        let bin = |v: &str| Some(root.join("versions").join(v).join("bin/python3"));
        // No version file anywhere: `system`, which is not followed.
        assert_eq!(super::pyenv(&shim, &project, &none), None);
        std::fs::write(root.join("version"), "3.10.1\n").unwrap();
        assert_eq!(super::pyenv(&shim, &project, &none), bin("3.10.1"));
        // The nearest local file wins over the global one, the variable over both; the first
        // installed of several names is taken.
        std::fs::write(
            dir.join("work/.python-version"),
            "# pinned\n3.12.0 3.10.1\n",
        )
        .unwrap();
        assert_eq!(super::pyenv(&shim, &project, &none), bin("3.12.0"));
        let env = BTreeMap::from([("PYENV_VERSION".to_string(), "3.10.1".to_string())]);
        assert_eq!(super::pyenv(&shim, &project, &env), bin("3.10.1"));
        let env = BTreeMap::from([("PYENV_VERSION".to_string(), "../../x".to_string())]);
        assert_eq!(super::pyenv(&shim, &project, &env), None);
        // A version not installed is pyenv's error to give: not followed.
        std::fs::write(dir.join("work/.python-version"), "3.12.0 3.11\n").unwrap();
        assert_eq!(super::pyenv(&shim, &project, &none), None);
        // Not a pyenv shim.
        std::fs::write(&shim, "#!/bin/sh\nexec python3 \"$@\"\n").unwrap();
        assert_eq!(super::pyenv(&shim, &project, &none), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
