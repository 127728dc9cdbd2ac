//! Strongly connected components of the dependency relation, found only from the starts asked
//! for (Tarjan's algorithm, iterative: a deep import chain must not overflow the stack). Each
//! component is reported after every component it reaches, so a caller can fold its
//! dependencies into it — one pass over what the selected tests reach, however many share it.

use super::Graph;
use super::walk::NONE;

/// The nodes each node needs directly, for the nodes a walk may enter:
/// `targets[start[n]..start[n + 1]]`.
#[derive(Default)]
pub(crate) struct Needs {
    start: Vec<u32>,
    targets: Vec<u32>,
}

impl Needs {
    pub(crate) fn of(&self, node: u32) -> &[u32] {
        &self.targets[self.start[node as usize] as usize..self.start[node as usize + 1] as usize]
    }
}

impl Graph {
    /// What each node with `enter[node]` needs (a counting sort over the links; the others'
    /// runs are empty, so a warm run whose kept hashes cover most nodes pays little).
    pub(crate) fn needs(&self, enter: &[bool]) -> Needs {
        let n = self.node_count();
        let mut start = vec![0u32; n + 1];
        for l in self.links.iter().filter(|l| enter[l.from as usize]) {
            start[l.from as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let mut targets = vec![0u32; start[n] as usize];
        for l in self.links.iter().filter(|l| enter[l.from as usize]) {
            let at = &mut next[l.from as usize];
            targets[*at as usize] = l.to;
            *at += 1;
        }
        Needs { start, targets }
    }
}

pub(crate) struct Components {
    index: Vec<u32>,
    low: Vec<u32>,
    on_stack: Vec<bool>,
    stack: Vec<u32>,
    /// Per node: its component, `NONE` until found.
    of: Vec<u32>,
    next_index: u32,
    count: u32,
}

impl Components {
    pub(crate) fn new(graph: &Graph) -> Components {
        let n = graph.node_count();
        Components {
            index: vec![NONE; n],
            low: vec![NONE; n],
            on_stack: vec![false; n],
            stack: Vec::new(),
            of: vec![NONE; n],
            next_index: 0,
            count: 0,
        }
    }

    /// The component of `node`, once found.
    pub(crate) fn of(&self, node: u32) -> Option<u32> {
        Some(self.of[node as usize]).filter(|&c| c != NONE)
    }

    /// Finds every component reachable from `start` not found before, calling `found` with
    /// each one's id and members after all the components it reaches.
    pub(crate) fn reach(&mut self, needs: &Needs, start: u32, found: &mut dyn FnMut(u32, &[u32])) {
        if self.index[start as usize] != NONE {
            return;
        }
        let (out_start, out) = (&needs.start, &needs.targets);
        // (node, position in its run of out links)
        let mut calls: Vec<(u32, u32)> = Vec::new();
        self.open(start);
        calls.push((start, out_start[start as usize]));
        while let Some(&mut (v, ref mut at)) = calls.last_mut() {
            if *at < out_start[v as usize + 1] {
                let w = out[*at as usize];
                *at += 1;
                if self.index[w as usize] == NONE {
                    self.open(w);
                    calls.push((w, out_start[w as usize]));
                } else if self.on_stack[w as usize] {
                    self.low[v as usize] = self.low[v as usize].min(self.index[w as usize]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(u, _)) = calls.last() {
                self.low[u as usize] = self.low[u as usize].min(self.low[v as usize]);
            }
            if self.low[v as usize] == self.index[v as usize] {
                let from = self
                    .stack
                    .iter()
                    .rposition(|&m| m == v)
                    .expect("a component's root is on the stack");
                let members = self.stack.split_off(from);
                for &m in &members {
                    self.on_stack[m as usize] = false;
                    self.of[m as usize] = self.count;
                }
                found(self.count, &members);
                self.count += 1;
            }
        }
    }

    /// Whether `node` is found (by a walk or before).
    pub(crate) fn is_found(&self, node: u32) -> bool {
        self.index[node as usize] != NONE
    }

    /// Takes `node` as found already, its own component (a hash kept from an earlier run,
    /// whose closure has not changed: no walk enters it). Returns that component's id.
    pub(crate) fn found_before(&mut self, node: u32) -> u32 {
        debug_assert_eq!(self.index[node as usize], NONE);
        self.index[node as usize] = self.next_index;
        self.next_index += 1;
        self.of[node as usize] = self.count;
        self.count += 1;
        self.count - 1
    }

    fn open(&mut self, node: u32) {
        self.index[node as usize] = self.next_index;
        self.low[node as usize] = self.next_index;
        self.next_index += 1;
        self.stack.push(node);
        self.on_stack[node as usize] = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{EdgeKind, Link, Strings};

    fn graph(names: &[&str], edges: &[(u32, u32)]) -> Graph {
        let mut nodes = Strings::default();
        for n in names {
            nodes.push(n);
        }
        let mut links: Vec<Link> = edges
            .iter()
            .map(|&(from, to)| Link {
                from,
                to,
                kind: EdgeKind::Import,
                line: 1,
                detail: 0,
            })
            .collect();
        links.sort_by_key(Link::key);
        let mut details = Strings::default();
        details.push("");
        Graph::from_parts(nodes, details, links, Vec::new())
    }

    /// a → b ⇄ c → d, e unreached: {d} before {b, c} before {a}; e never found.
    #[test]
    fn components_come_after_what_they_reach() {
        let g = graph(
            &["a", "b", "c", "d", "e"],
            &[(0, 1), (1, 2), (2, 1), (2, 3), (4, 0)],
        );
        let needs = g.needs(&[true; 5]);
        let mut c = Components::new(&g);
        let mut order: Vec<Vec<u32>> = Vec::new();
        c.reach(&needs, 0, &mut |_, m| {
            let mut m = m.to_vec();
            m.sort();
            order.push(m);
        });
        assert_eq!(order, vec![vec![3], vec![1, 2], vec![0]]);
        assert_eq!(c.of(1), c.of(2));
        assert_ne!(c.of(0), c.of(1));
        assert_eq!(c.of(4), None);
        // Reaching again finds nothing new; from e, only e.
        c.reach(&needs, 0, &mut |_, _| panic!("found twice"));
        let mut again = Vec::new();
        c.reach(&needs, 4, &mut |id, m| again.push((id, m.to_vec())));
        assert_eq!(again, vec![(3, vec![4])]);
    }

    /// A chain far deeper than any call stack.
    #[test]
    fn a_deep_chain_is_walked_without_recursion() {
        let n = 200_000u32;
        let names: Vec<String> = (0..n).map(|i| format!("m{i:07}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let edges: Vec<(u32, u32)> = (0..n - 1).map(|i| (i, i + 1)).collect();
        let g = graph(&refs, &edges);
        let needs = g.needs(&vec![true; n as usize]);
        let mut c = Components::new(&g);
        let mut count = 0;
        c.reach(&needs, 0, &mut |_, m| {
            assert_eq!(m.len(), 1);
            count += 1;
        });
        assert_eq!(count, n);
    }
}
