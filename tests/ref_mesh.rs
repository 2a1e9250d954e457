//! A mesh of schemas that `$ref` each other by JSON Pointer into another schema's
//! properties (fixtures/specs/ref-mesh.yaml) loads into a model of the size of the
//! document, as the same mesh written with named definitions does
//! (fixtures/specs/ref-mesh-named.yaml), and every part of a run can use it.
//! Expanded inline, the mesh was one copy per path through it: about a million
//! schemas for 5 KB of YAML. The time is measured in benches/graph_build.rs.

use std::collections::BTreeSet;
use std::path::Path;

use cartograph::generation::values::{Rng64, value_for};
use cartograph::graph::{self, export};
use cartograph::model::{Api, Schema};
use cartograph::oracles::schema::ResponseSchemas;
use rand::SeedableRng;
use serde_json::json;

const K: usize = 8;

fn load(file: &str) -> cartograph::load::Loaded {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/specs")
        .join(file);
    cartograph::load::load(&path).expect("fixture loads")
}

/// Every schema node of the model: named schemas and those inside operations.
fn schema_nodes(api: &Api) -> usize {
    fn count(s: &Schema) -> usize {
        1 + s.items.as_deref().map_or(0, count)
            + s.additional_properties.as_deref().map_or(0, count)
            + s.properties.values().map(count).sum::<usize>()
            + s.alternatives.iter().map(count).sum::<usize>()
    }
    let mut n: usize = api.schemas.values().map(count).sum();
    for op in &api.operations {
        n += op
            .parameters
            .iter()
            .map(|p| count(&p.schema))
            .sum::<usize>();
        if let Some(body) = &op.request_body {
            n += body.content.values().map(count).sum::<usize>();
        }
        for r in op.responses.values() {
            n += r.content.values().map(count).sum::<usize>();
            n += r.headers.values().map(count).sum::<usize>();
        }
    }
    n
}

#[test]
fn pointer_mesh_loads_each_target_once() {
    let loaded = load("ref-mesh.yaml");
    assert!(loaded.warnings.is_empty(), "{:#?}", loaded.warnings);
    let api = &loaded.api;

    // Root, and each of its properties under a name of its own.
    let mut expected: Vec<String> = vec!["Root".into()];
    expected.extend((1..=K).map(|x| format!("Root.n{x}")));
    assert_eq!(api.schemas.keys().cloned().collect::<Vec<_>>(), expected);

    let root = &api.schemas["Root"];
    for x in 1..=K {
        // The owner refers to its property's schema like every other referrer.
        assert_eq!(
            root.properties[&format!("n{x}")].reference.as_deref(),
            Some(format!("Root.n{x}").as_str())
        );
        let node = &api.schemas[&format!("Root.n{x}")];
        assert_eq!(node.required, vec!["id"]);
        assert!(node.properties["id"].reference.is_none());
        let mut props: Vec<&str> = node.properties.keys().map(String::as_str).collect();
        props.sort_unstable();
        let mut want: Vec<String> = (1..=K)
            .filter(|y| *y != x)
            .map(|y| format!("n{y}"))
            .collect();
        want.push("id".into());
        want.sort_unstable();
        assert_eq!(props, want, "Root.n{x}");
        for y in (1..=K).filter(|y| *y != x) {
            assert_eq!(
                node.properties[&format!("n{y}")].reference.as_deref(),
                Some(format!("Root.n{y}").as_str()),
                "Root.n{x}.n{y}"
            );
        }
    }
    let get_n1 = api.operation("getN1").unwrap();
    assert_eq!(
        get_n1.responses["200"].content["application/json"]
            .reference
            .as_deref(),
        Some("Root.n1")
    );

    // What goes wrong when targets are expanded inline is the size: one copy per
    // path through the mesh (about 1.1 million schema nodes for k = 8). Once
    // each, it is Root (9) + 8 × (1 + 8) + the operations' few.
    let nodes = schema_nodes(api);
    assert!(nodes <= 100, "{nodes} schema nodes in the model");
}

/// The pointer mesh gives the graph of the same mesh with named definitions,
/// node for node and edge for edge, its schemas named `Root.nX` instead of `NX`.
#[test]
fn pointer_mesh_graph_equals_named_mesh_graph() {
    let rename = |name: &str| -> String {
        let mut out = name.to_string();
        for x in 1..=K {
            out = out.replace(&format!("Root.n{x}"), &format!("N{x}"));
        }
        out
    };
    let shape = |file: &str, pointer: bool| -> (BTreeSet<String>, BTreeSet<String>) {
        let loaded = load(file);
        let g = graph::build(&loaded.api);
        let doc: serde_json::Value =
            serde_json::from_str(&export::render(&g, export::Format::Json)).unwrap();
        let fix = |s: &str| if pointer { rename(s) } else { s.to_string() };
        let nodes = doc["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| fix(&n.to_string()))
            .collect();
        let edges = doc["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| fix(&e.to_string()))
            .collect();
        (nodes, edges)
    };
    let (pointer_nodes, pointer_edges) = shape("ref-mesh.yaml", true);
    let (named_nodes, named_edges) = shape("ref-mesh-named.yaml", false);
    assert_eq!(pointer_nodes.len(), 3 + 1 + K);
    assert_eq!(pointer_nodes, named_nodes);
    assert!(!pointer_edges.is_empty());
    assert_eq!(pointer_edges, named_edges);
}

/// Value generation and the schema oracle follow a named pointer target as they
/// follow a named definition: the same seed gives the same bodies from both
/// meshes, judged alike, and a wrong nested value is caught where it is.
#[test]
fn named_pointer_targets_generate_and_validate_like_definitions() {
    let pointer = load("ref-mesh.yaml").api;
    let named = load("ref-mesh-named.yaml").api;
    let checks = [ResponseSchemas::new(&pointer), ResponseSchemas::new(&named)];
    assert_eq!(
        checks[0].compile_all(&pointer),
        (3, 0),
        "{:?}",
        checks[0].warnings()
    );
    assert_eq!(
        checks[1].compile_all(&named),
        (3, 0),
        "{:?}",
        checks[1].warnings()
    );
    let op = pointer
        .operations
        .iter()
        .position(|o| o.name == "getN1")
        .unwrap();
    let schema_of =
        |api: &Api| api.operations[op].responses["200"].content["application/json"].clone();
    let (schema_p, schema_n) = (schema_of(&pointer), schema_of(&named));
    for seed in 0..20 {
        let body = value_for(&pointer, &schema_p, &mut Rng64::seed_from_u64(seed));
        let same = value_for(&named, &schema_n, &mut Rng64::seed_from_u64(seed));
        assert!(
            body == same,
            "seed {seed}: the meshes give different bodies"
        );
        assert!(body["id"].is_string(), "seed {seed}");
        let found: Vec<String> = checks[0]
            .check(&pointer, op, 200, Some("application/json"), &body)
            .into_iter()
            .map(|v| v.message)
            .collect();
        let found_named: Vec<String> = checks[1]
            .check(&named, op, 200, Some("application/json"), &body)
            .into_iter()
            .map(|v| v.message)
            .collect();
        assert_eq!(found, found_named, "seed {seed}");
    }
    let wrong = json!({"id": "a", "n2": {"id": "b", "n3": {"id": 3}}});
    let found = checks[0].check(&pointer, op, 200, Some("application/json"), &wrong);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].pointer, "/n2/n3/id");
    assert_eq!(found[0].keyword, "type");
}
