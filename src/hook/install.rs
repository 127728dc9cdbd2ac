//! Installing the pre-push hook: into `core.hooksPath` when set, else the repository's
//! `hooks/` directory. A pre-push hook gate did not write is never overwritten: gate refuses,
//! or with `--chain` moves it aside and runs it first. Uninstalling removes only gate's hook and
//! puts a chained one back.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// The hook script shipped in `hooks/pre-push`; `@GATE_BIN@` becomes the installing binary.
const TEMPLATE: &str = include_str!("../../hooks/pre-push");
/// The line that marks a hook as gate's.
const MARKER: &str = "# gate: pre-push hook";
/// Where `--chain` moves a foreign hook; gate's hook runs it first with the same input.
pub(crate) const CHAINED: &str = "pre-push.before-gate";

/// The directory git runs hooks from: `core.hooksPath` (relative to the working tree, as git
/// reads it), else `hooks/` of the common git directory (shared by linked worktrees).
pub(crate) fn hooks_dir(repo: &git2::Repository) -> Result<PathBuf> {
    let config = repo
        .config()
        .map_err(|e| Error::git("cannot read the repository's git config", e))?;
    match config.get_path("core.hooksPath") {
        Ok(path) if path.is_absolute() => Ok(path),
        Ok(path) => Ok(repo.workdir().unwrap_or_else(|| repo.path()).join(path)),
        Err(_) => Ok(repo.commondir().join("hooks")),
    }
}

/// The script with `binary` recorded, quoted for `sh`.
pub(crate) fn script(binary: &Path) -> String {
    let quoted = format!("'{}'", binary.display().to_string().replace('\'', r"'\''"));
    TEMPLATE.replace("'@GATE_BIN@'", &quoted)
}

pub(crate) enum Installed {
    New,
    Replaced,
    Chained,
}

pub(crate) fn install(dir: &Path, binary: &Path, chain: bool) -> Result<Installed> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(dir, "cannot create the hooks directory", e))?;
    let hook = dir.join("pre-push");
    let existing = std::fs::read_to_string(&hook).ok();
    let mut state = match &existing {
        None if hook.exists() => {
            return Err(Error::Usage(format!(
                "{}: exists but cannot be read — remove it or move it aside first",
                hook.display()
            )));
        }
        None => Installed::New,
        Some(text) if text.contains(MARKER) => Installed::Replaced,
        Some(_) if !chain => {
            return Err(Error::Usage(format!(
                "{} exists and was not installed by gate; left untouched — re-run with --chain to run it before gate, or remove it",
                hook.display()
            )));
        }
        Some(_) => {
            let aside = dir.join(CHAINED);
            if aside.exists() {
                return Err(Error::Usage(format!(
                    "{} exists and {} is already taken; left both untouched",
                    hook.display(),
                    aside.display()
                )));
            }
            std::fs::rename(&hook, &aside)
                .map_err(|e| Error::io(&hook, "cannot move the existing hook aside", e))?;
            Installed::Chained
        }
    };
    if matches!(state, Installed::Replaced) && dir.join(CHAINED).exists() {
        state = Installed::Chained;
    }
    write_executable(&hook, &script(binary))?;
    Ok(state)
}

/// What `uninstall` did: nothing to remove, gate's hook removed, or the chained hook put back.
pub(crate) enum Uninstalled {
    Nothing,
    Hook,
    Restored,
}

pub(crate) fn uninstall(dir: &Path) -> Result<Uninstalled> {
    let hook = dir.join("pre-push");
    let Ok(text) = std::fs::read_to_string(&hook) else {
        return Ok(Uninstalled::Nothing);
    };
    if !text.contains(MARKER) {
        return Err(Error::Usage(format!(
            "{} was not installed by gate; left untouched",
            hook.display()
        )));
    }
    std::fs::remove_file(&hook).map_err(|e| Error::io(&hook, "cannot remove the hook", e))?;
    let aside = dir.join(CHAINED);
    if aside.exists() {
        std::fs::rename(&aside, &hook)
            .map_err(|e| Error::io(&aside, "cannot put the chained hook back", e))?;
        return Ok(Uninstalled::Restored);
    }
    Ok(Uninstalled::Hook)
}

fn write_executable(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| Error::io(path, "cannot write the hook", e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| Error::io(path, "cannot make the hook executable", e))?;
    }
    Ok(())
}
