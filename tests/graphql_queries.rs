//! Every query the GraphQL generator writes is valid for its schema, as a real
//! validator (apollo-compiler) judges it: for every schema of the shared corpus
//! and the demo's, for every root field (a sample of them on the huge schemas),
//! sampled and then mutated, with arguments as literals and as variables (the
//! variables are also coerced against the operation's variable types).
//!
//! Schemas that do not load, or that apollo-compiler itself rejects, are skipped
//! with a printed reason. The corpus part is skipped when the corpus is not
//! beside the checkout.

use std::path::{Path, PathBuf};
use std::time::Instant;

use apollo_compiler::response::JsonMap;
use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Schema};
use cartograph::generation::graphql::{ArgMode, DEFAULT_MAX_DEPTH, GqlCall, GqlGenerator, to_sdl};
use cartograph::generation::values::Rng64;
use cartograph::model::graphql::TypeSystem;
use rand::{Rng, SeedableRng};

/// Seeds per root field of small schemas (at most [`SMALL`] root fields), whose
/// few fields get a closer look.
const SMALL_SEEDS: u64 = 12;
/// Seeds per root field of the others.
const SEEDS: u64 = 3;
/// Root fields of a small schema.
const SMALL: usize = 40;
/// Mutations applied after each sample, each mutant validated.
const MUTATIONS: usize = 6;

#[derive(Default)]
struct Counts {
    schemas: usize,
    skipped: usize,
    root_fields: usize,
    queries: usize,
    failures: Vec<String>,
}

fn corpus_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/graphql");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!(
            "corpus not found at {}: only the demo schema",
            dir.display()
        );
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
    files.sort();
    files
}

/// The schema apollo-compiler validates against: the original SDL when it
/// accepts it (independent of our loader), else the SDL printed from the type
/// system (introspection JSON, or SDL using directives it does not declare).
fn validator_schema(name: &str, original: Option<&str>, ts: &TypeSystem) -> Option<Valid<Schema>> {
    let printed = to_sdl(ts);
    let printed_schema = Schema::parse_and_validate(printed.as_str(), "printed.graphql");
    if let Some(text) = original {
        match Schema::parse_and_validate(text, name) {
            Ok(schema) => {
                // A schema valid as written stays valid once printed from the type system.
                if let Err(e) = &printed_schema {
                    panic!(
                        "{name}: to_sdl of a valid schema is invalid:\n{}",
                        first_lines(&e.errors.to_string(), 20)
                    );
                }
                return Some(schema);
            }
            Err(e) => println!(
                "{name}: apollo-compiler rejects the original SDL ({}); validating against to_sdl",
                first_lines(&e.errors.to_string(), 1)
            ),
        }
    }
    match printed_schema {
        Ok(schema) => Some(schema),
        Err(e) => {
            println!(
                "SKIP {name}: apollo-compiler rejects the schema: {}",
                first_lines(&e.errors.to_string(), 3)
            );
            None
        }
    }
}

fn first_lines(text: &str, n: usize) -> String {
    text.lines().take(n).collect::<Vec<_>>().join(" | ")
}

/// Validates one rendering of `call`; `Err` holds the document and the errors.
fn check(
    generator: &GqlGenerator,
    schema: &Valid<Schema>,
    call: &GqlCall,
    mode: ArgMode,
) -> Result<(), String> {
    let (doc, vars) = generator.render(call, mode);
    let valid = ExecutableDocument::parse_and_validate(schema, doc.as_str(), "query.graphql")
        .map_err(|e| format!("{doc}\n  {}", first_lines(&e.errors.to_string(), 6)))?;
    let op = valid
        .operations
        .get(None)
        .map_err(|_| format!("{doc}\n  not exactly one operation"))?;
    match mode {
        ArgMode::Literals => {
            if vars.as_object().is_none_or(|m| !m.is_empty()) {
                return Err(format!("{doc}\n  literal mode with variables {vars}"));
            }
        }
        ArgMode::Variables => {
            let map: JsonMap =
                serde_json::from_value(vars.clone()).expect("variables are an object");
            if op.variables.len() != map.len() {
                return Err(format!(
                    "{doc}\n  {} variables declared, {} given: {vars}",
                    op.variables.len(),
                    map.len()
                ));
            }
            apollo_compiler::request::coerce_variable_values(schema, op, &map)
                .map_err(|e| format!("{doc}\n  variables {vars}: {}", e.message()))?;
        }
    }
    Ok(())
}

fn exercise(name: &str, original: Option<&str>, ts: &TypeSystem, counts: &mut Counts) {
    let Some(schema) = validator_schema(name, original, ts) else {
        counts.skipped += 1;
        return;
    };
    let started = Instant::now();
    let generator = GqlGenerator::new(ts, DEFAULT_MAX_DEPTH);
    let mut roots: Vec<(String, String)> = Vec::new();
    let roots_types = [&ts.query_type, &ts.mutation_type, &ts.subscription_type];
    for root in roots_types.into_iter().flatten() {
        if let Some(t) = ts.get(root) {
            roots.extend(t.fields.iter().map(|f| (root.clone(), f.name.clone())));
        }
    }
    // Every root field of every schema: generation and validation are fast
    // enough (a few seconds for the whole corpus), so nothing is sampled.
    let seeds = if roots.len() <= SMALL {
        SMALL_SEEDS
    } else {
        SEEDS
    };
    let mut queries = 0;
    let failures_before = counts.failures.len();
    for (i, (root, field)) in roots.iter().enumerate() {
        for seed in 0..seeds {
            let mut rng = Rng64::seed_from_u64(seed * 1_000_003 + i as u64);
            let mut call = generator.sample(root, field, &mut rng);
            for step in 0..=MUTATIONS {
                if step > 0 {
                    generator.mutate(&mut call, &mut rng);
                }
                // Alternate the mode of mutants; samples are checked in both.
                let modes: &[ArgMode] = match (step, rng.random_bool(0.5)) {
                    (0, _) => &[ArgMode::Literals, ArgMode::Variables],
                    (_, true) => &[ArgMode::Literals],
                    (_, false) => &[ArgMode::Variables],
                };
                for &mode in modes {
                    queries += 1;
                    if let Err(e) = check(&generator, &schema, &call, mode) {
                        counts.failures.push(format!(
                            "{name} {root}.{field} seed {seed} step {step} {mode:?}: {e}"
                        ));
                    }
                }
            }
        }
    }
    println!(
        "{name}: {} root fields, {queries} queries validated, {} failures, {:.1}s",
        roots.len(),
        counts.failures.len() - failures_before,
        started.elapsed().as_secs_f64()
    );
    counts.schemas += 1;
    counts.root_fields += roots.len();
    counts.queries += queries;
}

/// Cases the corpus may miss: fields of one name but different types or
/// arguments across union members and interface implementers (they must never
/// share a selection set), interfaces implementing interfaces, recursive and
/// defaulted inputs, nested lists, custom scalars, required arguments deep in
/// a selection, and types whose only fields lead back up the path.
const TRICKY_SDL: &str = r#"
schema { query: Root mutation: Change }
scalar DateTime
scalar JSON
interface Node { id: ID! }
interface Named implements Node { id: ID! name(upper: Boolean = false): String }
type Cat implements Named & Node { id: ID! name(upper: Boolean = false): String lives: Int state: CatState owner: Person }
type Dog implements Named & Node { id: ID! name(upper: Boolean = false): String state: DogState tricks(first: Int!, after: String): [[Trick!]]! owner: Person }
type Trick { label: String! at: DateTime }
type Person implements Node { id: ID! pets(filter: PetFilter!): [Pet] best: Pet friend: Person }
type Loop { next: Loop! back: Loop }
union Pet = Cat | Dog
union Anything = Cat | Dog | Person | Trick
enum CatState { ASLEEP AWAKE }
enum DogState { ASLEEP BARKING }
input PetFilter { name: String, states: [CatState!] = [ASLEEP], nested: PetFilter, meta: JSON, since: DateTime, and: [PetFilter!] }
input NewPet { name: String!, filter: PetFilter!, tags: [[String!]!], count: Int! = 1 }
type Root {
  node(id: ID!): Node
  named(id: ID!): Named
  pet(id: ID!): Pet
  anything(ids: [ID!]!, limit: Int = 10): [Anything!]!
  people(filter: PetFilter): [Person!]
  loop: Loop
  now: DateTime!
  echo(text: String!, json: JSON): String
}
type Change {
  addPet(input: NewPet!): Pet!
  rename(id: ID!, name: String!): Named
  touch(at: [DateTime!]!): Boolean
}
"#;

/// The validator is live: it rejects what the generator must never write.
#[test]
fn the_validator_rejects_invalid_queries() {
    let schema =
        Schema::parse_and_validate(cartograph::testing::GRAPHQL_SDL, "demo.graphql").unwrap();
    for bad in [
        "query { book(id: \"1\") }",                 // no selection on an object
        "query { book(id: \"1\") { } }",             // empty selection
        "query { book { id } }",                     // required argument missing
        "query { book(id: \"1\") { title { x } } }", // selection on a leaf
        "mutation { placeOrder(bookId: \"1\", quantity: 3000000000) { id } }", // Int overflow
        "mutation { createBook(authorId: \"1\", input: { title: \"t\" }) { id } }", // input field missing
        "query Q($id: ID) { book(id: $id) { id } }", // nullable variable, non-null argument
    ] {
        assert!(
            ExecutableDocument::parse_and_validate(&schema, bad, "bad.graphql").is_err(),
            "accepted: {bad}"
        );
    }
    // Why a response name appears once per selection set and its fragments.
    let tricky = Schema::parse_and_validate(TRICKY_SDL, "tricky.graphql").unwrap();
    for bad in [
        "{ pet(id: 1) { ... on Cat { state } ... on Dog { state } } }",
        "{ named(id: 1) { name ... on Dog { name(upper: true) } } }",
    ] {
        assert!(
            ExecutableDocument::parse_and_validate(&tricky, bad, "bad.graphql").is_err(),
            "accepted: {bad}"
        );
    }
    let doc = ExecutableDocument::parse_and_validate(
        &schema,
        "mutation M($q: Int!) { placeOrder(bookId: \"1\", quantity: $q) { id } }",
        "vars.graphql",
    )
    .unwrap();
    let op = doc.operations.get(None).unwrap();
    let bad: JsonMap = serde_json::from_value(serde_json::json!({"q": "three"})).unwrap();
    assert!(apollo_compiler::request::coerce_variable_values(&schema, op, &bad).is_err());
}

#[test]
fn generated_queries_validate_against_every_schema() {
    let mut counts = Counts::default();
    let demo =
        cartograph::load::load_text(cartograph::testing::GRAPHQL_SDL, Path::new("demo.graphql"))
            .expect("the demo schema loads");
    let ts = demo.api.graphql.expect("the demo is GraphQL");
    exercise(
        "demo.graphql",
        Some(cartograph::testing::GRAPHQL_SDL),
        &ts,
        &mut counts,
    );
    assert_eq!(counts.schemas, 1, "the demo schema is valid");
    let tricky = cartograph::load::load_text(TRICKY_SDL, Path::new("tricky.graphql"))
        .expect("the tricky schema loads");
    let ts = tricky.api.graphql.expect("GraphQL");
    exercise("tricky.graphql", Some(TRICKY_SDL), &ts, &mut counts);
    assert_eq!(counts.schemas, 2, "the tricky schema is valid");

    for path in corpus_files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let loaded = match cartograph::load::load(&path) {
            Ok(l) => l,
            Err(e) => {
                println!("SKIP {name}: does not load: {e}");
                counts.skipped += 1;
                continue;
            }
        };
        let Some(ts) = loaded.api.graphql else {
            println!("SKIP {name}: not GraphQL");
            counts.skipped += 1;
            continue;
        };
        let original = (path
            .extension()
            .is_some_and(|e| e == "graphql" || e == "graphqls"))
        .then(|| std::fs::read_to_string(&path).unwrap());
        exercise(&name, original.as_deref(), &ts, &mut counts);
    }

    println!(
        "schemas exercised: {}, skipped: {}, root fields: {}, queries validated: {}, failures: {}",
        counts.schemas,
        counts.skipped,
        counts.root_fields,
        counts.queries,
        counts.failures.len()
    );
    for f in counts.failures.iter().take(15) {
        println!("FAIL {f}");
    }
    assert!(
        counts.failures.is_empty(),
        "{} generated queries are invalid",
        counts.failures.len()
    );
}
