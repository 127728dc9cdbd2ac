//! Walks over the graph: the nodes reached from a start, each with the edge that first reached
//! it (so chains are shortest paths), and what a depth cap cut.

use super::{Edge, Graph};
use std::collections::VecDeque;

/// No edge: a node no walk reached.
pub(super) const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
pub(crate) enum Direction {
    Dependents,
    Dependencies,
}

/// The nodes a walk reached, each with the edge that first reached it.
pub(crate) struct Walk {
    start: Option<u32>,
    /// Per node id: the link that reached it, `NONE` where none did.
    via: Vec<u32>,
    /// Reached nodes (within the depth cap), in id order, which is name order.
    reached: Vec<u32>,
    /// Nodes only reachable past `max_depth`, in name order.
    cut: Vec<u32>,
}

impl Walk {
    /// Every reached node's name, sorted.
    pub(crate) fn nodes<'g>(&'g self, graph: &'g Graph) -> impl Iterator<Item = &'g str> + 'g {
        self.reached.iter().map(|&i| graph.name(i))
    }

    /// Every reached node's id, in name order.
    pub(crate) fn ids(&self) -> &[u32] {
        &self.reached
    }

    pub(crate) fn cut<'g>(&'g self, graph: &'g Graph) -> impl Iterator<Item = &'g str> + 'g {
        self.cut.iter().map(|&i| graph.name(i))
    }

    /// The edges from `node` back to the start, in order.
    pub(crate) fn chain(&self, graph: &Graph, node: &str) -> Vec<Edge> {
        let mut chain = Vec::new();
        let (Some(start), Some(mut at)) = (self.start, graph.id(node)) else {
            return chain;
        };
        while let Some(&i) = self.via.get(at as usize).filter(|&&i| i != NONE) {
            let l = graph.links[i as usize];
            chain.push(graph.edge(i));
            at = if l.from == at { l.to } else { l.from };
            if at == start || chain.len() > self.reached.len() {
                break;
            }
        }
        chain
    }

    /// Sorts the `touched` nodes into reached and cut, by their hops in `dist`.
    fn settle(&mut self, touched: Vec<u32>, dist: &[(u32, u32)], max_depth: Option<u32>) {
        for id in touched {
            if max_depth.is_some_and(|m| dist[id as usize].0 > m) {
                self.via[id as usize] = NONE;
                self.cut.push(id);
            } else {
                self.reached.push(id);
            }
        }
        self.reached.sort_unstable();
        self.cut.sort_unstable();
    }
}

impl Graph {
    /// Walks from `start` along dependents (towards tests) or dependencies (from a test).
    /// Each reached node keeps the edge of a path with the fewest import hops
    /// (`EdgeKind::hops`) and, among those, the fewest edges, so chains are shortest paths;
    /// with `max_depth`, nodes beyond the cap (in hops) are reported in `cut`, never silently
    /// dropped.
    pub(crate) fn walk(&self, start: &str, direction: Direction, max_depth: Option<u32>) -> Walk {
        let n = self.nodes.len();
        let mut walk = Walk {
            start: self.id(start),
            via: Vec::new(),
            reached: Vec::new(),
            cut: Vec::new(),
        };
        let Some(start_id) = walk.start else {
            return walk;
        };
        walk.via = vec![NONE; n];
        // Breadth-first by (hops, edges), one hop level at a time: a level's nodes come from two
        // queues, each in order of edges — those the previous level reached over a hop, and
        // those this level reaches over hop-free edges — always the fewer edges first. An entry
        // a shorter path has since replaced is passed over.
        let mut dist: Vec<(u32, u32)> = vec![(u32::MAX, u32::MAX); n];
        let mut touched: Vec<u32> = Vec::new();
        dist[start_id as usize] = (0, 0);
        let mut seeds: VecDeque<(u32, (u32, u32))> = VecDeque::from([(start_id, (0, 0))]);
        let mut found: VecDeque<(u32, (u32, u32))> = VecDeque::new();
        let mut next: VecDeque<(u32, (u32, u32))> = VecDeque::new();
        loop {
            let from_seeds = match (seeds.front(), found.front()) {
                (Some(a), Some(b)) => a.1 <= b.1,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) if next.is_empty() => break,
                (None, None) => {
                    std::mem::swap(&mut seeds, &mut next);
                    continue;
                }
            };
            let (node, (h, e)) = if from_seeds {
                seeds.pop_front()
            } else {
                found.pop_front()
            }
            .expect("the chosen queue has a front");
            if (h, e) != dist[node as usize] {
                continue;
            }
            let mut visit = |i: u32, to: u32| {
                let hops = self.links[i as usize].kind.hops();
                let d = (h + hops, e + 1);
                let at = &mut dist[to as usize];
                if d >= *at {
                    return;
                }
                if at.0 == u32::MAX {
                    touched.push(to);
                }
                *at = d;
                walk.via[to as usize] = i;
                if hops == 0 {
                    found.push_back((to, d));
                } else {
                    next.push_back((to, d));
                }
            };
            self.each_link(node, direction, &mut visit);
        }
        walk.settle(touched, &dist, max_depth);
        walk
    }

    /// Calls `visit` with each link from `node` in `direction` and the node at its other end.
    fn each_link(&self, node: u32, direction: Direction, visit: &mut impl FnMut(u32, u32)) {
        match direction {
            Direction::Dependents => {
                for i in self.dependents(node) {
                    visit(i, self.links[i as usize].from);
                }
            }
            Direction::Dependencies => {
                let (start, out) = self.out();
                let run = start[node as usize]..start[node as usize + 1];
                for &i in &out[run.start as usize..run.end as usize] {
                    visit(i, self.links[i as usize].to);
                }
            }
        }
    }
}
