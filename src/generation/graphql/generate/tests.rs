//! The generator on the demo schema: custom scalars keep the shape their
//! name says, and a seed draws the same queries.

use rand::SeedableRng;
use serde_json::Value;

use super::*;
use crate::generation::graphql::genes::ArgMode;

fn demo() -> TypeSystem {
    crate::load::load_text(
        crate::demo::GRAPHQL_SDL,
        std::path::Path::new("demo.graphql"),
    )
    .unwrap()
    .api
    .graphql
    .unwrap()
}

#[test]
fn custom_scalars_named_like_a_format_get_and_mostly_keep_its_shape() {
    let generator = GqlGenerator::new(&demo(), DEFAULT_MAX_DEPTH);
    let mut rng = Rng64::seed_from_u64(5);
    let is_uuid = |v: &Value| {
        let s = v.as_str().unwrap_or_default();
        let groups: Vec<&str> = s.split('-').collect();
        groups.len() == 5
            && groups
                .iter()
                .zip([8, 4, 4, 4, 12])
                .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
    };
    let mut kept = 0;
    for _ in 0..200 {
        let v = generator.scalar("UUID", &mut rng);
        assert!(is_uuid(&v), "{v}");
        assert!(is_uuid(&generator.scalar("PersonGuid", &mut rng)));
        let day = generator.scalar("DateTime", &mut rng);
        assert!(
            day.as_str()
                .is_some_and(|d| d.len() == 20 && d.ends_with('Z'))
        );
        kept += usize::from(is_uuid(&generator.mutate_scalar("UUID", &v, &mut rng)));
    }
    // Four mutations in five draw a new uuid; the fifth edits the text.
    assert!(
        (140..200).contains(&kept),
        "{kept} of 200 mutants stayed uuids"
    );
    // A scalar whose name says nothing stays short text.
    assert!(generator.scalar("Cursor", &mut rng).is_string());
}

#[test]
fn same_seed_same_queries_and_mutants_stay_nonempty() {
    let ts = demo();
    let g = GqlGenerator::new(&ts, DEFAULT_MAX_DEPTH);
    let draw = |seed| {
        let mut rng = Rng64::seed_from_u64(seed);
        let mut call = g.sample("Query", "authors", &mut rng);
        let mut docs = Vec::new();
        for _ in 0..30 {
            g.mutate(&mut call, &mut rng);
            docs.push(g.render(&call, ArgMode::Variables).0);
        }
        docs
    };
    let docs = draw(5);
    assert_eq!(docs, draw(5));
    assert!(docs.iter().all(|d| !d.contains("{ }")), "{docs:?}");
}
