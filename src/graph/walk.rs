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
}

impl Graph {
    /// Walks from `start` along dependents (towards tests) or dependencies (from a test).
    /// Each reached node keeps the edge of a path with the fewest import hops (`EdgeKind::hops`;
    /// among those, the first found), so chains are shortest paths; with `max_depth`, nodes
    /// beyond the cap are reported in `cut`, never silently dropped.
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
        // 0-1 breadth-first: a hop-free edge's node goes to the front, so nodes leave the
        // queue in order of depth; an entry a lesser depth has since replaced is passed over.
        let mut depth: Vec<u32> = vec![u32::MAX; n];
        let mut touched: Vec<u32> = Vec::new();
        depth[start_id as usize] = 0;
        let mut queue: VecDeque<(u32, u32)> = VecDeque::from([(start_id, 0)]);
        while let Some((node, d)) = queue.pop_front() {
            if d != depth[node as usize] {
                continue;
            }
            let mut visit = |i: u32, next: u32| {
                let hops = self.links[i as usize].kind.hops();
                let at = &mut depth[next as usize];
                if d + hops >= *at {
                    return;
                }
                if *at == u32::MAX {
                    touched.push(next);
                }
                *at = d + hops;
                walk.via[next as usize] = i;
                if hops == 0 {
                    queue.push_front((next, d));
                } else {
                    queue.push_back((next, d + hops));
                }
            };
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
        for id in touched {
            if max_depth.is_some_and(|m| depth[id as usize] > m) {
                walk.via[id as usize] = NONE;
                walk.cut.push(id);
            } else {
                walk.reached.push(id);
            }
        }
        walk.reached.sort_unstable();
        walk.cut.sort_unstable();
        walk
    }
}
