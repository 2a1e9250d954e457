//! Graph coverage: which consumes links of the final graph carried a value
//! that the consuming operation then answered with success (Schemathesis
//! reports the OpenAPI links it covered; this is the same question asked of
//! every link the graph holds, spec, inferred or observed). A link that only
//! says which schema an operation's body is (no binding names an input)
//! passes no value from one call to another and is not counted.

use std::collections::BTreeMap;

use petgraph::visit::EdgeRef;

use std::collections::HashMap;

use petgraph::Direction;
use petgraph::graph::NodeIndex;

use super::{GraphCoverage, LinkCoverage, OperationReport};
use crate::generation::search::LinkFlow;
use crate::graph::{Edge, EdgeKind, Label, PropertyGraph};

impl GraphCoverage {
    /// The coverage of `graph`'s consumes links, given per (schema,
    /// operation) what became of the values passed along them, and each
    /// operation's answers (to say why a link was not exercised).
    pub fn of(
        graph: &PropertyGraph,
        flows: &BTreeMap<(String, String), LinkFlow>,
        operations: &[OperationReport],
    ) -> GraphCoverage {
        let answers: HashMap<&str, &BTreeMap<String, u64>> = operations
            .iter()
            .map(|o| (o.operation.as_str(), &o.status_counts))
            .collect();
        let mut edges: Vec<LinkCoverage> = graph
            .graph
            .edge_references()
            .filter(|e| carries_values(e.weight()))
            .map(|e| {
                let (s, o) = (&graph.graph[e.source()], &graph.graph[e.target()]);
                let flow = flows
                    .get(&(s.name.clone(), o.name.clone()))
                    .cloned()
                    .unwrap_or_default();
                let exercised = flow.successes > 0;
                let (reason, why) = if exercised {
                    (None, None)
                } else {
                    let (r, w) = why_not(graph, e.source(), &o.name, &flow, &answers);
                    (Some(r.to_string()), Some(w))
                };
                LinkCoverage {
                    id: crate::graph::export::edge_id(EdgeKind::Consumes, &s.id, &o.id),
                    schema: s.name.clone(),
                    operation: o.name.clone(),
                    flows: flow.flows,
                    successes: flow.successes,
                    exercised,
                    reason,
                    why,
                    refused_with: if exercised {
                        BTreeMap::new()
                    } else {
                        flow.refusals
                    },
                }
            })
            .collect();
        edges.sort_by(|a, b| a.id.cmp(&b.id));
        GraphCoverage {
            links: edges.len(),
            links_exercised: edges.iter().filter(|l| l.exercised).count(),
            edges,
        }
    }

    /// Exercised links as a share of all links (1.0 for a graph without any).
    pub fn share(&self) -> f64 {
        if self.links == 0 {
            1.0
        } else {
            self.links_exercised as f64 / self.links as f64
        }
    }
}

/// Whether a consumes edge passes values into some named input.
fn carries_values(edge: &Edge) -> bool {
    edge.kind == EdgeKind::Consumes
        && matches!(&edge.label, Label::Consumes { bindings } if bindings.iter().any(|b| !b.input.is_empty()))
}

/// Why a link was not exercised, as a code and in words: the first step of
/// the chain (a producer answered, answered 2xx, a value passed, the
/// consumer took it) that never happened.
fn why_not(
    graph: &PropertyGraph,
    schema: NodeIndex,
    consumer: &str,
    flow: &LinkFlow,
    answers: &HashMap<&str, &BTreeMap<String, u64>>,
) -> (&'static str, String) {
    let name = &graph.graph[schema].name;
    // Who makes the schema's values: operations whose answers carry it, and
    // those that send it whole as their body (a name the client chose).
    let mut producers: Vec<&str> = graph
        .graph
        .edges_directed(schema, Direction::Incoming)
        .filter(|e| e.weight().kind == EdgeKind::Produces)
        .map(|e| graph.graph[e.source()].name.as_str())
        .chain(
            graph
                .graph
                .edges_directed(schema, Direction::Outgoing)
                .filter(|e| matches!(&e.weight().label, Label::Consumes { bindings } if bindings.iter().any(|b| b.input.is_empty())))
                .map(|e| graph.graph[e.target()].name.as_str()),
        )
        .collect();
    producers.sort_unstable();
    producers.dedup();
    let listed = |ops: &[&str]| -> String {
        let shown: Vec<&str> = ops.iter().take(4).copied().collect();
        match ops.len() {
            n if n > 4 => format!("{} and {} more", shown.join(", "), n - 4),
            _ => shown.join(", "),
        }
    };
    if producers.is_empty() {
        return ("no_producer", format!("no operation produces {name}"));
    }
    let answered: Vec<&str> = producers
        .iter()
        .copied()
        .filter(|p| answers.get(p).is_some_and(|c| !c.is_empty()))
        .collect();
    if answered.is_empty() {
        return (
            "no_producer_reached",
            format!("no producer of {name} was reached ({})", listed(&producers)),
        );
    }
    let succeeded = answered.iter().any(|p| {
        answers[p]
            .keys()
            .any(|s| s.starts_with('2') && s.len() == 3)
    });
    if !succeeded {
        let statuses: BTreeMap<&str, u64> = answered.iter().flat_map(|p| answers[p].iter()).fold(
            BTreeMap::new(),
            |mut m, (s, n)| {
                *m.entry(s.as_str()).or_default() += n;
                m
            },
        );
        return (
            "producer_never_succeeded",
            format!(
                "the producers of {name} ({}) never answered 2xx ({})",
                listed(&answered),
                counts(statuses.iter().map(|(s, n)| (*s, *n)))
            ),
        );
    }
    if flow.flows == 0 {
        return (
            "no_value_flowed",
            format!("no value of {name} was passed to {consumer}"),
        );
    }
    (
        "consumer_refused",
        format!(
            "{consumer} refused the {} value(s) of {name} passed to it ({})",
            flow.flows,
            counts(flow.refusals.iter().map(|(s, n)| (s.as_str(), *n)))
        ),
    )
}

/// `404 ×12, 400 ×3`.
fn counts<'a>(items: impl Iterator<Item = (&'a str, u64)>) -> String {
    let parts: Vec<String> = items.map(|(s, n)| format!("{s} ×{n}")).collect();
    if parts.is_empty() {
        "no answer".into()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /authors:
    post:
      operationId: createAuthor
      responses:
        '201': {description: made, content: {application/json: {schema: {$ref: '#/components/schemas/Author'}}}}
  /authors/{authorId}:
    get:
      operationId: getAuthor
      parameters: [{name: authorId, in: path, required: true, schema: {type: integer}}]
      responses:
        '200': {description: one, content: {application/json: {schema: {$ref: '#/components/schemas/Author'}}}}
  /books/{bookId}:
    get:
      operationId: getBook
      parameters:
      - {name: bookId, in: path, required: true, schema: {type: integer}}
      - {name: authorId, in: query, schema: {type: integer}}
      responses:
        '200': {description: one, content: {application/json: {schema: {$ref: '#/components/schemas/Book'}}}}
  /orders:
    get:
      operationId: listOrders
      parameters: [{name: bookId, in: query, schema: {type: integer}}]
      responses: {'200': {description: all}}
components:
  schemas:
    Author: {type: object, properties: {id: {type: integer}}}
    Book: {type: object, properties: {id: {type: integer}}}
"#;

    fn ops(counts: &[(&str, &[(&str, u64)])]) -> Vec<OperationReport> {
        counts
            .iter()
            .map(|(op, c)| OperationReport {
                operation: op.to_string(),
                method: "GET".into(),
                path: "/".into(),
                line: None,
                spec: None,
                status_counts: c.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
                failures: Default::default(),
            })
            .collect()
    }

    #[test]
    fn each_link_not_exercised_says_which_step_never_happened() {
        let api = crate::load::load_text(SPEC, std::path::Path::new("t.yaml"))
            .unwrap()
            .api;
        let graph = crate::graph::build(&api);
        let reasons = |flows: &BTreeMap<(String, String), LinkFlow>, ops: &[OperationReport]| {
            GraphCoverage::of(&graph, flows, ops)
                .edges
                .into_iter()
                .map(|l| (l.schema, l.operation, l.reason, l.refused_with))
                .collect::<Vec<_>>()
        };
        let link = |s: &str, o: &str| (s.to_string(), o.to_string());
        // Nothing ran: Author's producers were never reached.
        let none = reasons(&BTreeMap::new(), &[]);
        assert!(
            none.iter()
                .all(|(_, _, r, _)| r.as_deref() == Some("no_producer_reached")),
            "{none:?}"
        );
        // createAuthor answered only 500; getBook produces Book and answered 2xx,
        // but no Book value reached listOrders; getAuthor refused the values.
        let mut flows = BTreeMap::new();
        flows.insert(
            link("Author", "getAuthor"),
            LinkFlow {
                flows: 3,
                successes: 0,
                refusals: [("404".to_string(), 3)].into_iter().collect(),
            },
        );
        let got = reasons(
            &flows,
            &ops(&[
                ("createAuthor", &[("500", 2)]),
                ("getAuthor", &[("404", 3)]),
                ("getBook", &[("200", 1)]),
            ]),
        );
        let find = |s: &str, o: &str| {
            got.iter()
                .find(|(gs, go, _, _)| gs == s && go == o)
                .unwrap_or_else(|| panic!("no link {s} -> {o}: {got:?}"))
                .clone()
        };
        // getAuthor (a producer of Author) answered only 404: Author's values
        // never came from it, and createAuthor never answered 2xx either.
        assert_eq!(
            find("Author", "getBook").2.as_deref(),
            Some("producer_never_succeeded")
        );
        assert_eq!(
            find("Book", "listOrders").2.as_deref(),
            Some("no_value_flowed")
        );
        let refused = find("Author", "getAuthor");
        assert_eq!(refused.2.as_deref(), Some("producer_never_succeeded"));
        assert_eq!(refused.3.get("404"), Some(&3));
        // Once createAuthor succeeds, the refusal is the consumer's.
        let got = reasons(
            &flows,
            &ops(&[
                ("createAuthor", &[("201", 1)]),
                ("getAuthor", &[("404", 3)]),
            ]),
        );
        let refused = got
            .iter()
            .find(|(s, o, _, _)| s == "Author" && o == "getAuthor")
            .unwrap();
        assert_eq!(refused.2.as_deref(), Some("consumer_refused"));
    }
}
