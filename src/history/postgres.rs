//! The PostgreSQL store, for CI fleets whose legs record at the same time: the same schema and
//! behaviour as SQLite. Writers take a transaction-scoped advisory lock, so the store's
//! sequence is also commit order (triage's "only what was recorded before" holds), and a leg's
//! results go in one multi-row insert (`UNNEST` of arrays: one round trip per leg).

use super::schema::{self, Dialect, SCHEMA_VERSION, migrations};
use super::{Change, Leg, Param, Recorded, StoreError, Summary, Value, fail, outcome_name};
use crate::run::events::TestResult;
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls, Transaction};

pub(super) const DIALECT: Dialect = Dialect {
    serial: "BIGSERIAL PRIMARY KEY",
    now: "TIMESTAMPTZ NOT NULL DEFAULT now()",
    unix_now: "CAST(extract(epoch FROM now()) AS BIGINT)",
    unix_of_recorded_at: "CAST(extract(epoch FROM recorded_at) AS BIGINT)",
};

type Err = postgres::Error;

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
        let err = |what: &str| fail::<Err>(&name, what);
        let mut tx = self
            .client
            .transaction()
            .map_err(err("cannot begin the migration"))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK])
            .map_err(err("cannot lock the store to migrate it"))?;
        tx.batch_execute(schema::META_TABLE)
            .map_err(err("cannot create the schema table"))?;
        let found: Option<String> = tx
            .query_opt(schema::READ_VERSION, &[])
            .map_err(err("cannot read the schema version"))?
            .map(|row| row.get(0));
        for migration in migrations(&name, &DIALECT, found)? {
            tx.batch_execute(&migration)
                .map_err(err("cannot migrate the schema"))?;
        }
        tx.execute(schema::WRITE_VERSION, &[&SCHEMA_VERSION.to_string()])
            .map_err(err("cannot write the schema version"))?;
        tx.commit().map_err(err("cannot commit the migration"))
    }

    /// A write transaction holding the writers' lock: legs commit one at a time, so the
    /// sequence is commit order.
    fn write(&mut self, what: &str) -> Result<Transaction<'_>, StoreError> {
        let name = self.name.clone();
        let mut tx = self
            .client
            .transaction()
            .map_err(fail::<Err>(&name, what))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK])
            .map_err(fail::<Err>(&name, what))?;
        Ok(tx)
    }

    pub(super) fn query(
        &mut self,
        text: &str,
        params: &[Param<'_>],
    ) -> Result<Vec<Vec<Value>>, StoreError> {
        let err = |what: &str| fail::<Err>(&self.name, what);
        let owned: Vec<Box<dyn ToSql + Sync>> = params
            .iter()
            .map(|p| -> Box<dyn ToSql + Sync> {
                match p {
                    Param::Int(v) => Box::new(*v),
                    Param::Text(t) => Box::new(t.to_string()),
                }
            })
            .collect();
        let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
        let rows = self
            .client
            .query(DIALECT.spell(text).as_str(), &refs)
            .map_err(err("cannot read the store"))?;
        Ok(rows
            .iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| {
                        let t = row.columns()[i].type_();
                        let v = if *t == Type::INT8 {
                            row.get::<_, Option<i64>>(i).map(Value::Int)
                        } else if *t == Type::INT4 {
                            row.get::<_, Option<i32>>(i).map(|v| Value::Int(v.into()))
                        } else {
                            row.get::<_, Option<String>>(i).map(Value::Text)
                        };
                        v.unwrap_or(Value::Null)
                    })
                    .collect()
            })
            .collect())
    }

    pub(super) fn record(
        &mut self,
        leg: &Leg,
        results: &[TestResult],
        change: &Change,
        digest: &str,
    ) -> Result<Recorded, StoreError> {
        let name = self.name.clone();
        let err = |what: &str| fail::<Err>(&name, what);
        let mut tx = self.write("cannot lock the store to record")?;
        let attempt = leg.attempt as i32;
        let existing: Option<(i64, String)> = tx
            .query_opt(schema::FIND_RUN, &[&leg.run, &attempt, &leg.leg])
            .map_err(err("cannot look the leg up"))?
            .map(|row| (row.get(0), row.get(1)));
        match &existing {
            Some((seq, old)) if old == digest => return Ok(Recorded::Unchanged(*seq)),
            Some((seq, _)) => {
                for table in schema::LEG_TABLES {
                    tx.execute(&format!("DELETE FROM {table} WHERE seq = $1"), &[seq])
                        .map_err(err("cannot replace the leg"))?;
                }
            }
            None => {}
        }
        let seq: i64 = tx
            .query_one(
                &format!("{} RETURNING seq", DIALECT.spell(schema::INSERT_RUN)),
                &[
                    &leg.run,
                    &attempt,
                    &leg.leg,
                    &leg.commit,
                    &leg.branch,
                    &leg.env.to_string(),
                    &leg.source,
                    &digest,
                    &i32::from(leg.mainline),
                    &leg.base,
                ],
            )
            .map_err(err("cannot write the leg"))?
            .get(0);
        insert_rows(&mut tx, seq, results, change).map_err(err("cannot write the leg's rows"))?;
        tx.commit().map_err(err("cannot commit the leg"))?;
        Ok(match existing {
            Some(_) => Recorded::Replaced(seq),
            None => Recorded::New(seq),
        })
    }

    pub(super) fn write_rollup(&mut self, leg: &str, rows: &[Summary]) -> Result<(), StoreError> {
        let name = self.name.clone();
        let mut tx = self.write("cannot lock the store to roll up")?;
        upsert(&mut tx, leg, rows).map_err(fail::<Err>(&name, "cannot write the rollup"))?;
        tx.commit()
            .map_err(fail::<Err>(&name, "cannot commit the rollup"))
    }

    pub(super) fn replace_rollup(
        &mut self,
        legs: &[(String, Vec<Summary>)],
    ) -> Result<(), StoreError> {
        let name = self.name.clone();
        let err = |what: &str| fail::<Err>(&name, what);
        let mut tx = self.write("cannot lock the store to roll up")?;
        tx.execute("DELETE FROM rollup", &[])
            .map_err(err("cannot clear the rollup"))?;
        for (leg, rows) in legs {
            upsert(&mut tx, leg, rows).map_err(err("cannot write the rollup"))?;
        }
        tx.commit().map_err(err("cannot commit the rollup"))
    }
}

/// A leg's results, changed paths and selection: one multi-row insert each.
fn insert_rows(
    tx: &mut Transaction<'_>,
    seq: i64,
    results: &[TestResult],
    change: &Change,
) -> Result<(), Err> {
    let ids: Vec<&str> = results.iter().map(|r| r.id.as_str()).collect();
    let files: Vec<Option<&str>> = results.iter().map(|r| r.file.as_deref()).collect();
    let tries: Vec<i32> = results.iter().map(|r| r.attempt as i32).collect();
    let outcomes: Vec<&str> = results.iter().map(|r| outcome_name(r.outcome)).collect();
    let durations: Vec<i64> = results.iter().map(|r| r.duration_ms as i64).collect();
    tx.execute(
        "INSERT INTO results (seq, test_id, file, try, outcome, duration_ms) \
         SELECT $1, * FROM UNNEST($2::text[], $3::text[], $4::int[], $5::text[], $6::bigint[])",
        &[&seq, &ids, &files, &tries, &outcomes, &durations],
    )?;
    let firsts = |pairs: &[(String, String)]| -> (Vec<String>, Vec<String>) {
        pairs.iter().cloned().unzip()
    };
    let (paths, verdicts) = firsts(&change.paths);
    tx.execute(
        "INSERT INTO changes (seq, path, verdict) SELECT $1, * FROM UNNEST($2::text[], $3::text[])",
        &[&seq, &paths, &verdicts],
    )?;
    let (units, causes) = firsts(&change.selected);
    tx.execute(
        "INSERT INTO selected (seq, unit, cause) SELECT $1, * FROM UNNEST($2::text[], $3::text[])",
        &[&seq, &units, &causes],
    )?;
    Ok(())
}

/// Rollup rows, one multi-row upsert.
fn upsert(tx: &mut Transaction<'_>, leg: &str, rows: &[Summary]) -> Result<(), Err> {
    let int = |f: fn(&Summary) -> u32| -> Vec<i32> { rows.iter().map(|s| f(s) as i32).collect() };
    let tests: Vec<&str> = rows.iter().map(|s| s.test.as_str()).collect();
    let files: Vec<Option<&str>> = rows.iter().map(|s| s.file.as_deref()).collect();
    let through: Vec<i64> = rows.iter().map(|s| s.through_seq).collect();
    let since: Vec<Option<&str>> = rows
        .iter()
        .map(|s| s.failing_on_main.as_ref().map(|f| f.since.as_str()))
        .collect();
    let median: Vec<Option<i64>> = rows.iter().map(|s| s.median_ms).collect();
    let p90: Vec<Option<i64>> = rows.iter().map(|s| s.p90_ms).collect();
    let sql = format!(
        "{} {}",
        "INSERT INTO rollup (test_id, leg, file, through_seq, runs, passed, failed, errors, skipped, flaky, failing_since, failing_main_runs, median_ms, p90_ms) \
         SELECT t, $1, f, th, ru, pa, fa, er, sk, fl, si, fm, me, p9 FROM UNNEST($2::text[], $3::text[], $4::bigint[], $5::int[], $6::int[], $7::int[], $8::int[], $9::int[], $10::int[], $11::text[], $12::int[], $13::bigint[], $14::bigint[]) \
         AS u(t, f, th, ru, pa, fa, er, sk, fl, si, fm, me, p9)",
        &schema::UPSERT_ROLLUP[schema::UPSERT_ROLLUP.find("ON CONFLICT").unwrap_or(0)..]
    );
    tx.execute(
        sql.as_str(),
        &[
            &leg,
            &tests,
            &files,
            &through,
            &int(|s| s.runs),
            &int(|s| s.passed),
            &int(|s| s.failed),
            &int(|s| s.errors),
            &int(|s| s.skipped),
            &int(|s| s.flaky.len() as u32),
            &since,
            &int(|s| s.failing_on_main.as_ref().map_or(0, |f| f.runs)),
            &median,
            &p90,
        ],
    )?;
    Ok(())
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
