//! The Morest paper's running example (Fig. 1/Fig. 4a), pinned: the property graph
//! Cartograph builds for it, node by node and edge by edge.

use crate::support;

use std::path::Path;

use cartograph::graph::{self, EdgeKind, Label, NodeKind, Origin, export};
use cartograph::model::Location;

const SPEC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/specs/morest-petstore.yaml"
);
const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/graphs/morest-petstore.json"
);

fn petstore() -> graph::PropertyGraph {
    let loaded = cartograph::load::load(Path::new(SPEC)).expect("petstore loads");
    assert!(loaded.is_complete(), "{:?}", loaded.warnings);
    graph::build(&loaded.api)
}

fn edge_names(g: &graph::PropertyGraph, kind: EdgeKind) -> Vec<(String, String)> {
    use petgraph::visit::EdgeRef;
    let mut v: Vec<(String, String)> = g
        .graph
        .edge_references()
        .filter(|e| e.weight().kind == kind)
        .map(|e| {
            (
                g.graph[e.source()].name.clone(),
                g.graph[e.target()].name.clone(),
            )
        })
        .collect();
    v.sort();
    v
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

#[test]
fn nodes_are_the_six_operations_and_two_schemas() {
    let g = petstore();
    let ops: Vec<String> = g
        .nodes(NodeKind::Operation)
        .map(|i| g.graph[i].name.clone())
        .collect();
    assert_eq!(
        ops,
        [
            "addPet",
            "findPetsByStatus",
            "getPetById",
            "placeOrder",
            "getOrderById",
            "deleteOrder"
        ]
    );
    let schemas: Vec<String> = g
        .nodes(NodeKind::Schema)
        .map(|i| g.graph[i].name.clone())
        .collect();
    assert_eq!(schemas, ["Order", "Pet"]);
}

#[test]
fn produces_edges_follow_documented_2xx_bodies() {
    let g = petstore();
    assert_eq!(
        edge_names(&g, EdgeKind::Produces),
        [
            pair("findPetsByStatus", "Pet"),
            pair("getOrderById", "Order"),
            pair("getPetById", "Pet"),
            pair("placeOrder", "Order"),
        ]
    );
    // findPetsByStatus returns an array: the site says so.
    let e = g
        .find_edge(
            g.operation("findPetsByStatus").unwrap(),
            g.schema("Pet").unwrap(),
            EdgeKind::Produces,
        )
        .unwrap();
    assert_eq!(g.graph[e].label.text(), "200 $[*]");
}

#[test]
fn consumes_edge_maps_pet_id_to_the_get_by_id_parameter() {
    let g = petstore();
    let e = g
        .find_edge(
            g.schema("Pet").unwrap(),
            g.operation("getPetById").unwrap(),
            EdgeKind::Consumes,
        )
        .expect("Pet → getPetById");
    let Label::Consumes { bindings } = &g.graph[e].label else {
        panic!("wrong label")
    };
    assert_eq!(bindings.len(), 1);
    assert_eq!(bindings[0].location, Location::Path);
    assert_eq!(bindings[0].input, "petId");
    assert_eq!(bindings[0].property, "id");
    assert_eq!(bindings[0].origin, Origin::Inferred);
    assert_eq!(bindings[0].score, 1.0);
}

#[test]
fn consumes_edges_in_full() {
    let g = petstore();
    assert_eq!(
        edge_names(&g, EdgeKind::Consumes),
        [
            pair("Order", "deleteOrder"),
            pair("Order", "getOrderById"),
            pair("Order", "placeOrder"),
            pair("Pet", "addPet"),
            pair("Pet", "findPetsByStatus"),
            pair("Pet", "getPetById"),
            pair("Pet", "placeOrder"),
        ]
    );
    // The body of placeOrder is an Order (stated), and its petId field is fed by
    // Pet.id (inferred): the dependency Morest had to learn at run time.
    let e = g
        .find_edge(
            g.schema("Pet").unwrap(),
            g.operation("placeOrder").unwrap(),
            EdgeKind::Consumes,
        )
        .unwrap();
    assert_eq!(g.graph[e].label.text(), "petId ← id");
    // Order.status is not Pet.status: findPetsByStatus's `status` is tied to Pet only.
    let e = g
        .find_edge(
            g.schema("Pet").unwrap(),
            g.operation("findPetsByStatus").unwrap(),
            EdgeKind::Consumes,
        )
        .unwrap();
    assert_eq!(g.graph[e].label.text(), "status ← status");
    assert!(
        g.find_edge(
            g.schema("Order").unwrap(),
            g.operation("findPetsByStatus").unwrap(),
            EdgeKind::Consumes
        )
        .is_none()
    );
}

#[test]
fn same_endpoint_and_equivalent_edges() {
    let g = petstore();
    assert_eq!(
        edge_names(&g, EdgeKind::SameEndpoint),
        [pair("deleteOrder", "getOrderById")]
    );
    let eq = edge_names(&g, EdgeKind::Equivalent);
    assert_eq!(eq, [pair("Order", "Pet")]);
    let e = g
        .find_edge(
            g.schema("Order").unwrap(),
            g.schema("Pet").unwrap(),
            EdgeKind::Equivalent,
        )
        .unwrap();
    // petId = Pet.id, and nothing pairs the two `status` properties.
    assert_eq!(g.graph[e].label.text(), "petId = id");
}

#[test]
fn whole_export_matches_the_pinned_golden_file() {
    let g = petstore();
    let json = export::render(&g, export::Format::Json);
    support::golden::check(
        Path::new(GOLDEN),
        &json,
        "the export changed",
        module_path!(),
    );
}

#[test]
fn chain_for_delete_order_starts_with_an_order_producer() {
    let g = petstore();
    let chain = graph::query::chain(&g, g.operation("deleteOrder").unwrap());
    let names: Vec<&str> = chain.steps.iter().map(|s| s.operation.as_str()).collect();
    assert_eq!(names, ["placeOrder", "deleteOrder"]);
    assert_eq!(
        chain.steps[0].provides,
        [("deleteOrder".into(), "orderId".into(), "Order.id".into())]
    );
}

#[test]
fn every_format_renders_every_edge() {
    let g = petstore();
    let dot = export::render(&g, export::Format::Dot);
    assert_eq!(dot.matches(" -> ").count(), g.graph.edge_count());
    let mermaid = export::render(&g, export::Format::Mermaid);
    assert!(mermaid.starts_with("flowchart LR\n"));
    assert!(mermaid.contains("petId ← id"));
    let graphml = export::render(&g, export::Format::Graphml);
    assert_eq!(graphml.matches("<edge ").count(), g.graph.edge_count());
    assert_eq!(graphml.matches("<node ").count(), g.graph.node_count());
}
