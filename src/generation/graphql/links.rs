//! What the graph tells the GraphQL protocol, read once per version of the
//! graph: which schema properties feed each root field's arguments (and
//! their input-object fields), which mutations produce each schema, and
//! which queries list it.

use indexmap::IndexMap;
use petgraph::Direction;
use petgraph::visit::EdgeRef;

use crate::graph::{EdgeKind, EdgeState, Label, NodeKind, PropertyGraph};
use crate::model::{Location, Method};

/// One input of a root field fed by a schema property through a consumes
/// edge of the graph: an argument (`id`, `authorId`) or a field of an
/// input-object argument (`input.authorId`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ArgSource {
    /// The input: the argument's name, dotted for an input-object field.
    pub(super) input: String,
    /// The schema (the edge's source).
    pub(super) schema: String,
    /// The schema's property that feeds the input.
    pub(super) property: String,
    /// Whether the edge is active (not suspended).
    pub(super) active: bool,
    /// The binding's confidence.
    pub(super) score: f64,
}

/// A root field that produces a schema: a mutation that makes it, or a
/// query that lists it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Maker {
    /// The root field.
    pub(super) field: String,
    /// Whether the schema is the field's own value (`$`, `$[*]`), not
    /// something nested in it (`createAuthor` returns `Author.books` too).
    pub(super) top: bool,
    /// The fields leading from the root field's value to the schema, along
    /// its shortest produces site (`events { nodes { … } }`: `["nodes"]`).
    pub(super) path: Vec<String>,
}

impl Maker {
    /// The field names along a produces site's JSON path (`$.nodes[*]`).
    fn path_of(site: &str) -> Vec<String> {
        site.trim_start_matches('$')
            .split('.')
            .map(|s| s.trim_end_matches("[*]"))
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }
}

/// What the graph tells the GraphQL search, read once per version of the
/// graph (like REST's `Plan`): which schema properties feed each root field's
/// arguments, and which mutations produce each schema. Empty for `--no-graph`.
#[derive(Debug, Clone, Default)]
pub(super) struct Links {
    /// Operation (`Query.book`) → its fed inputs, by input name, then active
    /// first, best score first, then schema name.
    pub(super) sources: IndexMap<String, Vec<ArgSource>>,
    /// Schema → the mutations producing it through active produces edges,
    /// by field name.
    pub(super) makers: IndexMap<String, Vec<Maker>>,
    /// Schema → the queries producing it (listings, lookups), by field name:
    /// where ids no mutation returns come from.
    pub(super) listers: IndexMap<String, Vec<Maker>>,
}

impl Links {
    /// Reads the consumes and produces edges of `g`.
    pub(super) fn from_graph(g: &PropertyGraph) -> Links {
        let mut links = Links::default();
        for op in g.nodes(NodeKind::Operation) {
            let node = &g.graph[op];
            let mut sources = Vec::new();
            for e in g.graph.edges_directed(op, Direction::Incoming) {
                if e.weight().kind != EdgeKind::Consumes {
                    continue;
                }
                let Label::Consumes { bindings } = &e.weight().label else {
                    continue;
                };
                for b in bindings {
                    // GraphQL arguments (and their input-object fields) travel
                    // as `Location::Argument`; a binding of a whole object
                    // (empty property) names nothing to copy.
                    if b.location != Location::Argument
                        || b.input.is_empty()
                        || b.property.is_empty()
                    {
                        continue;
                    }
                    sources.push(ArgSource {
                        input: b.input.clone(),
                        schema: g.graph[e.source()].name.clone(),
                        property: b.property.clone(),
                        active: e.weight().state == EdgeState::Active,
                        score: b.score,
                    });
                }
            }
            sources.sort_by(|a, b| {
                a.input
                    .cmp(&b.input)
                    .then_with(|| b.active.cmp(&a.active))
                    .then_with(|| {
                        b.score
                            .partial_cmp(&a.score)
                            .unwrap_or(std::cmp::Ordering::Equal)
                    })
                    .then_with(|| a.schema.cmp(&b.schema))
                    .then_with(|| a.property.cmp(&b.property))
            });
            if !sources.is_empty() {
                links.sources.insert(node.name.clone(), sources);
            }
            let Some(attrs) = node.operation() else {
                continue;
            };
            let into = match attrs.method {
                Method::GraphqlMutation => &mut links.makers,
                Method::GraphqlQuery => &mut links.listers,
                _ => continue,
            };
            for e in g.active_edges(op, EdgeKind::Produces, Direction::Outgoing) {
                let Label::Produces { sites } = &e.weight().label else {
                    continue;
                };
                let Some(path) = sites
                    .iter()
                    .map(|s| Maker::path_of(&s.path))
                    .min_by_key(Vec::len)
                else {
                    continue;
                };
                into.entry(g.graph[e.target()].name.clone())
                    .or_default()
                    .push(Maker {
                        field: attrs.path.clone(),
                        top: path.is_empty(),
                        path,
                    });
            }
        }
        for map in [&mut links.makers, &mut links.listers] {
            for makers in map.values_mut() {
                makers.sort_by(|a, b| a.field.cmp(&b.field));
                makers.dedup_by(|a, b| a.field == b.field);
            }
            map.sort_keys();
        }
        links
    }

    /// The sources of one input, best first.
    pub(super) fn of<'a>(
        &'a self,
        op: &str,
        input: &'a str,
    ) -> impl Iterator<Item = &'a ArgSource> + 'a + use<'a> {
        self.sources
            .get(op)
            .into_iter()
            .flatten()
            .filter(move |s| s.input == input)
    }

    /// The inputs of argument `arg` that the graph feeds: the argument
    /// itself, then fields of it (one level into an input object), each once.
    pub(super) fn inputs_of(&self, op: &str, arg: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in self.sources.get(op).into_iter().flatten() {
            let field_of = s
                .input
                .strip_prefix(arg)
                .and_then(|r| r.strip_prefix('.'))
                .is_some_and(|f| !f.is_empty() && !f.contains('.'));
            if (s.input == arg || field_of) && !out.contains(&s.input) {
                out.push(s.input.clone());
            }
        }
        // The argument itself before its fields.
        out.sort_by_key(|i| i != arg);
        out
    }
}
