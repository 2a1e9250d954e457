//! The feedback loop on the Morest petstore: observed produces edges,
//! equivalences from values seen again (and names that rule them out),
//! suspension after λ failures and re-activation.

use super::matching::name_contradicts;
use super::*;
use serde_json::json;

fn petstore() -> PropertyGraph {
    let loaded = crate::load::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/specs/morest-petstore.yaml"
    )))
    .unwrap();
    crate::graph::build(&loaded.api)
}

#[test]
fn an_undocumented_body_adds_an_observed_produces_edge() {
    let mut g = petstore();
    let mut f = Feedback::default();
    let changes = f.observe(
        &mut g,
        "addPet",
        200,
        &json!({"id": 7, "name": "Rex", "status": "sold"}),
        11,
    );
    assert_eq!(
        changes,
        [Change::Produces {
            operation: "addPet".into(),
            schema: "Pet".into()
        }]
    );
    let e = g
        .find_edge(
            g.operation("addPet").unwrap(),
            g.schema("Pet").unwrap(),
            EdgeKind::Produces,
        )
        .unwrap();
    assert_eq!(g.graph[e].origin, Origin::Observed);
    assert_eq!(g.graph[e].evidence[0].exchanges, [11]);
}

#[test]
fn the_paper_example_resolves_pet_id_to_order_pet_id_not_order_id() {
    let mut g = petstore();
    let mut f = Feedback::default();
    // First pair: Pet.id equals both Order.id and Order.petId (ambiguous).
    f.observe(
        &mut g,
        "getOrderById",
        200,
        &json!({"id": 11, "petId": 11, "status": "succ"}),
        1,
    );
    f.observe(
        &mut g,
        "getPetById",
        200,
        &json!({"id": 11, "name": "cat", "status": "sold"}),
        2,
    );
    let mut all = Vec::new();
    for (n, (order, pet)) in [(21, 32), (22, 33), (23, 34), (24, 35)]
        .into_iter()
        .enumerate()
    {
        let s = 10 + 2 * n as u64;
        all.extend(f.observe(
            &mut g,
            "getOrderById",
            200,
            &json!({"id": order, "petId": pet, "status": "succ"}),
            s,
        ));
        all.extend(f.observe(
            &mut g,
            "getPetById",
            200,
            &json!({"id": pet, "name": "dog", "status": "sold"}),
            s + 1,
        ));
    }
    assert!(
        all.contains(&Change::Equivalent {
            left: "Pet.id".into(),
            right: "Order.petId".into()
        }),
        "{all:?}"
    );
    let e = g
        .find_edge(
            g.schema("Order").unwrap(),
            g.schema("Pet").unwrap(),
            EdgeKind::Equivalent,
        )
        .unwrap();
    let Label::Equivalent { pairs } = &g.graph[e].label else {
        panic!()
    };
    assert!(
        pairs
            .iter()
            .any(|p| p.source == "petId" && p.target == "id" && p.rule == "observed-value")
    );
    assert!(
        !pairs.iter().any(|p| p.source == "id" && p.target == "id"),
        "Order.id is not Pet.id"
    );
    assert!(
        !pairs.iter().any(|p| p.source == "status"),
        "status values never coincide"
    );
    assert_eq!(g.graph[e].origin, Origin::Observed);
}

#[test]
fn reference_names_that_point_elsewhere_are_not_equated_with_an_id() {
    assert!(name_contradicts("authorId", "Order", "id"));
    assert!(!name_contradicts("authorId", "Author", "id"));
    assert!(!name_contradicts("author_id", "AuthorResponse", "id"));
    assert!(
        !name_contradicts("item", "Order", "id"),
        "neutral names may match"
    );
    assert!(!name_contradicts("authorId", "Order", "authorId"));
}

#[test]
fn lambda_failures_suspend_and_a_success_reactivates() {
    let mut g = petstore();
    let mut f = Feedback::new(3);
    assert_eq!(
        f.binding_result(&mut g, "Pet", "getPetById", false, 1),
        None
    );
    assert_eq!(
        f.binding_result(&mut g, "Pet", "getPetById", false, 2),
        None
    );
    assert_eq!(
        f.binding_result(&mut g, "Pet", "getPetById", false, 3),
        Some(Change::Suspended {
            schema: "Pet".into(),
            operation: "getPetById".into()
        })
    );
    let e = g
        .find_edge(
            g.schema("Pet").unwrap(),
            g.operation("getPetById").unwrap(),
            EdgeKind::Consumes,
        )
        .unwrap();
    assert_eq!(g.graph[e].state, EdgeState::Suspended);
    assert!(matches!(
        f.binding_result(&mut g, "Pet", "getPetById", true, 4),
        Some(Change::Reactivated { .. })
    ));
    assert_eq!(g.graph[e].state, EdgeState::Active);
}
