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

#[test]
fn custom_scalars_get_values_of_the_shape_their_name_or_description_says() {
    let sdl = r#"
        scalar BigInt
        scalar bigint
        scalar Long
        scalar Date
        scalar DateTime
        scalar timestamptz
        scalar LocalDateTime
        scalar Time
        scalar JSON
        scalar JSONObject
        scalar jsonb
        scalar UUID
        scalar EmailAddress
        scalar URL
        scalar Decimal
        scalar HexColorCode
        scalar PositiveInt
        scalar NonNegativeInt
        scalar NegativeInt
        "The `Amount` scalar type represents non-fractional signed whole numeric values."
        scalar Amount
        "A date-time string at UTC, such as 2007-12-03T10:15:30Z."
        scalar When
        "An opaque cursor."
        scalar Cursor
        scalar Upload
        type Query { ok: Boolean }
    "#;
    let ts = crate::load::load_text(sdl, std::path::Path::new("s.graphql"))
        .unwrap()
        .api
        .graphql
        .unwrap();
    let generator = GqlGenerator::new(&ts, DEFAULT_MAX_DEPTH);
    let mut rng = Rng64::seed_from_u64(11);
    let digits = |v: &Value| {
        v.as_str()
            .is_some_and(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))
    };
    let date = |s: &str| {
        let b = s.as_bytes();
        s.len() == 10 && b[4] == b'-' && b[7] == b'-' && s.replace('-', "").parse::<u32>().is_ok()
    };
    let rfc3339 = |v: &Value| {
        v.as_str().is_some_and(|s| {
            s.len() == 20 && date(&s[..10]) && &s[10..11] == "T" && s.ends_with('Z')
        })
    };
    for _ in 0..100 {
        let mut draw = |name: &str| generator.scalar(name, &mut rng);
        assert!(digits(&draw("BigInt")), "BigInt");
        assert!(digits(&draw("bigint")), "bigint");
        assert!(draw("Long").is_i64(), "Long");
        assert!(draw("Date").as_str().is_some_and(date), "Date");
        assert!(rfc3339(&draw("DateTime")), "DateTime");
        assert!(rfc3339(&draw("timestamptz")), "timestamptz");
        let local = draw("LocalDateTime");
        assert!(
            local
                .as_str()
                .is_some_and(|s| s.len() == 19 && date(&s[..10])),
            "{local}"
        );
        let time = draw("Time");
        assert!(
            time.as_str()
                .is_some_and(|s| s.len() == 9 && s.ends_with('Z')),
            "{time}"
        );
        assert!(draw("JSON").is_object());
        assert!(draw("JSONObject").is_object());
        assert!(draw("jsonb").is_object());
        assert!(draw("UUID").as_str().is_some_and(|s| s.len() == 36));
        assert!(
            draw("EmailAddress")
                .as_str()
                .is_some_and(|s| s.contains('@'))
        );
        assert!(
            draw("URL")
                .as_str()
                .is_some_and(|s| s.starts_with("https://"))
        );
        let decimal = draw("Decimal");
        assert!(
            decimal.as_str().is_some_and(|s| s.parse::<f64>().is_ok()),
            "{decimal}"
        );
        let color = draw("HexColorCode");
        assert!(
            color.as_str().is_some_and(|s| s.len() == 7
                && s.starts_with('#')
                && s[1..].chars().all(|c| c.is_ascii_hexdigit())),
            "{color}"
        );
        assert!(draw("PositiveInt").as_i64().is_some_and(|n| n >= 1));
        assert!(draw("NonNegativeInt").as_i64().is_some_and(|n| n >= 0));
        assert!(draw("NegativeInt").as_i64().is_some_and(|n| n < 0));
        // By the description, when the name says nothing.
        assert!(draw("Amount").is_i64(), "Amount");
        assert!(rfc3339(&draw("When")), "When");
        // Neither says: short text, as before.
        assert!(draw("Cursor").is_string());
        assert!(draw("Upload").is_string());
    }
}

#[test]
fn names_split_into_words_as_they_are_written() {
    use super::values::shape_of;
    assert_eq!(shape_of("PersonGuid", None), shape_of("UUID", None));
    assert_eq!(shape_of("ip_address", None), shape_of("IPv4", None));
    assert!(shape_of("HTMLColor", None).is_some());
    // A name that only holds a short word inside another says nothing.
    assert_eq!(shape_of("Security", None), None);
    assert_eq!(shape_of("Point", None), None);
    assert_eq!(shape_of("Cursor", Some("during a page")), None);
}
