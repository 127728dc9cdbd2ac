//! `gate install-hook` / `gate uninstall-hook`.

use crate::error::{Error, Result};
use crate::exit_codes;
use crate::hook::install::{self, Installed, Uninstalled};
use crate::repo;
use std::path::Path;

pub(super) fn install(dir: &Path, chain: bool) -> Result<u8> {
    let repo = repo::open(dir)?;
    let hooks = install::hooks_dir(&repo)?;
    let binary = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| Error::io("gate", "cannot tell where this gate binary is", e))?;
    let how = match install::install(&hooks, &binary, chain)? {
        Installed::New => "installed".to_string(),
        Installed::Replaced => "updated".to_string(),
        Installed::Chained => format!(
            "installed; the existing hook (now {}) runs first",
            install::CHAINED
        ),
    };
    say!(
        "gate: pre-push hook {how}: {} (runs {})",
        hooks.join("pre-push").display(),
        binary.display()
    );
    Ok(exit_codes::OK)
}

pub(super) fn uninstall(dir: &Path) -> Result<u8> {
    let repo = repo::open(dir)?;
    let hooks = install::hooks_dir(&repo)?;
    let hook = hooks.join("pre-push");
    match install::uninstall(&hooks)? {
        Uninstalled::Nothing => say!("gate: no pre-push hook in {}", hooks.display()),
        Uninstalled::Hook => say!("gate: removed {}", hook.display()),
        Uninstalled::Restored => say!(
            "gate: removed gate's hook and put the chained one back at {}",
            hook.display()
        ),
    }
    Ok(exit_codes::OK)
}
