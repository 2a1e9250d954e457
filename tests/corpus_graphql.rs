//! Every GraphQL document of the shared corpus (SDL and introspection) loads at
//! least as well as it did before the loader moved to apollo-parser: the same
//! outcome (loaded, loaded with warnings, refused) or better, and no fewer
//! queries, mutations or types. Prints one line per file, the sweep the
//! issue's before/after counts come from. Skipped, with a message, when the
//! corpus is not beside the checkout.
//!
//! `CARTOGRAPH_GRAPHQL_DUMP=<dir>` also writes each file's whole model (the
//! operations and schemas, the type system and the warnings) as JSON to that
//! folder, so two builds can be compared file by file with `diff -r`.

use std::path::{Path, PathBuf};

use cartograph::model::Method;

/// `$CARTOGRAPH_CORPUS/graphql`, or the corpus beside the checkout.
fn corpus_dir() -> Option<PathBuf> {
    let root = std::env::var_os("CARTOGRAPH_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
        PathBuf::from,
    );
    let dir = root.join("graphql");
    dir.is_dir().then_some(dir)
}

/// How a document fared; ordered worst first, so "better" is "greater".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Status {
    Refused,
    Warnings,
    Loaded,
}

/// What main loaded before the move to apollo-parser (commit ba224ba):
/// file, status, queries, mutations, types (built-in scalars included).
const BEFORE: &[(&str, Status, usize, usize, usize)] = &[
    (
        "apollo-supergraph-demo__products-subgraph.graphql",
        Status::Loaded,
        2,
        0,
        10,
    ),
    (
        "apollo-supergraph-demo__supergraph.graphql",
        Status::Loaded,
        4,
        0,
        15,
    ),
    (
        "artsy-metaphysics__v2.graphql",
        Status::Loaded,
        163,
        305,
        2275,
    ),
    (
        "artsy__exchange-service.graphql",
        Status::Loaded,
        8,
        27,
        121,
    ),
    (
        "aws-sdk-2.308.0__generated-wrapper.graphql",
        Status::Loaded,
        1,
        0,
        12708,
    ),
    (
        "github__octokit-graphql-schema.graphql",
        Status::Warnings,
        31,
        247,
        1628,
    ),
    (
        "github__voyager-preset__introspection.json",
        Status::Loaded,
        10,
        24,
        243,
    ),
    (
        "githunt__codegen-dev-test__introspection.json",
        Status::Loaded,
        3,
        3,
        15,
    ),
    (
        "gitlab__2023-01__with-client-directives.graphql",
        Status::Loaded,
        45,
        248,
        1590,
    ),
    ("gitlab__2023-08.graphql", Status::Loaded, 57, 293, 1874),
    ("saleor.graphql", Status::Loaded, 89, 332, 1461),
    (
        "shopify-storefront__voyager-preset__introspection.json",
        Status::Loaded,
        4,
        26,
        122,
    ),
    (
        "star-wars__codegen-dev-test__introspection.json",
        Status::Loaded,
        7,
        1,
        20,
    ),
    ("swapi__star-wars-api.graphql", Status::Loaded, 13, 0, 58),
    (
        "swapi__voyager-preset__introspection.json",
        Status::Loaded,
        13,
        0,
        58,
    ),
    (
        "yelp__voyager-preset__introspection.json",
        Status::Loaded,
        4,
        0,
        16,
    ),
];

#[derive(Debug)]
struct Row {
    status: Status,
    queries: usize,
    mutations: usize,
    types: usize,
    first_problem: String,
}

fn sweep_one(path: &Path, dump: Option<&Path>) -> Row {
    match cartograph::load::load(path) {
        Ok(loaded) => {
            let count = |m: Method| {
                loaded
                    .api
                    .operations
                    .iter()
                    .filter(|o| o.method == m)
                    .count()
            };
            let types = loaded.api.graphql.as_ref().map_or(0, |ts| ts.types.len());
            if let Some(dir) = dump {
                let warnings: Vec<String> = loaded
                    .warnings
                    .iter()
                    .map(|w| format!("{}: {}", w.location, w.message))
                    .collect();
                let whole = serde_json::json!({
                    "api": loaded.api,
                    "type_system": loaded.api.graphql,
                    "warnings": warnings,
                });
                let name = path.file_name().unwrap().to_string_lossy();
                std::fs::write(
                    dir.join(format!("{name}.model.json")),
                    serde_json::to_string_pretty(&whole).unwrap(),
                )
                .unwrap();
            }
            Row {
                status: if loaded.warnings.is_empty() {
                    Status::Loaded
                } else {
                    Status::Warnings
                },
                queries: count(Method::GraphqlQuery),
                mutations: count(Method::GraphqlMutation),
                types,
                first_problem: loaded
                    .warnings
                    .first()
                    .map(|w| format!("{} warning(s), first: {w}", loaded.warnings.len()))
                    .unwrap_or_default(),
            }
        }
        Err(e) => Row {
            status: Status::Refused,
            queries: 0,
            mutations: 0,
            types: 0,
            first_problem: e.to_string().lines().next().unwrap_or("").to_string(),
        },
    }
}

#[test]
fn every_graphql_corpus_document_loads_as_well_as_before() {
    let Some(dir) = corpus_dir() else {
        eprintln!("skipped: ../shared/corpus/graphql is not beside the checkout");
        return;
    };
    let dump = std::env::var_os("CARTOGRAPH_GRAPHQL_DUMP").map(PathBuf::from);
    if let Some(d) = &dump {
        std::fs::create_dir_all(d).unwrap();
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("graphql" | "json")
            )
        })
        .collect();
    files.sort();
    assert!(files.len() >= 16, "{} GraphQL documents", files.len());
    let mut worse = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let started = std::time::Instant::now();
        let row = sweep_one(path, dump.as_deref());
        let ms = started.elapsed().as_millis();
        println!(
            "{:<9} {:>5} queries {:>5} mutations {:>5} types {ms:>6} ms  {name}  {}",
            format!("{:?}", row.status),
            row.queries,
            row.mutations,
            row.types,
            row.first_problem
        );
        if let Some(&(_, status, queries, mutations, types)) =
            BEFORE.iter().find(|(file, ..)| *file == name)
            && (row.status < status
                || row.queries < queries
                || row.mutations < mutations
                || row.types < types)
        {
            worse.push(format!(
                "{name}: now {row:?}, before {status:?} {queries} queries {mutations} mutations {types} types"
            ));
        }
    }
    assert!(
        worse.is_empty(),
        "loads worse than before:\n{}",
        worse.join("\n")
    );
}

/// Operation names (per root) and type names, as Cartograph's model has them.
fn model_names(path: &Path) -> (Vec<String>, Vec<String>, Vec<String>) {
    let loaded = cartograph::load::load(path).unwrap_or_else(|e| panic!("{e}"));
    let of = |m: Method| {
        loaded
            .api
            .operations
            .iter()
            .filter(|o| o.method == m)
            .map(|o| o.path.clone())
            .collect::<Vec<_>>()
    };
    let mut types: Vec<String> = loaded
        .api
        .graphql
        .as_ref()
        .unwrap()
        .types
        .keys()
        .cloned()
        .collect();
    types.sort();
    (of(Method::GraphqlQuery), of(Method::GraphqlMutation), types)
}

/// The same names as Apollo's compiler builds them from the document (a
/// schema with errors still gives its partial result), left-out types aside.
fn apollo_names(path: &Path) -> (Vec<String>, Vec<String>, Vec<String>) {
    use apollo_compiler::Schema;
    use apollo_compiler::ast::OperationType;
    let text = std::fs::read_to_string(path).unwrap();
    let schema = match Schema::builder()
        .adopt_orphan_extensions()
        .parse(text, path)
        .build()
    {
        Ok(s) => s,
        Err(with) => with.partial,
    };
    let root_fields = |op: OperationType| {
        schema
            .root_operation(op)
            .and_then(|name| schema.get_object(name))
            .map(|o| o.fields.keys().map(|n| n.to_string()).collect())
            .unwrap_or_default()
    };
    let mut types: Vec<String> = schema
        .types
        .iter()
        .filter(|(name, t)| !name.starts_with("__") && !t.is_built_in() || is_scalar_builtin(name))
        .map(|(name, _)| name.to_string())
        .collect();
    types.sort();
    (
        root_fields(OperationType::Query),
        root_fields(OperationType::Mutation),
        types,
    )
}

fn is_scalar_builtin(name: &str) -> bool {
    cartograph::model::graphql::BUILTIN_SCALARS.contains(&name)
}

/// For representative SDL documents (federation extensions, descriptions on
/// everything, `extend schema` with a schema description, the demo's own
/// schema), the model has exactly the operations and types that Apollo's
/// compiler reads from the same text.
#[test]
fn representative_documents_give_the_operations_and_types_apollo_reads() {
    let dir = tempfile::tempdir().unwrap();
    let extended = dir.path().join("extended.graphql");
    std::fs::write(
        &extended,
        r#"
"""A schema described, then extended: graphql-parser 0.4 read neither."""
schema { query: Query }
extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"]) {
  mutation: Writes
}
"""A thing, described."""
type Thing @key(fields: "id") { "its id" id: ID! name: String }
type Query { thing(id: ID!): Thing things(first: Int = 10): [Thing!]! }
type Writes { rename(id: ID!, name: String!): Thing }
extend type Query { count: Int! }
"#,
    )
    .unwrap();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![
        extended,
        manifest.join("models/demo/schema.graphql"),
        manifest.join("fixtures/graphql/fault-kinds/schema.graphql"),
    ];
    if let Some(corpus) = corpus_dir() {
        for name in [
            "apollo-supergraph-demo__products-subgraph.graphql",
            "swapi__star-wars-api.graphql",
            "github__octokit-graphql-schema.graphql",
            "saleor.graphql",
        ] {
            files.push(corpus.join(name));
        }
    } else {
        eprintln!("corpus files skipped: ../shared/corpus/graphql is not beside the checkout");
    }
    for path in files {
        let ours = model_names(&path);
        let apollo = apollo_names(&path);
        assert!(!ours.0.is_empty(), "{}: no queries", path.display());
        assert_eq!(ours.0, apollo.0, "{}: queries", path.display());
        assert_eq!(ours.1, apollo.1, "{}: mutations", path.display());
        assert_eq!(ours.2, apollo.2, "{}: types", path.display());
    }
}
