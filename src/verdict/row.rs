//! A changed path's row, up to what reaches it: refused when no edge can name the path,
//! `named_full` for a manifest of the suite, with a manifest of a project of its own told
//! apart.

use super::conclude::{conclude, sub_project};
use super::names::unbuilt_go;
use super::reach::{depends_edges, graph_edges};
use super::{Context, Memo, Row, Verdict};
use crate::repo::diff::Change;
use std::collections::BTreeMap;

pub(super) fn row(
    change: &Change,
    ctx: &Context<'_>,
    cut: &mut BTreeMap<String, Vec<String>>,
    memo: &mut Memo,
) -> Row {
    let path = &change.path;
    let mut row = Row {
        path: path.clone(),
        status: change.status,
        other: change.other.clone(),
        verdict: Verdict::Resolved,
        reasons: Vec::new(),
        tests: Vec::new(),
        edges: Vec::new(),
        counted: false,
    };
    if change.non_utf8 {
        row.verdict = Verdict::Refused;
        row.reasons.push(format!(
            "{path}: the path is not valid UTF-8, so no edge can name it"
        ));
        return row;
    }
    if let Some(fact) = ctx.links.get(path.as_str()) {
        row.reasons.push(fact.clone());
    }
    if let Some((reason, builtin)) = ctx
        .config
        .whole_suite_match(path)
        .filter(|_| !unbuilt_go(path))
    {
        // An example's own requirements, or the docs build's (`docs/requirements.txt`: an
        // inert glob covers it), are not the suite's: what reaches the file decides.
        let elsewhere = builtin
            .then(|| match sub_project(path, ctx) {
                Some(project) => Some(format!(
                    "{reason} of the project in {project}/, which holds none of the gated tests — not the suite's"
                )),
                None => ctx.config.inert.is_match(path).then(|| {
                    format!("{reason} where the inert globs say no test looks — not the suite's")
                }),
            })
            .flatten();
        match elsewhere {
            Some(why) => row.reasons.push(why),
            None => {
                row.verdict = Verdict::NamedFull;
                row.reasons.push(reason.to_string());
                return row;
            }
        }
    }
    let reach = graph_edges(path, ctx, &mut row, cut);
    let ruled = depends_edges(path, ctx, &mut row);
    row.edges.sort_by(|a, b| a.test.cmp(&b.test));
    row.tests = row.edges.iter().map(|e| e.test.clone()).collect();
    if let Some(flags) = ctx.flagged.get(path.as_str()) {
        row.reasons.extend(flags.reasons());
    }
    conclude(change, ctx, row, ruled, reach, memo)
}
