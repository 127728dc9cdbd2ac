//! `gate hook pre-push <remote> <url>`: what the installed hook runs. Every pushed ref becomes a
//! range; refs that end at the same commit are gated as one union (one run); the push is blocked
//! by the first gate that does not pass.

use crate::error::{Error, Result};
use crate::exit_codes;
use crate::hook::push::{self, Action};
use crate::pipeline::{self, Caller, Options, Target};
use crate::repo::{self, range::Resolution};
use crate::report::styles::Styles;
use std::io::Read;
use std::path::Path;

pub(super) fn pre_push(dir: &Path, remote: &str, styles: &Styles) -> Result<u8> {
    let mut stdin = String::new();
    std::io::stdin()
        .read_to_string(&mut stdin)
        .map_err(|e| Error::io("<stdin>", "cannot read the refs git is pushing", e))?;
    let repo = repo::open(dir)?;
    // Refs that end at one commit, in the order git listed them.
    let mut groups: Vec<(git2::Oid, Vec<String>, Vec<Resolution>)> = Vec::new();
    for update in push::parse(&stdin)? {
        match push::action(&repo, remote, &update)? {
            Action::Skip(why) => tell!("gate: {why}"),
            Action::Gate(resolution) => {
                let head = match &resolution {
                    Resolution::Range(r) => r.head,
                    Resolution::MissingBase { head, .. } => *head,
                };
                match groups.iter_mut().find(|(h, _, _)| *h == head) {
                    Some((_, refs, resolutions)) => {
                        refs.push(update.remote_ref.clone());
                        resolutions.push(resolution);
                    }
                    None => groups.push((head, vec![update.remote_ref.clone()], vec![resolution])),
                }
            }
        }
    }
    if groups.is_empty() {
        tell!("gate: nothing to gate in this push");
        return Ok(exit_codes::OK);
    }
    let citation = super::env_decision();
    let retry =
        "GATE_DECISION=\"<citation>\" git push …   (the same push, with the decision recorded)";
    let opts = Options {
        citation: citation.as_deref(),
        ..Options::new(Caller::PrePush, styles, retry.into())
    };
    for (head, refs, resolutions) in groups {
        tell!("gate: pushing {} to {remote} at {head}", refs.join(", "));
        let gated = pipeline::gate(&repo, Target::Ranges(resolutions), &opts)?;
        if gated.code != exit_codes::OK {
            tell!("gate: push blocked (exit {})", gated.code);
            return Ok(gated.code);
        }
    }
    Ok(exit_codes::OK)
}
