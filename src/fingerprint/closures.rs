//! Closure hashes: each component of the graph hashed once per run with everything it
//! reaches, so tests sharing a closure share the work, and kept between runs for the
//! components whose reached files did not change.

use super::changed::changed_between;
use super::{Memo, Scope, unbounded_files, value_of};
use crate::graph::{Components, Needs};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

/// Per component of the graph: the hash of its members and of every component it reaches,
/// and whether an input among them cannot be hashed. Tests sharing a closure hash it once.
pub(super) struct Closures {
    components: Components,
    hash: Vec<[u8; 32]>,
    unknown: Vec<bool>,
    /// Whether the component reaches a file not in the tree that exists on disk (a git-ignored
    /// `.env`): hashed by content this run, never kept — it changes with no commit.
    volatile: Vec<bool>,
    unbounded: BTreeSet<String>,
    /// Components hashed by this run (not kept from an earlier one).
    fresh: usize,
    /// The kept cache's keys, when this tree can keep one.
    keys: Option<(u64, u64)>,
    /// The whole-suite files, as kept for this graph key.
    pub(super) whole_suite: Option<Vec<String>>,
    /// What each node not hashed before this run needs.
    needs: Needs,
}

/// One node's own part of a closure hash: its hash, whether an input of it cannot be hashed,
/// whether it reads a file not in the tree from disk.
type Leaf = ([u8; 32], bool, bool);

impl Scope<'_> {
    /// The hash of `file` and everything it reaches, and whether an input among them cannot
    /// be hashed.
    pub(super) fn closure_hash(&self, file: &str, memo: &mut Memo) -> ([u8; 32], bool) {
        let graph = &self.project.graph;
        let Some(id) = graph.id(file) else {
            let mut why = Vec::new();
            let (bytes, _) = self
                .files()
                .leaf(file, &BTreeSet::new(), Some(self.repo), &mut why)
                .expect("read with the repository");
            return (Sha256::digest(&bytes).into(), !why.is_empty());
        };
        let c = self.closures(memo);
        let mut found: Vec<(u32, Vec<u32>)> = Vec::new();
        c.components.reach(&c.needs, id, &mut |component, members| {
            found.push((component, members.to_vec()));
        });
        // Each node's own part on all cores (what must be read from the repository, after);
        // then each component, after what it reaches.
        let leaves = self.leaves(&found, &c.unbounded);
        c.hash_components(&found, &leaves);
        c.fresh += found.len();
        let component = c.components.of(id).expect("reached") as usize;
        (c.hash[component], c.unknown[component])
    }

    /// The own part of each member of the components `found`, by node id.
    fn leaves(&self, found: &[(u32, Vec<u32>)], unbounded: &BTreeSet<String>) -> Vec<Option<Leaf>> {
        let (graph, files) = (&self.project.graph, self.files());
        let leaf = |m: u32, repo: Option<&git2::Repository>| {
            let mut why = Vec::new();
            let (bytes, volatile) = files.leaf(graph.name(m), unbounded, repo, &mut why)?;
            Some((
                m,
                (Sha256::digest(&bytes).into(), !why.is_empty(), volatile),
            ))
        };
        let computed: Vec<(u32, Leaf)> = found
            .par_iter()
            .flat_map_iter(|(_, members)| members.iter().copied())
            .filter_map(|m| leaf(m, None))
            .collect();
        let mut leaves: Vec<Option<Leaf>> = vec![None; graph.node_count()];
        for (m, l) in computed {
            leaves[m as usize] = Some(l);
        }
        for &m in found.iter().flat_map(|(_, members)| members) {
            if leaves[m as usize].is_none() {
                let (_, l) = leaf(m, Some(self.repo)).expect("read with the repository");
                leaves[m as usize] = Some(l);
            }
        }
        leaves
    }

    /// This run's closure hashes, primed with the kept ones still true of this tree.
    fn closures<'m>(&self, memo: &'m mut Memo) -> &'m mut Closures {
        memo.closures.get_or_insert_with(|| {
            let graph = &self.project.graph;
            let mut c = Closures {
                components: Components::new(graph),
                hash: Vec::new(),
                unknown: Vec::new(),
                volatile: Vec::new(),
                unbounded: unbounded_files(graph),
                fresh: 0,
                keys: None,
                whole_suite: None,
                needs: Needs::default(),
            };
            self.prime(&mut c);
            let enter: Vec<bool> = (0..graph.node_count() as u32)
                .map(|n| !c.components.is_found(n))
                .collect();
            c.needs = graph.needs(&enter);
            c
        })
    }

    /// Takes each kept hash whose closure holds no file changed between the kept commit's
    /// tree and this one. The graph key covers the file set, the configuration and the
    /// roots, and a file's edges follow from its own blob under them: a node none of whose
    /// reached files changed has the hash it had.
    fn prime(&self, c: &mut Closures) {
        let (graph, project) = (&self.project.graph, self.project);
        let (Some(graph_key), Some(commit)) = (project.graph_key, self.snapshot.commit()) else {
            return;
        };
        let names: BTreeSet<&str> = project
            .reads
            .values()
            .flat_map(|r| &r.env)
            .map(String::as_str)
            .collect();
        let env_key = {
            let mut h = Sha256::new();
            for name in names {
                h.update(format!("{name}\0{}\0", value_of(name)).as_bytes());
            }
            u64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes"))
        };
        c.keys = Some((graph_key, env_key));
        let state = crate::repo::state_dir(self.repo);
        let Some(kept) =
            crate::cache::closures::load(&state, graph_key, env_key, graph.node_count())
        else {
            return;
        };
        c.whole_suite = Some(kept.whole_suite);
        let Some(changed) = changed_between(self.repo, kept.commit, commit) else {
            return;
        };
        // Whatever reaches a changed file is stale.
        let mut stale = vec![false; graph.node_count()];
        let mut queue: Vec<u32> = changed.iter().filter_map(|f| graph.id(f)).collect();
        while let Some(n) = queue.pop() {
            if !std::mem::replace(&mut stale[n as usize], true) {
                queue.extend(graph.dependents_of(n).filter(|&d| !stale[d as usize]));
            }
        }
        for (id, state) in kept.nodes.into_iter().enumerate() {
            if let crate::cache::closures::State::Known(hash, doubt) = state
                && !stale[id]
            {
                c.components.found_before(id as u32);
                c.hash.push(hash);
                c.unknown.push(doubt);
                c.volatile.push(false);
            }
        }
    }

    /// Keeps this run's closure hashes for the next, when it computed any.
    pub(super) fn keep_closures(&self, memo: &Memo) -> Option<String> {
        let c = memo.closures.as_ref()?;
        let (keys, commit) = (c.keys?, self.snapshot.commit()?);
        if c.fresh == 0 {
            return None;
        }
        use crate::cache::closures::State;
        let nodes: Vec<State> = (0..self.project.graph.node_count() as u32)
            .map(|id| match c.components.of(id) {
                Some(k) if !c.volatile[k as usize] => {
                    State::Known(c.hash[k as usize], c.unknown[k as usize])
                }
                _ => State::Missing,
            })
            .collect();
        // The tree's whole-suite files: the configuration found above the repository is read
        // afresh every run (and is no file of the tree: kept, it would be hashed twice).
        let whole: Vec<String> = memo
            .whole_suite
            .as_ref()
            .map(|(inputs, _)| {
                inputs
                    .iter()
                    .filter(|i| self.snapshot.contains(&i.name))
                    .map(|i| i.name.clone())
                    .collect()
            })
            .or_else(|| c.whole_suite.clone())
            .unwrap_or_default();
        let state = crate::repo::state_dir(self.repo);
        crate::cache::closures::save(&state, keys, commit, &nodes, &whole).err()
    }
}

impl Closures {
    /// Hashes the components `found`, in order, each from its members' `leaves` and the
    /// hashes of the components it reaches (found before it).
    fn hash_components(&mut self, found: &[(u32, Vec<u32>)], leaves: &[Option<Leaf>]) {
        let (mut own, mut reached, mut under) = (Vec::new(), Vec::new(), Vec::new());
        for (component, members) in found {
            let (mut doubt, mut volatile) = (false, false);
            own.clear();
            for &m in members {
                let (hash, why, on_disk) = leaves[m as usize].expect("every member's leaf");
                doubt |= why;
                volatile |= on_disk;
                own.push(hash);
            }
            own.sort_unstable();
            reached.clear();
            reached.extend(
                members
                    .iter()
                    .flat_map(|&m| self.needs.of(m).iter())
                    .filter_map(|&d| self.components.of(d))
                    .filter(|d| d != component),
            );
            reached.sort_unstable();
            reached.dedup();
            doubt |= reached.iter().any(|&d| self.unknown[d as usize]);
            volatile |= reached.iter().any(|&d| self.volatile[d as usize]);
            // Component ids are this run's discovery order: what they reach is ordered by hash.
            under.clear();
            under.extend(reached.iter().map(|&d| self.hash[d as usize]));
            under.sort_unstable();
            let mut h = Sha256::new();
            for leaf in &own {
                h.update(leaf);
            }
            h.update(b"\0reaches\0");
            for u in &under {
                h.update(u);
            }
            debug_assert_eq!(*component as usize, self.hash.len());
            self.hash.push(h.finalize().into());
            self.unknown.push(doubt);
            self.volatile.push(volatile);
        }
    }
}
