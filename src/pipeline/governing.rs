//! A change to the configuration that gates it. `.gate.toml` is read from the gated tree, so
//! one commit could break code and loosen its own gate (`runner = "true"`, `max_depth = 0`,
//! `[python] roots` that name nothing). When the gated tree's configuration differs from its
//! base's, the base's governs — the new one takes effect once it has landed, the way protected
//! CI configurations work — and the run says what the new one would do differently.

use crate::config::{self, Config};
use crate::error::Result;
use crate::lang::python::pytest;
use crate::project::{Keep, Project};
use crate::repo::input::Input;
use crate::repo::snapshot::Snapshot;
use crate::verdict::{self, Decision};

/// The configuration a run goes by, and the change it overrules, if any.
pub(super) struct Governing {
    pub config: Config,
    pub change: Option<Change>,
}

/// The gated tree's own configuration, set aside for the base's.
pub(super) struct Change {
    base: git2::Oid,
    new: Config,
}

/// The base's configuration when it differs from the gated tree's (the first base that does,
/// for a push of several ranges), else the tree's own. A tree whose own `.gate.toml` is
/// malformed is an error even then: it must not land.
pub(super) fn governing(
    repo: &git2::Repository,
    snapshot: &Snapshot,
    bases: &[git2::Oid],
) -> Result<Governing> {
    let own = Project::own_config(repo, snapshot)?;
    for &base in bases {
        // Most changes leave the configuration alone: the texts are compared before either
        // is parsed again.
        let theirs = config::text_at(repo, base).and_then(|text| {
            if config::digest(&text) == own.digest {
                Ok(None)
            } else {
                Config::parse(Some(config::FILE), &text).map(Some)
            }
        });
        match theirs {
            Ok(Some(theirs)) => {
                return Ok(Governing {
                    config: theirs,
                    change: Some(Change { base, new: own }),
                });
            }
            Ok(None) => {}
            // A broken configuration must be fixable: the fix is gated by itself.
            Err(e) => crate::terminal::warn(format!(
                "{}'s {} is invalid ({e}); the gated tree's own configuration governs",
                short(base),
                config::FILE
            )),
        }
    }
    Ok(Governing {
        config: own,
        change: None,
    })
}

impl Change {
    /// Says on the `.gate.toml` row (and in the notes) that the base's configuration governed,
    /// and what the new one would change: fewer tests selected, another runner, other steps.
    pub(super) fn explain(
        self,
        repo: &git2::Repository,
        input: &Input,
        deleted: &[String],
        project: &Project,
        decided: &mut Decision,
    ) -> Result<()> {
        let root = crate::repo::workdir(repo)?;
        let base = short(self.base);
        let mut reasons = vec![format!(
            "gated under the configuration of the base {base}: a change to {} takes effect once it has landed",
            config::FILE
        )];
        let old_runner = pytest::base_argv(&project.config, &project.framework, &root);
        let new_runner = pytest::base_argv(&self.new, &project.framework, &root);
        if let Some(kind) = self
            .new
            .python_framework
            .filter(|k| *k != project.framework.kind)
        {
            reasons.push(format!(
                "the new configuration runs the tests with another framework: {} instead of {}",
                kind.name(),
                project.framework.kind.name()
            ));
        }
        if old_runner != new_runner {
            reasons.push(format!(
                "the new configuration runs another runner: `{}` instead of `{}`",
                new_runner.join(" "),
                old_runner.join(" ")
            ));
        }
        if project.config.go_flags != self.new.go_flags {
            reasons.push(format!(
                "the new configuration runs `go test` with other flags: {:?} instead of {:?}",
                self.new.go_flags, project.config.go_flags
            ));
        }
        let steps = |c: &Config| -> Vec<String> {
            c.steps
                .iter()
                .map(|s| match s.argv() {
                    Some(argv) => format!("{} ({})", s.name, argv.join(" ")),
                    None => s.name.clone(),
                })
                .collect()
        };
        if steps(&project.config) != steps(&self.new) {
            reasons.push(format!(
                "the new configuration changes the steps: [{}] instead of [{}]",
                steps(&self.new).join(", "),
                steps(&project.config).join(", ")
            ));
        }
        let aside = Project::load_under(
            repo,
            &input.snapshot,
            deleted,
            self.new,
            Keep::Aside,
            false,
            &mut |_| {},
        )?;
        let theirs = verdict::decide(&input.changes, &aside.context(), false);
        let dropped: Vec<&String> = decided
            .selected
            .keys()
            .filter(|t| !theirs.selected.contains_key(*t))
            .collect();
        if !dropped.is_empty() {
            let shown: Vec<&str> = dropped.iter().take(5).map(|s| s.as_str()).collect();
            reasons.push(format!(
                "the new configuration would select fewer tests: {} of the {} selected here would not run ({}{})",
                dropped.len(),
                decided.selected.len(),
                shown.join(", "),
                if dropped.len() > shown.len() { ", …" } else { "" }
            ));
        }
        decided.notes.push(format!(
            "{} differs from the base {base}'s: this run is gated under the base's configuration",
            config::FILE
        ));
        match decided.rows.iter_mut().find(|r| r.path == config::FILE) {
            Some(row) => row.reasons.extend(reasons),
            None => decided.notes.extend(reasons.into_iter().skip(1)),
        }
        Ok(())
    }
}

fn short(oid: git2::Oid) -> String {
    oid.to_string()[..12].to_string()
}
