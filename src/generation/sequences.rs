//! Call sequences from the property graph (Morest, Algorithm 1): for each
//! schema, every operation that produces it is paired with every operation that
//! consumes it; pairs are chained onto sequences already built when one's last
//! call is the other's first; schemas linked by equivalences are visited next;
//! sequences that break the CRUD rule are dropped; operations tied to no schema
//! stay as one-call sequences.

use std::collections::HashSet;

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

use crate::graph::{EdgeKind, NodeKind, PropertyGraph};
use crate::model::{Api, Method};

/// Pairs taken per schema: enough for every producer/consumer of ordinary
/// APIs, bounded for schemas that half of a large API returns.
const MAX_PAIRS: usize = 48;

/// The operations that produce and consume each schema, by operation position.
struct Links {
    produces: Vec<Vec<usize>>,
    consumes: Vec<Vec<usize>>,
}

/// Builds call sequences (operation positions) of at most `max_len` calls, at
/// most `cap` of them, from the active edges of `graph`. `allowed` says which
/// operations may appear (read-only runs exclude those that change state).
pub fn call_sequences(
    api: &Api,
    graph: &PropertyGraph,
    max_len: usize,
    cap: usize,
    allowed: &dyn Fn(usize) -> bool,
) -> Vec<Vec<usize>> {
    let positions = api.operation_positions();
    let schemas: Vec<NodeIndex> = graph.nodes(NodeKind::Schema).collect();
    let mut links = Links {
        produces: vec![Vec::new(); graph.graph.node_count()],
        consumes: vec![Vec::new(); graph.graph.node_count()],
    };
    let mut linked = vec![false; api.operations.len()];
    for &s in &schemas {
        for (kind, dir, out) in [
            (EdgeKind::Produces, Direction::Incoming, &mut links.produces),
            (EdgeKind::Consumes, Direction::Outgoing, &mut links.consumes),
        ] {
            for e in graph.active_edges(s, kind, dir) {
                let other = if dir == Direction::Incoming {
                    e.source()
                } else {
                    e.target()
                };
                if let Some(&pos) = positions.get(&graph.graph[other].name)
                    && allowed(pos)
                {
                    out[s.index()].push(pos);
                    linked[pos] = true;
                }
            }
        }
    }

    let mut builder = Builder {
        graph,
        links: &links,
        max_len,
        cap,
        visited: vec![false; graph.graph.node_count()],
        sequences: Vec::new(),
        seen: HashSet::new(),
        changes_state: api.operations.iter().map(|o| !o.method.is_safe()).collect(),
    };
    for &s in &schemas {
        builder.visit(s);
    }
    let mut sequences: Vec<Vec<usize>> = builder
        .sequences
        .into_iter()
        .filter(|seq| crud_valid(api, graph, seq))
        .collect();
    for (pos, &l) in linked.iter().enumerate() {
        if !l && allowed(pos) {
            sequences.push(vec![pos]);
        }
    }
    sequences
}

struct Builder<'a> {
    graph: &'a PropertyGraph,
    links: &'a Links,
    max_len: usize,
    cap: usize,
    visited: Vec<bool>,
    sequences: Vec<Vec<usize>>,
    seen: HashSet<Vec<usize>>,
    changes_state: Vec<bool>,
}

impl Builder<'_> {
    fn push(&mut self, seq: Vec<usize>) {
        if self.sequences.len() < self.cap
            && seq.len() <= self.max_len
            && self.seen.insert(seq.clone())
        {
            self.sequences.push(seq);
        }
    }

    /// Visits schema `s` and, depth first, the schemas equivalent to it. Each
    /// schema is visited once, which also keeps cycles of equivalences finite.
    fn visit(&mut self, s: NodeIndex) {
        if self.visited[s.index()] {
            return;
        }
        self.visited[s.index()] = true;
        let out = &self.links.produces[s.index()];
        let inn = &self.links.consumes[s.index()];
        if !out.is_empty() && !inn.is_empty() {
            let mut new: Vec<(usize, usize)> = Vec::new();
            'pairs: for &o in out {
                for &i in inn {
                    if new.len() >= MAX_PAIRS {
                        break 'pairs;
                    }
                    new.push((o, i));
                }
            }
            // Concatenation with the sequences built so far (line 17), and
            // with those this concatenation makes, so that a chain can pass
            // through several operations of one schema (create, update, then
            // a consumer). Self pairs stand alone: chained, they would only
            // repeat one call.
            for (o, i) in new.iter().copied() {
                self.push(vec![o, i]);
            }
            // Prefixes come from the operations that change state when there
            // are any: `createAuthor` before a chain sets it up, while each of
            // the many reads that return an Author would only multiply it.
            let reads_only = out.iter().all(|&o| !self.changes_state[o]);
            let mut k = 0;
            while k < self.sequences.len() && self.sequences.len() < self.cap {
                let base = &self.sequences[k];
                if base.len() == 2 && base[0] == base[1] {
                    k += 1;
                    continue;
                }
                for &(o, i) in new.iter().filter(|(o, i)| o != i) {
                    let seq = &self.sequences[k];
                    // Concatenation never repeats an operation: with the
                    // fixpoint, repeats would only spin around cycles
                    // (place, read, place, read…).
                    if seq.last() == Some(&o) && !seq.contains(&i) {
                        let mut longer = seq.clone();
                        longer.push(i);
                        self.push(longer);
                    }
                    let seq = &self.sequences[k];
                    if seq.first() == Some(&i)
                        && !seq.contains(&o)
                        && self.changes_state[o] != reads_only
                    {
                        let mut longer = vec![o];
                        longer.extend_from_slice(seq);
                        self.push(longer);
                    }
                }
                k += 1;
            }
        }
        let neighbours: Vec<NodeIndex> = self
            .graph
            .graph
            .edges_directed(s, Direction::Outgoing)
            .chain(self.graph.graph.edges_directed(s, Direction::Incoming))
            .filter(|e| e.weight().kind == EdgeKind::Equivalent)
            .map(|e| {
                if e.source() == s {
                    e.target()
                } else {
                    e.source()
                }
            })
            .collect();
        for n in neighbours {
            self.visit(n);
        }
    }
}

/// What an operation does to a schema it is linked to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Crud {
    Create,
    Use,
    Delete,
}

/// The CRUD rule, per schema: nothing touches it after its DELETE, and nothing
/// reads, updates or deletes it before its first creation (when the sequence
/// creates it at all; otherwise its values come from earlier tests).
fn crud_valid(api: &Api, graph: &PropertyGraph, seq: &[usize]) -> bool {
    let mut touched: Vec<NodeIndex> = Vec::new();
    for &pos in seq {
        let Some(ix) = graph.operation(&api.operations[pos].name) else {
            continue;
        };
        for e in graph
            .graph
            .edges(ix)
            .chain(graph.graph.edges_directed(ix, Direction::Incoming))
        {
            let other = if e.source() == ix {
                e.target()
            } else {
                e.source()
            };
            if graph.graph[other].kind == NodeKind::Schema && !touched.contains(&other) {
                touched.push(other);
            }
        }
    }
    for s in touched {
        let role = |pos: usize| -> Option<Crud> {
            let op = &api.operations[pos];
            let ix = graph.operation(&op.name)?;
            let produces = graph.find_edge(ix, s, EdgeKind::Produces).is_some();
            let consumes = graph.find_edge(s, ix, EdgeKind::Consumes).is_some();
            if !produces && !consumes {
                return None;
            }
            Some(match op.method {
                Method::Delete => Crud::Delete,
                Method::Post | Method::GraphqlMutation if produces => Crud::Create,
                _ => Crud::Use,
            })
        };
        let roles: Vec<Option<Crud>> = seq.iter().map(|&p| role(p)).collect();
        let first_create = roles.iter().position(|r| *r == Some(Crud::Create));
        let mut deleted = false;
        for (k, r) in roles.iter().enumerate() {
            let Some(r) = r else { continue };
            if deleted {
                return false;
            }
            if let Some(fc) = first_create
                && k < fc
                && *r != Crud::Create
            {
                return false;
            }
            if *r == Crud::Delete {
                deleted = true;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn petstore() -> (Api, PropertyGraph) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/specs/morest-petstore.yaml");
        let api = crate::load::load(&path).expect("petstore loads").api;
        let graph = crate::graph::build(&api);
        (api, graph)
    }

    fn names(api: &Api, seqs: &[Vec<usize>]) -> Vec<Vec<String>> {
        seqs.iter()
            .map(|s| s.iter().map(|&p| api.operations[p].name.clone()).collect())
            .collect()
    }

    #[test]
    fn petstore_sequences_follow_the_paper() {
        let (api, graph) = petstore();
        let seqs = names(&api, &call_sequences(&api, &graph, 10, 1000, &|_| true));
        let has = |want: &[&str]| {
            seqs.iter()
                .any(|s| s.iter().map(String::as_str).eq(want.iter().copied()))
        };
        // Producers of Pet paired with its consumers (the spec gives addPet no
        // response body, so it consumes Pet without producing it).
        assert!(has(&["findPetsByStatus", "getPetById"]), "{seqs:?}");
        assert!(has(&["getPetById", "placeOrder"]), "{seqs:?}");
        // Concatenation through the schemas: a pet, then an order for it, then the order.
        assert!(
            has(&["getPetById", "placeOrder", "getOrderById"]),
            "{seqs:?}"
        );
        for s in &seqs {
            // CRUD rule for Order: nothing after its delete, no read before its create.
            if let Some(d) = s.iter().position(|n| n == "deleteOrder") {
                assert!(!s[d + 1..].iter().any(|n| n.contains("Order")), "{s:?}");
            }
            if let Some(c) = s.iter().position(|n| n == "placeOrder") {
                assert!(!s[..c].iter().any(|n| n == "getOrderById"), "{s:?}");
            }
            // Concatenation repeats no operation (self pairs stand alone).
            if s.len() > 2 {
                let mut u = s.clone();
                u.sort();
                u.dedup();
                assert_eq!(u.len(), s.len(), "{s:?}");
            }
        }
    }

    #[test]
    fn disallowed_operations_never_appear_and_unlinked_ones_stand_alone() {
        let (api, graph) = petstore();
        let safe = |p: usize| api.operations[p].method.is_safe();
        let seqs = call_sequences(&api, &graph, 10, 1000, &safe);
        assert!(!seqs.is_empty());
        assert!(seqs.iter().flatten().all(|&p| safe(p)));
    }
}
