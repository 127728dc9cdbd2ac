//! The store's schema, written once for both stores, and the statements both run: each
//! dialect's spellings are placeholders (`{serial}`, `{now}`, `{unix_now}`,
//! `{unix_of_recorded_at}`), parameters are `$n` (SQLite's are `?n`).

use super::StoreError;

/// One migration per version (version N is the first N applied in order).
///
/// 1. `runs` (one row per recorded leg; `seq` is the store's own monotonic order, never reused:
///    triage orders by it, never by the timestamps producers write in their files) and
///    `results` (every attempt of every test; no foreign key — a per-row check would cost more
///    than the leg's insert — it goes with its leg in the same transaction).
/// 2. What a run knows of its change: whether it ran on the default branch, the base its
///    change was taken against, the changed paths with their verdicts and the tests each
///    selected; the store's own time as a number (the window's unit); each result's flaky
///    evidence, decided when it was recorded; the per-test rollup, kept leg by leg (its
///    durations as a histogram, so a leg is added and retired without reading the others).
/// 3. The green ledger: each test file's or package's outcome under an input fingerprint, by
///    commit, branch, leg and store time.
/// 4. Frozen decisions: each selection as it was made, before its run, by its id (the hash of
///    its body), never rewritten; shadow compares: a whole-suite run's failing units judged
///    against the decision for its commit and base.
/// 5. Imported observation exports (another machine's or team's runs), kept whole by the
///    digest that binds them: an import of the same export twice is one row. A shadow
///    compare's selection time (gate's own overhead before the runner starts: `gate costs
///    --from-history`). `gate audit`'s tallies (graph completeness for `gate evaluate`).
/// 6. `gate audit`'s traces of a committed tree (an export's dependencies); how long a leg's
///    recording took.
/// 7. Traced edges: the files each test file's traced run opened, with the commit it was
///    traced at.
/// 8. What a module read while it was being imported, with the commit it was traced at: a
///    read every test that imports the module needs, whichever test imported it first.
/// 9. Each leg's inputs digest: a pass on the same commit is flaky evidence only under the
///    same inputs.
/// 10. Per test file, the repository modules loaded in the process when its last whole,
///     passing traced run ended: what bounds its imports named at run time.
/// 11. A leg's environment and shard apart: `leg` stays the leg's unique name (its
///     environment, with `#K/N` when sharded), `environment` is what history evidence and the
///     rollup are matched by, whichever shard ran a test — the rollup's `leg` column holds it
///     from here on. Legs recorded before had no shard: their name is their environment.
/// 12. Each result's test fingerprint digest (its unit's: test file or Go unit), when a gated
///     run knew it: a pass on the same commit is flaky evidence only under the test's own
///     inputs too — a variable it reads by name, not only the leg's. Null for rows recorded
///     before, for `gate record` (its results ran elsewhere) and for an unknown fingerprint.
/// 13. What a unit's newest ledger entry read outside the tree: the run's list of files no
///     commit holds (loaded modules, files read outside the repository), kept once per
///     distinct list, and per unit how many of its first files the unit's run had read.
pub(super) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE runs (
    seq {serial},
    run_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    leg TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    branch TEXT,
    env TEXT NOT NULL,
    source TEXT NOT NULL,
    digest TEXT NOT NULL,
    recorded_at {now},
    UNIQUE (run_id, attempt, leg)
);
CREATE TABLE results (
    seq BIGINT NOT NULL,
    test_id TEXT NOT NULL,
    file TEXT,
    try INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    duration_ms BIGINT NOT NULL,
    PRIMARY KEY (seq, test_id, try)
);
CREATE INDEX results_by_test ON results (test_id, seq);
"#,
    r#"
ALTER TABLE runs ADD COLUMN mainline INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN base_sha TEXT;
ALTER TABLE runs ADD COLUMN recorded_unix BIGINT NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN flake INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET recorded_unix = {unix_of_recorded_at};
CREATE INDEX runs_by_leg ON runs (leg, recorded_unix);
CREATE INDEX runs_by_run ON runs (run_id, attempt);
CREATE INDEX runs_by_commit ON runs (leg, commit_sha);
CREATE TABLE changes (
    seq BIGINT NOT NULL,
    path TEXT NOT NULL,
    verdict TEXT NOT NULL,
    PRIMARY KEY (seq, path)
);
CREATE INDEX changes_by_path ON changes (path, seq);
CREATE TABLE selected (
    seq BIGINT NOT NULL,
    unit TEXT NOT NULL,
    cause TEXT NOT NULL,
    PRIMARY KEY (seq, unit, cause)
);
CREATE TABLE rollup (
    test_id TEXT NOT NULL,
    leg TEXT NOT NULL,
    file TEXT,
    through_seq BIGINT NOT NULL,
    last_unix BIGINT NOT NULL,
    window_from BIGINT NOT NULL,
    runs INTEGER NOT NULL,
    passed INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    skipped INTEGER NOT NULL,
    flaky INTEGER NOT NULL,
    fail_then_pass INTEGER NOT NULL,
    failing_since TEXT,
    failing_since_seq BIGINT NOT NULL,
    failing_main_runs INTEGER NOT NULL,
    durations TEXT NOT NULL,
    median_ms BIGINT,
    p90_ms BIGINT,
    PRIMARY KEY (test_id, leg)
);
CREATE INDEX rollup_failing ON rollup (failing_main_runs);
"#,
    r#"
CREATE TABLE ledger (
    entry {serial},
    unit TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    outcome TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    branch TEXT,
    mainline INTEGER NOT NULL,
    leg TEXT NOT NULL,
    recorded_unix BIGINT NOT NULL
);
CREATE INDEX ledger_by_print ON ledger (unit, fingerprint, entry);
CREATE INDEX rollup_by_file ON rollup (file);
"#,
    r#"
CREATE TABLE decisions (
    id TEXT PRIMARY KEY,
    commit_sha TEXT,
    base_sha TEXT,
    frozen_unix BIGINT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX decisions_by_commit ON decisions (commit_sha, base_sha, frozen_unix);
CREATE TABLE shadows (
    entry {serial},
    decision_id TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    base_sha TEXT,
    recorded_unix BIGINT NOT NULL,
    failing INTEGER NOT NULL,
    caught INTEGER NOT NULL,
    missed INTEGER NOT NULL,
    flaky INTEGER NOT NULL,
    judged TEXT NOT NULL,
    durations TEXT NOT NULL
);
CREATE INDEX shadows_by_time ON shadows (recorded_unix);
"#,
    r#"
CREATE TABLE observations (
    digest TEXT PRIMARY KEY,
    repository TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    run_id TEXT NOT NULL,
    imported_unix BIGINT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX observations_by_commit ON observations (repository, commit_sha);
ALTER TABLE shadows ADD COLUMN select_ms BIGINT;
CREATE TABLE audits (
    entry {serial},
    tree TEXT NOT NULL,
    recorded_unix BIGINT NOT NULL,
    observed BIGINT NOT NULL,
    covered BIGINT NOT NULL,
    named_full BIGINT NOT NULL,
    missed BIGINT NOT NULL
);
CREATE INDEX audits_by_time ON audits (recorded_unix);
"#,
    r#"
CREATE TABLE traces (
    tree TEXT NOT NULL,
    unit TEXT NOT NULL,
    recorded_unix BIGINT NOT NULL,
    files TEXT NOT NULL,
    PRIMARY KEY (tree, unit)
);
ALTER TABLE runs ADD COLUMN record_ms BIGINT;
CREATE INDEX runs_by_sha ON runs (commit_sha, seq);
"#,
    r#"
CREATE TABLE traced (
    unit TEXT NOT NULL,
    path TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    recorded_unix BIGINT NOT NULL,
    PRIMARY KEY (unit, path)
);
CREATE INDEX traced_by_path ON traced (path);
"#,
    r#"
CREATE TABLE read_by (
    module TEXT NOT NULL,
    path TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    recorded_unix BIGINT NOT NULL,
    PRIMARY KEY (module, path)
);
CREATE INDEX read_by_path ON read_by (path);
"#,
    r#"
ALTER TABLE runs ADD COLUMN inputs TEXT;
"#,
    r#"
CREATE TABLE loaded (
    unit TEXT PRIMARY KEY,
    commit_sha TEXT NOT NULL,
    files TEXT NOT NULL,
    recorded_unix BIGINT NOT NULL
);
"#,
    r#"
ALTER TABLE runs ADD COLUMN environment TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN shard TEXT;
UPDATE runs SET environment = leg;
CREATE INDEX runs_by_environment ON runs (environment, recorded_unix);
CREATE INDEX runs_by_environment_commit ON runs (environment, commit_sha);
"#,
    r#"
ALTER TABLE results ADD COLUMN fingerprint TEXT;
"#,
    r#"
CREATE TABLE outside_lists (
    id TEXT PRIMARY KEY,
    files TEXT NOT NULL
);
CREATE TABLE outside (
    unit TEXT PRIMARY KEY,
    list_id TEXT NOT NULL,
    count INTEGER NOT NULL,
    recorded_unix BIGINT NOT NULL
);
"#,
];

/// Both stores are at the same version.
pub(super) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// A store's spelling of the schema's dialect-specific parts.
pub(super) struct Dialect {
    /// A monotonic integer key.
    pub serial: &'static str,
    /// A time column that defaults to the time of the insert.
    pub now: &'static str,
    /// The store's clock now, in seconds since the epoch.
    pub unix_now: &'static str,
    /// `recorded_at` in seconds since the epoch.
    pub unix_of_recorded_at: &'static str,
}

impl Dialect {
    /// `sql` in this dialect.
    pub(super) fn spell(&self, sql: &str) -> String {
        sql.replace("{serial}", self.serial)
            .replace("{now}", self.now)
            .replace("{unix_now}", self.unix_now)
            .replace("{unix_of_recorded_at}", self.unix_of_recorded_at)
    }
}

/// The table the schema version is kept in, and the statements that read and write it.
pub(super) const META_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
pub(super) const READ_VERSION: &str = "SELECT value FROM meta WHERE key = 'schema_version'";
pub(super) const WRITE_VERSION: &str = "INSERT INTO meta (key, value) VALUES ('schema_version', $1) \
     ON CONFLICT (key) DO UPDATE SET value = excluded.value";

/// The migrations a store at `found` (the stored version text, none for a new store) still
/// needs, in `dialect` — or the refusal of a store newer than this gate.
pub(super) fn migrations(
    store: &str,
    dialect: &'static Dialect,
    found: Option<String>,
) -> Result<impl Iterator<Item = String>, StoreError> {
    let found = found.map_or(0, |v| v.parse().unwrap_or(i64::MAX));
    if found > SCHEMA_VERSION {
        return Err(StoreError::Newer {
            store: store.to_string(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    Ok(MIGRATIONS
        .iter()
        .skip(found.max(0) as usize)
        .map(|m| dialect.spell(m)))
}

/// A leg: its key, then what is stored with it (`$14`: the store's time, spelled in).
pub(super) const INSERT_RUN: &str = "INSERT INTO runs (run_id, attempt, leg, commit_sha, branch, env, source, digest, mainline, base_sha, inputs, environment, shard, recorded_unix) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, {unix_now})";
pub(super) const FIND_RUN: &str =
    "SELECT seq, digest FROM runs WHERE run_id = $1 AND attempt = $2 AND leg = $3";
/// The tables a leg's rows are in, keyed by its `seq`: deleted with it when it is replaced.
pub(super) const LEG_TABLES: &[&str] = &["results", "changes", "selected", "runs"];

/// A test's rows in its latest `$2` legs, newest first.
pub(super) const RUNS_OF: &str = "SELECT r.seq, r.run_id, r.attempt, r.leg, r.commit_sha, r.branch, r.mainline, x.outcome, x.duration_ms \
     FROM results x JOIN runs r ON r.seq = x.seq \
     WHERE x.test_id = $1 AND x.seq IN \
       (SELECT seq FROM results WHERE test_id = $1 GROUP BY seq ORDER BY seq DESC LIMIT $2) \
     ORDER BY r.seq DESC, x.try";

/// The columns every evidence query reads, in `Past`'s order. Evidence is read by
/// environment (`$1` of each below), whichever shard's leg holds it.
const PAST: &str = "SELECT x.test_id, x.file, x.seq, r.run_id, r.commit_sha, r.mainline, x.try, x.outcome, x.duration_ms, r.recorded_unix, x.flake, r.inputs, r.leg, x.fingerprint \
     FROM results x JOIN runs r ON r.seq = x.seq";

/// The history on environment `$1` in store time [`$2`, `$3`) and before seq `$4`, of the tests of leg
/// `$4`: what a rollup after that leg retires (or reads again).
pub(super) fn past_of_leg_tests() -> String {
    format!(
        "{PAST} WHERE r.environment = $1 AND r.recorded_unix >= $2 AND r.recorded_unix < $3 AND x.seq < $4 \
         AND x.test_id IN (SELECT test_id FROM results WHERE seq = $4) \
         ORDER BY x.test_id, x.seq, x.try"
    )
}

/// One test's history on environment `$1` since `$2`, before seq `$4`: `$3` is the test.
pub(super) fn past_of_test() -> String {
    format!(
        "{PAST} WHERE r.environment = $1 AND r.recorded_unix >= $2 AND x.test_id = $3 AND x.seq < $4 \
         ORDER BY x.test_id, x.seq, x.try"
    )
}

/// The history on environment `$1` since `$2`, up to seq `$3`, of the tests of leg `$4` that failed
/// or errored in it: what triage reads.
pub(super) fn past_of_failing() -> String {
    format!(
        "{PAST} WHERE r.environment = $1 AND r.recorded_unix >= $2 AND x.seq <= $3 \
         AND x.test_id IN (SELECT test_id FROM results WHERE seq = $4 AND outcome IN ('failed', 'error')) \
         ORDER BY x.test_id, x.seq, x.try"
    )
}

/// The whole history on environment `$1` since `$2`: a full rollup.
pub(super) fn past_of_environment() -> String {
    format!(
        "{PAST} WHERE r.environment = $1 AND r.recorded_unix >= $2 \
         ORDER BY x.test_id, x.seq, x.try"
    )
}

/// Earlier legs of one commit in one environment, in the window: what flaky evidence is
/// decided from (`$1` environment, `$2` commit, `$3` the new leg's seq, `$4` the window's
/// start, `$5` the inputs), each result with its fingerprint digest (compared per test).
pub(super) const SAME_COMMIT: &str = "SELECT x.test_id, x.outcome, x.fingerprint FROM runs r JOIN results x ON x.seq = r.seq \
     WHERE r.environment = $1 AND r.commit_sha = $2 AND r.seq < $3 AND r.recorded_unix >= $4 AND r.inputs = $5";

/// Whether a leg of environment `$1` was recorded in store time [`$2`, `$3`): anything to
/// retire.
pub(super) const ANY_LEG_BETWEEN: &str = "SELECT 1 FROM runs WHERE environment = $1 AND recorded_unix >= $2 AND recorded_unix < $3 LIMIT 1";

/// The rollup rows of leg `$2`'s tests in environment `$1`.
pub(super) const ROLLUP_STATE: &str = "SELECT test_id, file, through_seq, last_unix, window_from, runs, passed, failed, errors, skipped, \
     flaky, fail_then_pass, failing_since, failing_since_seq, failing_main_runs, durations \
     FROM rollup WHERE leg = $1 AND test_id IN (SELECT test_id FROM results WHERE seq = $2)";

/// The environments legs were recorded in since `$1`.
pub(super) const ENVIRONMENTS_SINCE: &str =
    "SELECT DISTINCT environment FROM runs WHERE recorded_unix >= $1 ORDER BY environment";

/// A run's legs: the latest attempt of each.
pub(super) const LEGS_OF_RUN: &str = "SELECT r.seq, r.run_id, r.attempt, r.leg, r.commit_sha, r.branch, r.mainline, r.base_sha, r.recorded_unix, \
       (SELECT COUNT(*) FROM results x WHERE x.seq = r.seq), r.inputs, r.environment, r.shard \
     FROM runs r WHERE r.run_id = $1 AND r.attempt = (SELECT max(attempt) FROM runs WHERE run_id = $1 AND leg = r.leg) \
     ORDER BY r.leg";

/// The tests of a unit that failed (an attempt failed or errored) in a run recorded at a commit.
pub(super) const FAILED_AT: &str = "SELECT DISTINCT x.test_id FROM results x JOIN runs r ON r.seq = x.seq \
     WHERE r.commit_sha = $1 AND x.file = $2 AND x.outcome IN ('failed', 'error') ORDER BY x.test_id";

/// An audit's tallies, at the store's time.
pub(super) const AUDIT: &str = "INSERT INTO audits (tree, recorded_unix, observed, covered, named_full, missed) \
     VALUES ($1, {unix_now}, $2, $3, $4, $5)";
/// The audits' tallies since `$1`, summed.
pub(super) const AUDITED: &str = "SELECT count(*), CAST(coalesce(sum(observed), 0) AS BIGINT), CAST(coalesce(sum(covered + named_full), 0) AS BIGINT) \
     FROM audits WHERE recorded_unix >= $1";

/// How long a leg's recording took, written last in its own transaction.
pub(super) const RECORD_MS: &str = "UPDATE runs SET record_ms = $1 WHERE seq = $2";

/// What one unit's traced run opened, for a committed tree: a newer trace replaces it.
pub(super) const TRACE: &str = "INSERT INTO traces (tree, unit, recorded_unix, files) VALUES ($1, $2, {unix_now}, $3) \
     ON CONFLICT (tree, unit) DO UPDATE SET files = excluded.files, recorded_unix = excluded.recorded_unix";
/// Units traced again by a whole run (`{keys}`: a list of them): what they opened before is
/// forgotten.
pub(super) const UNTRACE: &str = "DELETE FROM traced WHERE unit IN ({keys})";
/// Files units' traced runs opened, at commit `$1` (`{rows}`: one `($n, $m, $1, {unix_now})`
/// per (unit, file)); a file seen again was last seen at this commit.
pub(super) const TRACED: &str = "INSERT INTO traced (unit, path, commit_sha, recorded_unix) VALUES {rows} \
     ON CONFLICT (unit, path) DO UPDATE SET commit_sha = excluded.commit_sha, recorded_unix = excluded.recorded_unix";
/// What units' traced runs opened (`{keys}`: the units).
pub(super) const TRACED_FROM: &str = "SELECT unit, path FROM traced WHERE unit IN ({keys})";
/// The units whose traced runs opened paths (`{keys}`: the paths).
pub(super) const TRACED_TO: &str =
    "SELECT path, unit, commit_sha FROM traced WHERE path IN ({keys})";
/// Files modules read while they were being imported, at commit `$1` (`{rows}` as `TRACED`'s).
pub(super) const READ_BY: &str = "INSERT INTO read_by (module, path, commit_sha, recorded_unix) VALUES {rows} \
     ON CONFLICT (module, path) DO UPDATE SET commit_sha = excluded.commit_sha, recorded_unix = excluded.recorded_unix";
/// What modules read while they were being imported (`{keys}`: the modules).
pub(super) const READ_BY_FROM: &str = "SELECT module, path FROM read_by WHERE module IN ({keys})";
/// The modules that read paths while they were being imported (`{keys}`: the paths).
pub(super) const READ_BY_TO: &str =
    "SELECT path, module, commit_sha FROM read_by WHERE path IN ({keys})";
/// The modules loaded when a unit's whole traced run ended, at commit `$2` (`$3`: one path a
/// line): a newer whole run replaces them.
pub(super) const LOADED: &str = "INSERT INTO loaded (unit, commit_sha, files, recorded_unix) VALUES ($1, $2, $3, {unix_now}) \
     ON CONFLICT (unit) DO UPDATE SET commit_sha = excluded.commit_sha, files = excluded.files, recorded_unix = excluded.recorded_unix";
/// Units whose whole traced run said nothing of its loads (`{keys}`): none are kept.
pub(super) const UNLOAD: &str = "DELETE FROM loaded WHERE unit IN ({keys})";
/// The modules loaded when units' whole traced runs ended (`{keys}`: the units).
pub(super) const LOADED_FROM: &str = "SELECT unit, files FROM loaded WHERE unit IN ({keys})";
/// A list of files read outside the tree, once however many units and runs share it (`$1`:
/// the hash of its text `$2`, a JSON array of paths).
pub(super) const OUTSIDE_LIST: &str =
    "INSERT INTO outside_lists (id, files) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING";
/// A unit's newest passing entry read the first `$3` files of list `$2`: replaces what it read
/// before.
pub(super) const OUTSIDE: &str = "INSERT INTO outside (unit, list_id, count, recorded_unix) VALUES ($1, $2, $3, {unix_now}) \
     ON CONFLICT (unit) DO UPDATE SET list_id = excluded.list_id, count = excluded.count, recorded_unix = excluded.recorded_unix";
/// As `OUTSIDE`, for a unit none is kept for yet (a failing run's reads replace no pass's).
pub(super) const OUTSIDE_FIRST: &str = "INSERT INTO outside (unit, list_id, count, recorded_unix) VALUES ($1, $2, $3, {unix_now}) \
     ON CONFLICT (unit) DO NOTHING";
/// Lists no unit reads any more.
pub(super) const OUTSIDE_UNUSED: &str =
    "DELETE FROM outside_lists WHERE id NOT IN (SELECT list_id FROM outside)";
/// Which list, and how much of it, units read (`{keys}`: the units).
pub(super) const OUTSIDE_OF: &str =
    "SELECT unit, list_id, count FROM outside WHERE unit IN ({keys})";
/// Lists by id (`{keys}`).
pub(super) const OUTSIDE_LISTS: &str = "SELECT id, files FROM outside_lists WHERE id IN ({keys})";
/// A tree's traces.
pub(super) const TRACES_OF: &str = "SELECT unit, files FROM traces WHERE tree = $1 ORDER BY unit";

/// Every attempt of every test a leg recorded.
pub(super) const RESULTS_OF_LEG: &str = "SELECT test_id, file, try, outcome, duration_ms FROM results \
     WHERE seq = $1 ORDER BY test_id, try";
/// An imported export, once per digest; whether it was new is read back.
pub(super) const KEEP_OBSERVATIONS: &str = "INSERT INTO observations (digest, repository, commit_sha, run_id, imported_unix, body) \
     VALUES ($1, $2, $3, $4, {unix_now}, $5) ON CONFLICT (digest) DO NOTHING";
pub(super) const OBSERVATIONS_KEPT: &str =
    "SELECT imported_unix FROM observations WHERE digest = $1";

/// The latest recorded run.
pub(super) const LATEST_RUN: &str = "SELECT run_id FROM runs ORDER BY seq DESC LIMIT 1";

/// A leg's change: its paths with their verdicts, and the tests each selected.
pub(super) const CHANGES_OF: &str =
    "SELECT path, verdict FROM changes WHERE seq = $1 ORDER BY path";
pub(super) const SELECTED_OF: &str =
    "SELECT unit, cause FROM selected WHERE seq = $1 ORDER BY unit, cause";

/// A rollup row, written over the earlier one of the same (test, environment): the rollup's
/// `leg` column holds the environment.
pub(super) const UPSERT_ROLLUP: &str = "INSERT INTO rollup (test_id, leg, file, through_seq, last_unix, window_from, runs, passed, failed, errors, skipped, \
     flaky, fail_then_pass, failing_since, failing_since_seq, failing_main_runs, durations, median_ms, p90_ms) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) \
     ON CONFLICT (test_id, leg) DO UPDATE SET file = excluded.file, through_seq = excluded.through_seq, \
     last_unix = excluded.last_unix, window_from = excluded.window_from, runs = excluded.runs, \
     passed = excluded.passed, failed = excluded.failed, errors = excluded.errors, skipped = excluded.skipped, \
     flaky = excluded.flaky, fail_then_pass = excluded.fail_then_pass, failing_since = excluded.failing_since, \
     failing_since_seq = excluded.failing_since_seq, failing_main_runs = excluded.failing_main_runs, \
     durations = excluded.durations, median_ms = excluded.median_ms, p90_ms = excluded.p90_ms";

/// A test's rollup in every environment: `ROLLUP_STATE`'s columns, then the environment.
pub(super) const ROLLUP_OF: &str = "SELECT test_id, file, through_seq, last_unix, window_from, runs, passed, failed, errors, skipped, \
     flaky, fail_then_pass, failing_since, failing_since_seq, failing_main_runs, durations, leg \
     FROM rollup WHERE test_id = $1 ORDER BY leg";

/// Tests failing on the default branch now, in any environment: a selection signal.
pub(super) const FAILING_ON_MAIN: &str = "SELECT test_id, file, leg, failing_since, failing_main_runs FROM rollup \
     WHERE failing_main_runs > 0 AND last_unix >= $1 ORDER BY test_id, leg";

/// Tests that failed in runs, since `$1`, whose change touched `$2`: a selection signal.
pub(super) const CO_FAILED: &str = "SELECT DISTINCT x.file, r.run_id FROM changes c \
     JOIN runs r ON r.seq = c.seq JOIN results x ON x.seq = c.seq \
     WHERE c.path = $2 AND r.recorded_unix >= $1 AND x.outcome IN ('failed', 'error') AND x.file IS NOT NULL \
     ORDER BY x.file, r.run_id";

/// A ledger entry, at the store's time.
/// A decision is frozen once: the same id is the same body. The id is the hash of the body, so
/// a row holding another body under it was edited after it was frozen: the true body is put
/// back (a caller writes a body only after checking it hashes to its id).
pub(super) const FREEZE: &str = "INSERT INTO decisions (id, commit_sha, base_sha, frozen_unix, body) \
     VALUES ($1, $2, $3, {unix_now}, $4) ON CONFLICT (id) DO UPDATE SET body = excluded.body \
     WHERE decisions.body <> excluded.body";
pub(super) const DECISION: &str = "SELECT body FROM decisions WHERE id = $1";
/// The decision frozen last for a commit and base.
/// Every decision frozen for commit `$1` against base `$2`, the first frozen first.
pub(super) const DECISIONS_FOR: &str = "SELECT id, body FROM decisions WHERE commit_sha = $1 \
     AND base_sha IS NOT DISTINCT FROM $2 ORDER BY frozen_unix, id";
pub(super) const DECISION_FOR: &str = "SELECT id, body FROM decisions WHERE commit_sha = $1 \
     AND base_sha IS NOT DISTINCT FROM $2 ORDER BY frozen_unix DESC, id LIMIT 1";
pub(super) const SHADOW: &str = "INSERT INTO shadows (decision_id, commit_sha, base_sha, recorded_unix, failing, caught, missed, flaky, judged, durations, select_ms) \
     VALUES ($1, $2, $3, {unix_now}, $4, $5, $6, $7, $8, $9, $10)";
/// The shadow compares in the window, oldest first, with their decisions and the recording
/// time of the latest leg recorded at their commit.
pub(super) const SHADOWS: &str = "SELECT s.decision_id, s.commit_sha, s.judged, s.durations, d.body, s.select_ms, \
     (SELECT r.record_ms FROM runs r WHERE r.commit_sha = s.commit_sha AND r.record_ms IS NOT NULL ORDER BY r.seq DESC LIMIT 1) \
     FROM shadows s JOIN decisions d ON d.id = s.decision_id \
     WHERE s.recorded_unix >= $1 ORDER BY s.entry";
pub(super) const ENTER: &str = "INSERT INTO ledger (unit, fingerprint, outcome, commit_sha, branch, mainline, leg, recorded_unix) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, {unix_now})";

/// A unit's entries under one fingerprint since `$3`, newest first.
pub(super) const ENTRIES: &str = "SELECT outcome, commit_sha, branch, mainline, leg, recorded_unix FROM ledger \
     WHERE unit = $1 AND fingerprint = $2 AND recorded_unix >= $3 ORDER BY entry DESC";

/// Whether a test of a unit has flaky evidence in the rollup since `$2`.
pub(super) const FLAKY_UNIT: &str =
    "SELECT 1 FROM rollup WHERE file = $1 AND flaky > 0 AND last_unix >= $2 LIMIT 1";

/// The entries a prune drops: older than `$1`, or not the newest of their (unit, fingerprint).
pub(super) const PRUNE: &str = "DELETE FROM ledger WHERE recorded_unix < $1 OR entry NOT IN \
     (SELECT max(entry) FROM ledger GROUP BY unit, fingerprint)";
