//! The PostgreSQL store, for CI fleets whose legs record at the same time: the same schema and
//! behaviour as SQLite. Writers take a transaction-scoped advisory lock, so the store's
//! sequence is also commit order (triage's "only what was recorded before" holds), and a leg's
//! results go in one multi-row insert (`UNNEST` of arrays: one round trip per leg).

use super::evidence::{Flake, Rollup};
use super::rollup::Tx;
use super::schema::{self, Dialect, SCHEMA_VERSION, migrations};
use super::{Change, Leg, Param, Source, StoreError, Value, fail, outcome_name};
use crate::run::events::TestResult;
use postgres::types::{ToSql, Type};
use postgres::{Client, GenericClient, NoTls, Transaction};

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
        let opened = |source: Source| StoreError::Open {
            store: name.clone(),
            source,
        };
        let (url, tls) = split_tls(url);
        let client = match tls {
            None => Client::connect(&url, NoTls),
            Some(tls) => Client::connect(&url, tls.connector().map_err(opened)?),
        }
        .map_err(|e| opened(Box::new(e)))?;
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

    pub(super) fn query(
        &mut self,
        text: &str,
        params: &[Param<'_>],
    ) -> Result<Vec<Vec<Value>>, StoreError> {
        query(&mut self.client, &self.name, text, params)
    }

    /// Runs `f` in one write transaction holding the writers' lock (legs commit one at a time,
    /// so the sequence is commit order), committed when it succeeds.
    pub(super) fn write<T>(
        &mut self,
        f: impl FnOnce(&mut dyn Tx) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let name = self.name.clone();
        let err = |what: &str| fail::<Err>(&name, what);
        let mut tx = self
            .client
            .transaction()
            .map_err(err("cannot begin writing"))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK])
            .map_err(err("cannot lock the store to write it"))?;
        let mut w = Writer {
            tx,
            name: name.clone(),
        };
        let out = f(&mut w)?;
        w.tx.commit().map_err(err("cannot commit"))?;
        Ok(out)
    }
}

/// A read in the shared form, on the client or inside a transaction.
fn query(
    client: &mut impl GenericClient,
    name: &str,
    text: &str,
    params: &[Param<'_>],
) -> Result<Vec<Vec<Value>>, StoreError> {
    let owned = owned(params);
    let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
    let rows = client
        .query(DIALECT.spell(text).as_str(), &refs)
        .map_err(fail::<Err>(name, "cannot read the store"))?;
    // A column of a type the shared reads do not use is the store's error, never a panic.
    rows.iter()
        .map(|row| {
            (0..row.len())
                .map(|i| {
                    let t = row.columns()[i].type_();
                    let v = if *t == Type::INT8 {
                        row.try_get::<_, Option<i64>>(i).map(|v| v.map(Value::Int))
                    } else if *t == Type::INT4 {
                        row.try_get::<_, Option<i32>>(i)
                            .map(|v| v.map(|v| Value::Int(v.into())))
                    } else {
                        row.try_get::<_, Option<String>>(i)
                            .map(|v| v.map(Value::Text))
                    };
                    v.map(|v| v.unwrap_or(Value::Null))
                        .map_err(fail::<postgres::Error>(name, "cannot read the store"))
                })
                .collect()
        })
        .collect()
}

fn owned(params: &[Param<'_>]) -> Vec<Box<dyn ToSql + Sync>> {
    params
        .iter()
        .map(|p| -> Box<dyn ToSql + Sync> {
            match p {
                Param::Int(v) => Box::new(*v),
                Param::Small(v) => Box::new(*v),
                Param::Text(t) => Box::new(t.to_string()),
                Param::Null => Box::new(None::<String>),
            }
        })
        .collect()
}

/// A write transaction, as the shared record and rollup code uses it.
struct Writer<'c> {
    tx: Transaction<'c>,
    name: String,
}

impl Tx for Writer<'_> {
    fn query(&mut self, text: &str, params: &[Param<'_>]) -> Result<Vec<Vec<Value>>, StoreError> {
        query(&mut self.tx, &self.name, text, params)
    }

    fn execute(&mut self, text: &str, params: &[Param<'_>]) -> Result<(), StoreError> {
        let owned = owned(params);
        let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
        self.tx
            .execute(DIALECT.spell(text).as_str(), &refs)
            .map(|_| ())
            .map_err(fail::<Err>(&self.name, "cannot write the store"))
    }

    fn insert_run(&mut self, leg: &Leg, digest: &str) -> Result<i64, StoreError> {
        let shard = leg.shard.map(|s| s.to_string());
        Ok(self
            .tx
            .query_one(
                &format!("{} RETURNING seq", DIALECT.spell(schema::INSERT_RUN)),
                &[
                    &leg.run,
                    &(leg.attempt as i32),
                    &leg.name(),
                    &leg.commit,
                    &leg.branch,
                    &leg.env.to_string(),
                    &leg.source,
                    &digest,
                    &i32::from(leg.mainline),
                    &leg.base,
                    &leg.inputs,
                    &leg.leg,
                    &shard,
                ],
            )
            .map_err(fail::<Err>(&self.name, "cannot write the leg"))?
            .get(0))
    }

    fn insert_rows(
        &mut self,
        seq: i64,
        results: &[TestResult],
        evidence: (&[Flake], &[Option<&str>]),
        change: &Change,
    ) -> Result<(), StoreError> {
        insert_rows(&mut self.tx, seq, results, evidence, change)
            .map_err(fail::<Err>(&self.name, "cannot write the leg's rows"))
    }

    fn upsert_rollup(&mut self, leg: &str, rows: &[Rollup]) -> Result<(), StoreError> {
        upsert(&mut self.tx, leg, rows).map_err(fail::<Err>(&self.name, "cannot write the rollup"))
    }
}

/// A leg's results, changed paths and selection: one multi-row insert each.
fn insert_rows(
    tx: &mut Transaction<'_>,
    seq: i64,
    results: &[TestResult],
    (flakes, fingerprints): (&[Flake], &[Option<&str>]),
    change: &Change,
) -> Result<(), Err> {
    let ids: Vec<&str> = results.iter().map(|r| r.id.as_str()).collect();
    let files: Vec<Option<&str>> = results.iter().map(|r| r.file.as_deref()).collect();
    let tries: Vec<i32> = results.iter().map(|r| r.attempt as i32).collect();
    let outcomes: Vec<&str> = results.iter().map(|r| outcome_name(r.outcome)).collect();
    let durations: Vec<i64> = results.iter().map(|r| r.duration_ms as i64).collect();
    let flakes: Vec<i32> = flakes.iter().map(|f| f.code() as i32).collect();
    tx.execute(
        "INSERT INTO results (seq, test_id, file, try, outcome, duration_ms, flake, fingerprint) \
         SELECT $1, * FROM UNNEST($2::text[], $3::text[], $4::int[], $5::text[], $6::bigint[], $7::int[], $8::text[])",
        &[&seq, &ids, &files, &tries, &outcomes, &durations, &flakes, &fingerprints],
    )?;
    let pairs = |pairs: &[(String, String)]| -> (Vec<String>, Vec<String>) {
        pairs.iter().cloned().unzip()
    };
    let (paths, verdicts) = pairs(&change.paths);
    tx.execute(
        "INSERT INTO changes (seq, path, verdict) SELECT $1, * FROM UNNEST($2::text[], $3::text[])",
        &[&seq, &paths, &verdicts],
    )?;
    let (units, causes) = pairs(&change.selected);
    tx.execute(
        "INSERT INTO selected (seq, unit, cause) SELECT $1, * FROM UNNEST($2::text[], $3::text[])",
        &[&seq, &units, &causes],
    )?;
    Ok(())
}

/// Rollup rows, one multi-row upsert.
fn upsert(tx: &mut Transaction<'_>, leg: &str, rows: &[Rollup]) -> Result<(), Err> {
    let int = |f: fn(&Rollup) -> u32| -> Vec<i32> { rows.iter().map(|s| f(s) as i32).collect() };
    let big = |f: fn(&Rollup) -> i64| -> Vec<i64> { rows.iter().map(f).collect() };
    let opt = |f: fn(&Rollup) -> Option<i64>| -> Vec<Option<i64>> { rows.iter().map(f).collect() };
    let tests: Vec<&str> = rows.iter().map(|s| s.test.as_str()).collect();
    let files: Vec<Option<&str>> = rows.iter().map(|s| s.file.as_deref()).collect();
    let since: Vec<Option<&str>> = rows
        .iter()
        .map(|s| s.failing_on_main.as_ref().map(|f| f.since.as_str()))
        .collect();
    let durations: Vec<String> = rows.iter().map(|s| s.durations.text()).collect();
    let on_conflict =
        &schema::UPSERT_ROLLUP[schema::UPSERT_ROLLUP.find("ON CONFLICT").unwrap_or(0)..];
    let sql = format!(
        "INSERT INTO rollup (test_id, leg, file, through_seq, last_unix, window_from, runs, passed, failed, errors, skipped, \
         flaky, fail_then_pass, failing_since, failing_since_seq, failing_main_runs, durations, median_ms, p90_ms) \
         SELECT t, $1, f, th, la, wf, ru, pa, fa, er, sk, fl, ft, si, ss, fm, du, me, p9 FROM UNNEST(\
         $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::int[], $8::int[], $9::int[], $10::int[], \
         $11::int[], $12::int[], $13::int[], $14::text[], $15::bigint[], $16::int[], $17::text[], $18::bigint[], $19::bigint[]) \
         AS u(t, f, th, la, wf, ru, pa, fa, er, sk, fl, ft, si, ss, fm, du, me, p9) {on_conflict}"
    );
    tx.execute(
        sql.as_str(),
        &[
            &leg,
            &tests,
            &files,
            &big(|s| s.through_seq),
            &big(|s| s.last_unix),
            &big(|s| s.window_from),
            &int(|s| s.runs),
            &int(|s| s.passed),
            &int(|s| s.failed),
            &int(|s| s.errors),
            &int(|s| s.skipped),
            &int(|s| s.flaky),
            &int(|s| s.fail_then_pass),
            &since,
            &big(|s| s.failing_on_main.as_ref().map_or(0, |f| f.since_seq)),
            &int(|s| s.failing_on_main.as_ref().map_or(0, |f| f.runs)),
            &durations,
            &opt(Rollup::median_ms),
            &opt(Rollup::p90_ms),
        ],
    )?;
    Ok(())
}

/// How a connection is encrypted, from the URL's `sslmode` (libpq's meanings): `require`
/// encrypts without checking the server's certificate, `verify-ca` checks it against the
/// roots (`sslrootcert=PATH`, else the system's), `verify-full` checks the host name too. No
/// `sslmode`, `prefer` or `disable`: plain, as before.
struct Tls {
    verify_chain: bool,
    verify_host: bool,
    root: Option<String>,
}

impl Tls {
    fn connector(&self) -> Result<postgres_native_tls::MakeTlsConnector, Source> {
        let mut builder = native_tls::TlsConnector::builder();
        builder
            .danger_accept_invalid_certs(!self.verify_chain)
            .danger_accept_invalid_hostnames(!self.verify_host);
        if let Some(root) = &self.root {
            let pem = std::fs::read(root)
                .map_err(|e| format!("sslrootcert `{root}`: cannot read it: {e}"))?;
            builder.add_root_certificate(native_tls::Certificate::from_pem(&pem)?);
        }
        Ok(postgres_native_tls::MakeTlsConnector::new(builder.build()?))
    }
}

/// The URL the driver reads (its `sslmode` is `disable`, `prefer` or `require`: the
/// verifying modes and `sslrootcert` are taken out and kept here), and the TLS it asks for.
fn split_tls(url: &str) -> (String, Option<Tls>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), None);
    };
    let mut kept = Vec::new();
    let (mut mode, mut root) = (None, None);
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("sslmode", m)) => mode = Some(m.to_string()),
            Some(("sslrootcert", r)) => root = Some(r.to_string()),
            _ => kept.push(pair.to_string()),
        }
    }
    let tls = match mode.as_deref() {
        Some("require") => Some((false, false)),
        Some("verify-ca") => Some((true, false)),
        Some("verify-full") => Some((true, true)),
        _ => None,
    };
    match (tls, mode) {
        (Some((verify_chain, verify_host)), _) => {
            kept.push("sslmode=require".into());
            let tls = Tls {
                verify_chain,
                verify_host,
                root,
            };
            (format!("{base}?{}", kept.join("&")), Some(tls))
        }
        // Any other mode is the driver's to read (and to refuse when it is not one).
        (None, Some(m)) => {
            kept.push(format!("sslmode={m}"));
            (format!("{base}?{}", kept.join("&")), None)
        }
        (None, None) => (url.to_string(), None),
    }
}

/// `postgres://user:secret@host/db` → `postgres://user@host/db`: a URL fit for messages.
fn without_password(url: &str) -> String {
    let url = match url.split_once('?') {
        Some((base, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|p| !p.starts_with("password="))
                .collect();
            format!("{base}?{}", kept.join("&"))
        }
        None => url.to_string(),
    };
    let Some((scheme, rest)) = url.split_once("://") else {
        return url;
    };
    match rest.split_once('@') {
        Some((auth, host)) => {
            let user = auth.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}@{host}")
        }
        None => url.clone(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn tls_follows_libpq_s_sslmode() {
        let (url, tls) = super::split_tls(
            "postgres://h/db?sslmode=verify-full&sslrootcert=/ca.pem&application_name=x",
        );
        assert_eq!(url, "postgres://h/db?application_name=x&sslmode=require");
        let tls = tls.unwrap();
        assert!(tls.verify_chain && tls.verify_host);
        assert_eq!(tls.root.as_deref(), Some("/ca.pem"));
        let (_, tls) = super::split_tls("postgres://h/db?sslmode=verify-ca");
        assert!(
            tls.as_ref()
                .is_some_and(|t| t.verify_chain && !t.verify_host)
        );
        let (_, tls) = super::split_tls("postgres://h/db?sslmode=require");
        assert!(
            tls.as_ref()
                .is_some_and(|t| !t.verify_chain && !t.verify_host)
        );
        for plain in [
            "postgres://h/db",
            "postgres://h/db?sslmode=prefer",
            "postgres://h/db?sslmode=disable",
        ] {
            assert!(super::split_tls(plain).1.is_none(), "{plain}");
        }
        assert_eq!(
            super::split_tls("postgres://h/db?sslmode=bogus").0,
            "postgres://h/db?sslmode=bogus"
        );
    }

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
        assert_eq!(
            super::without_password("postgres://h/gate?password=s3cret&sslmode=require"),
            "postgres://h/gate?sslmode=require"
        );
    }
}
