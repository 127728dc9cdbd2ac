//! The SQL both stores run: each read and write is written once, its parameters and values in
//! dialect-free types, and a list of keys is cut into chunks under either store's limit.

use super::{StoreError, rollup};

/// Keys in one `IN (…)` list, parameters in one multi-row insert: far below SQLite's (32,766)
/// and PostgreSQL's (65,535) limits on a statement's parameters.
pub(super) const CHUNK: usize = 500;

/// `sql` with `{keys}` spelled as the placeholders `$1, …, $n`.
pub(super) fn keyed(sql: &str, n: usize) -> String {
    let list: Vec<String> = (1..=n).map(|i| format!("${i}")).collect();
    sql.replace("{keys}", &list.join(", "))
}

/// In a write: `sql`, whose `{keys}` stands for a list of `keys`, run once per `CHUNK` of them.
pub(super) fn execute_in(
    tx: &mut dyn rollup::Tx,
    sql: &str,
    keys: &[&str],
) -> Result<(), StoreError> {
    for chunk in keys.chunks(CHUNK) {
        let params: Vec<Param<'_>> = chunk.iter().map(|k| Param::Text(k)).collect();
        tx.execute(&keyed(sql, chunk.len()), &params)?;
    }
    Ok(())
}

/// In a write: `insert`, whose `{rows}` stands for its VALUES list, run once per `CHUNK`
/// parameters: a row `($n, $m, $1, {unix_now})` per pair, `$1` being `shared`.
pub(super) fn insert_pairs(
    tx: &mut dyn rollup::Tx,
    insert: &str,
    shared: &str,
    pairs: &[(&str, &str)],
) -> Result<(), StoreError> {
    for chunk in pairs.chunks(CHUNK / 2) {
        let mut params = vec![Param::Text(shared)];
        let mut rows = Vec::with_capacity(chunk.len());
        for (a, b) in chunk {
            rows.push(format!(
                "(${}, ${}, $1, {{unix_now}})",
                params.len() + 1,
                params.len() + 2
            ));
            params.extend([Param::Text(a), Param::Text(b)]);
        }
        tx.execute(&insert.replace("{rows}", &rows.join(", ")), &params)?;
    }
    Ok(())
}

/// A parameter of a read query: the reads are written once, for both stores.
#[derive(Debug, Clone, Copy)]
pub(super) enum Param<'a> {
    Int(i64),
    /// An `INTEGER` column's value (PostgreSQL's is 32 bits).
    Small(i32),
    Text(&'a str),
    Null,
}

/// A column value a read query returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Value {
    Int(i64),
    Text(String),
    Null,
}

impl Value {
    pub(super) fn int(&self) -> i64 {
        match self {
            Value::Int(v) => *v,
            Value::Text(t) => t.parse().unwrap_or_default(),
            Value::Null => 0,
        }
    }

    pub(super) fn text(&self) -> Option<String> {
        match self {
            Value::Text(t) => Some(t.clone()),
            Value::Int(v) => Some(v.to_string()),
            Value::Null => None,
        }
    }

    pub(super) fn string(&self) -> String {
        self.text().unwrap_or_default()
    }
}
