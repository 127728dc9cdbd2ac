//! The PostgreSQL store, for CI fleets whose legs record at the same time: the same schema and
//! behaviour as SQLite. Writers take a transaction-scoped advisory lock, so the store's
//! sequence is also commit order (triage's "only what was recorded before" holds), and a leg's
//! results go in one multi-row insert (`UNNEST` of arrays: one round trip per leg).

use super::{
    Dialect, Leg, META_TABLE, READ_VERSION, RUNS_OF, Recorded, Row, SCHEMA_VERSION, StoreError,
    WRITE_VERSION, fail, migrations, outcome_name,
};
use crate::run::events::TestResult;
use postgres::{Client, NoTls};

const DIALECT: Dialect = Dialect {
    serial: "BIGSERIAL PRIMARY KEY",
    now: "TIMESTAMPTZ NOT NULL DEFAULT now()",
};

/// The advisory lock every writer of gate's tables holds for its transaction.
const WRITE_LOCK: i64 = 0x6761_7465; // "gate"

pub(crate) struct Store {
    client: Client,
    name: String,
}

impl Store {
    pub(crate) fn open(url: &str) -> Result<Store, StoreError> {
        let name = without_password(url);
        let client = Client::connect(url, NoTls).map_err(|source| StoreError::Open {
            store: name.clone(),
            source: Box::new(source),
        })?;
        let mut store = Store { client, name };
        store.setup()?;
        Ok(store)
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    fn setup(&mut self) -> Result<(), StoreError> {
        let name = self.name.clone();
        let err = |what: &str| fail::<postgres::Error>(&name, what);
        let mut tx = self
            .client
            .transaction()
            .map_err(err("cannot begin the migration"))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK])
            .map_err(err("cannot lock the store to migrate it"))?;
        tx.batch_execute(META_TABLE)
            .map_err(err("cannot create the schema table"))?;
        let found: Option<String> = tx
            .query_opt(READ_VERSION, &[])
            .map_err(err("cannot read the schema version"))?
            .map(|row| row.get(0));
        for migration in migrations(&name, &DIALECT, found)? {
            tx.batch_execute(&migration)
                .map_err(err("cannot migrate the schema"))?;
        }
        tx.execute(WRITE_VERSION, &[&SCHEMA_VERSION.to_string()])
            .map_err(err("cannot write the schema version"))?;
        tx.commit().map_err(err("cannot commit the migration"))
    }

    pub(super) fn record(
        &mut self,
        leg: &Leg,
        results: &[TestResult],
        digest: &str,
    ) -> Result<Recorded, StoreError> {
        let name = self.name.clone();
        let err = |what: &str| fail::<postgres::Error>(&name, what);
        let mut tx = self
            .client
            .transaction()
            .map_err(err("cannot begin recording"))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK])
            .map_err(err("cannot lock the store to record"))?;
        let attempt = leg.attempt as i32;
        let existing: Option<(i64, String)> = tx
            .query_opt(
                "SELECT seq, digest FROM runs WHERE run_id = $1 AND attempt = $2 AND leg = $3",
                &[&leg.run, &attempt, &leg.leg],
            )
            .map_err(err("cannot look the leg up"))?
            .map(|row| (row.get(0), row.get(1)));
        match &existing {
            Some((seq, old)) if old == digest => return Ok(Recorded::Unchanged(*seq)),
            Some((seq, _)) => {
                // No foreign key: a per-row check would cost more than the leg's insert; the
                // results go with their leg here, in the same transaction.
                tx.execute("DELETE FROM results WHERE seq = $1", &[seq])
                    .map_err(err("cannot replace the leg"))?;
                tx.execute("DELETE FROM runs WHERE seq = $1", &[seq])
                    .map_err(err("cannot replace the leg"))?;
            }
            None => {}
        }
        let seq: i64 = tx
            .query_one(
                "INSERT INTO runs (run_id, attempt, leg, commit_sha, branch, env, source, digest) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING seq",
                &[
                    &leg.run,
                    &attempt,
                    &leg.leg,
                    &leg.commit,
                    &leg.branch,
                    &leg.env.to_string(),
                    &leg.source,
                    &digest,
                ],
            )
            .map_err(err("cannot write the leg"))?
            .get(0);
        let ids: Vec<&str> = results.iter().map(|r| r.id.as_str()).collect();
        let files: Vec<Option<&str>> = results.iter().map(|r| r.file.as_deref()).collect();
        let tries: Vec<i32> = results.iter().map(|r| r.attempt as i32).collect();
        let outcomes: Vec<&str> = results.iter().map(|r| outcome_name(r.outcome)).collect();
        let durations: Vec<i64> = results.iter().map(|r| r.duration_ms as i64).collect();
        tx.execute(
            "INSERT INTO results (seq, test_id, file, try, outcome, duration_ms) \
             SELECT $1, * FROM UNNEST($2::text[], $3::text[], $4::int[], $5::text[], $6::bigint[])",
            &[&seq, &ids, &files, &tries, &outcomes, &durations],
        )
        .map_err(err("cannot write the results"))?;
        tx.commit().map_err(err("cannot commit the leg"))?;
        Ok(match existing {
            Some(_) => Recorded::Replaced(seq),
            None => Recorded::New(seq),
        })
    }

    pub(super) fn runs_of(&mut self, id: &str, limit: u32) -> Result<Vec<Row>, StoreError> {
        let err = |what: &str| fail::<postgres::Error>(&self.name, what);
        let rows = self
            .client
            .query(RUNS_OF, &[&id, &i64::from(limit)])
            .map_err(err("cannot read the test's runs"))?;
        Ok(rows
            .iter()
            .map(|r| Row {
                seq: r.get(0),
                run: r.get(1),
                attempt: r.get::<_, i32>(2) as u32,
                leg: r.get(3),
                commit: r.get(4),
                branch: r.get(5),
                outcome: r.get(6),
                duration_ms: r.get(7),
            })
            .collect())
    }
}

/// `postgres://user:secret@host/db` → `postgres://user@host/db`: a URL fit for messages.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.split_once('@') {
        Some((auth, host)) => {
            let user = auth.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn messages_never_show_a_password() {
        assert_eq!(
            super::without_password("postgres://ci:s3cret@db.internal:5432/gate"),
            "postgres://ci@db.internal:5432/gate"
        );
        assert_eq!(
            super::without_password("postgres://localhost/gate"),
            "postgres://localhost/gate"
        );
    }
}
