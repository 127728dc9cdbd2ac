//! What each test unit's newest passing ledger entry read outside the tree (or, before any
//! pass, its first failing one's): the list of files no commit holds that its run read
//! (modules of the interpreter and its distributions, a git-ignored module, files read outside
//! the repository), kept once per distinct list with, per unit, how many of its first files
//! that unit's run had read. A look-up hashes them again to name the unit's inputs now.

use super::{Param, Store, StoreError, schema};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

impl Store {
    /// Keeps, for each unit of `read`, that its run read the first `count` files of `files` —
    /// replacing what was kept for it when `replaces` (a pass), else only when nothing was (a
    /// failure): in one transaction, the list once, lists no unit reads any more dropped.
    pub(crate) fn keep_outside(
        &mut self,
        files: &[String],
        read: &BTreeMap<String, (usize, bool)>,
    ) -> Result<(), StoreError> {
        if read.is_empty() {
            return Ok(());
        }
        // As JSON: a file's name may hold any character a line could not.
        let text = serde_json::to_string(files).expect("strings serialize");
        let id = crate::fingerprint::hex(&Sha256::digest(text.as_bytes()));
        let write = |tx: &mut dyn super::rollup::Tx| {
            tx.execute(
                schema::OUTSIDE_LIST,
                &[Param::Text(&id), Param::Text(&text)],
            )?;
            for (unit, (count, replaces)) in read {
                let count = i32::try_from(*count).unwrap_or(i32::MAX);
                let sql = if *replaces {
                    schema::OUTSIDE
                } else {
                    schema::OUTSIDE_FIRST
                };
                tx.execute(
                    sql,
                    &[Param::Text(unit), Param::Text(&id), Param::Small(count)],
                )?;
            }
            tx.execute(schema::OUTSIDE_UNUSED, &[])?;
            Ok(())
        };
        match self {
            Store::Sqlite(s) => s.write(write),
            Store::Postgres(s) => s.write(write),
        }
    }

    /// What each of `units`' newest entries read outside the tree: the lists by id, each read
    /// once however many units share it, and per unit its list and how many of its first
    /// files (units with none are absent).
    pub(crate) fn outside_of(&mut self, units: &[&str]) -> Result<OutsideKept, StoreError> {
        let mut kept = OutsideKept::default();
        for r in self.query_in(schema::OUTSIDE_OF, units)? {
            let count = usize::try_from(r[2].int()).unwrap_or_default();
            kept.units.insert(r[0].string(), (r[1].string(), count));
        }
        let mut ids: Vec<&str> = kept.units.values().map(|(id, _)| id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        for r in self.query_in(schema::OUTSIDE_LISTS, &ids)? {
            // A list that does not decode names nothing: its units read what no one can name.
            if let Ok(files) = serde_json::from_str::<Vec<String>>(&r[1].string()) {
                kept.lists.insert(r[0].string(), files);
            }
        }
        // A unit whose list is gone (a store edited by hand) read what no one can name.
        kept.units.retain(|_, (id, _)| kept.lists.contains_key(id));
        Ok(kept)
    }
}

/// What units' newest entries read outside the tree, as kept.
#[derive(Default)]
pub(crate) struct OutsideKept {
    /// List id → its files.
    pub lists: BTreeMap<String, Vec<String>>,
    /// Unit → its list's id and how many of its first files the unit read.
    pub units: BTreeMap<String, (String, usize)>,
}
