//! `cartograph inspect`: a readable account of the graph.

use std::fmt::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use petgraph::Direction;
use petgraph::visit::EdgeRef;

use crate::graph::{self, EdgeKind, NodeKind, Origin, PropertyGraph, query};
use crate::model::Location;

/// Arguments of `cartograph inspect`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  cartograph inspect petstore.yaml\n  cartograph inspect petstore.yaml --op getPetById\n  cartograph inspect petstore.yaml --chain deleteOrder\n  cartograph inspect petstore.yaml --sequences"
)]
pub(super) struct InspectArgs {
    /// The API description (OpenAPI, Swagger, GraphQL SDL or introspection
    /// JSON): a file or an http(s):// URL.
    pub spec: PathBuf,
    /// Show where each input of this operation can come from, and what consumes its
    /// outputs. Operations are named by operationId, else `METHOD /path`
    /// (GraphQL: `Query.field`).
    #[arg(long, value_name = "NAME", conflicts_with = "chain")]
    pub op: Option<String>,
    /// Print a shortest call chain that obtains every required input of this
    /// operation from earlier responses.
    #[arg(long, value_name = "NAME", conflicts_with = "sequences")]
    pub chain: Option<String>,
    /// List the call sequences `cartograph run` samples from the graph
    /// (producers chained to consumers, filtered by the CRUD rule), longest
    /// first, at most this many.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "50", conflicts_with = "op")]
    pub sequences: Option<usize>,
    /// Question the graph a run ended with (its `graph-final.json`) instead
    /// of the one built from the description: `--op` then also shows what
    /// the server's answers taught about each input's values.
    #[arg(long, value_name = "FILE")]
    pub graph: Option<PathBuf>,
    #[command(flatten)]
    pub select: super::args::SelectArgs,
    #[command(flatten)]
    pub fetch: super::args::FetchArgs,
}

/// Runs the command.
pub(super) fn run(args: &InspectArgs) -> anyhow::Result<ExitCode> {
    let (mut loaded, _) =
        super::load_any(&args.spec, || args.fetch.client(), &args.fetch.headers()?)?;
    super::select(&mut [&mut loaded.api], &args.select)?;
    let g = match &args.graph {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
            let doc = graph::export::from_json(&text).map_err(|e| {
                anyhow::anyhow!(
                    "{}: not a graph export ({e}); pass the graph-final.json a run wrote",
                    path.display()
                )
            })?;
            PropertyGraph::from_document(&doc)
        }
        None => crate::run::phase::timed("building the graph", || graph::build(&loaded.api)),
    };
    let text = if let Some(name) = &args.op {
        let ix = find_operation(&g, name)?;
        operation_text(&g, ix)
    } else if let Some(name) = &args.chain {
        let ix = find_operation(&g, name)?;
        chain_text(&g, ix)
    } else if let Some(limit) = args.sequences {
        sequences_text(&g, &loaded.api, limit)
    } else {
        summary_text(&g, &loaded.api, loaded.warnings.len())
    };
    // Text for people, quoting the description: its control characters
    // show as escapes instead of acting on the terminal.
    super::write_output(&crate::model::text::printable(&text), None)?;
    Ok(ExitCode::SUCCESS)
}

fn find_operation(g: &PropertyGraph, name: &str) -> anyhow::Result<petgraph::graph::NodeIndex> {
    if let Some(ix) = g.operation(name) {
        return Ok(ix);
    }
    // Forgive case and `METHOD path` written without the exact spacing.
    let wanted = name.to_ascii_lowercase().replace(char::is_whitespace, "");
    for ix in g.nodes(NodeKind::Operation) {
        if g.graph[ix]
            .name
            .to_ascii_lowercase()
            .replace(char::is_whitespace, "")
            == wanted
        {
            return Ok(ix);
        }
    }
    let mut names: Vec<(f64, &str)> = g
        .nodes(NodeKind::Operation)
        .map(|ix| {
            let n = g.graph[ix].name.as_str();
            (
                strsim::jaro_winkler(&n.to_ascii_lowercase(), &name.to_ascii_lowercase()),
                n,
            )
        })
        .collect();
    names.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
    let suggestions: Vec<&str> = names.iter().take(3).map(|(_, n)| *n).collect();
    anyhow::bail!(
        "no operation named {name:?}; did you mean {}? (`cartograph inspect SPEC` lists them)",
        suggestions
            .iter()
            .map(|s| format!("{s:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn summary_text(g: &PropertyGraph, api: &crate::model::Api, warnings: usize) -> String {
    let mut out = String::new();
    let ops: Vec<_> = g.nodes(NodeKind::Operation).collect();
    let schemas: Vec<_> = g.nodes(NodeKind::Schema).collect();
    let _ = writeln!(out, "{} ({})", g.title, g.format.label());
    let _ = writeln!(
        out,
        "  {} operations, {} schemas, {} edges{}",
        ops.len(),
        schemas.len(),
        g.graph.edge_count(),
        if warnings > 0 {
            format!(", {warnings} part(s) skipped while loading")
        } else {
            String::new()
        }
    );
    let _ = writeln!(out, "\nEdges by kind and origin:");
    let counts = g.edge_counts();
    for kind in EdgeKind::ALL {
        let of_kind: Vec<_> = counts.iter().filter(|((k, _), _)| *k == kind).collect();
        let total: usize = of_kind.iter().map(|(_, n)| n).sum();
        let parts: Vec<String> = of_kind
            .iter()
            .map(|((_, o), n)| format!("{} {n}", o.as_str()))
            .collect();
        let _ = writeln!(
            out,
            "  {:<14} {:>5}{}",
            kind.as_str(),
            total,
            if parts.is_empty() {
                String::new()
            } else {
                format!("   ({})", parts.join(", "))
            }
        );
    }

    const LIST_LIMIT: usize = 60;
    let _ = writeln!(out, "\nOperations:");
    for &ix in ops.iter().take(LIST_LIMIT) {
        let n = &g.graph[ix];
        let produced: Vec<String> = g
            .active_edges(ix, EdgeKind::Produces, Direction::Outgoing)
            .map(|e| g.graph[e.target()].name.clone())
            .collect();
        let where_ = n
            .operation()
            .map(|a| format!("{} {}", a.method.as_str(), a.path))
            .unwrap_or_default();
        let mut line = format!("  {:<28} {}", n.name, where_);
        if !produced.is_empty() {
            let _ = write!(line, "  → {}", produced.join(", "));
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    if ops.len() > LIST_LIMIT {
        let _ = writeln!(out, "  … and {} more", ops.len() - LIST_LIMIT);
    }

    let _ = writeln!(out, "\nSchemas:");
    for &ix in schemas.iter().take(LIST_LIMIT) {
        let n = &g.graph[ix];
        let producers = query::producers(g, ix);
        let mut consumers: Vec<String> = g
            .active_edges(ix, EdgeKind::Consumes, Direction::Outgoing)
            .map(|e| g.graph[e.target()].name.clone())
            .collect();
        consumers.sort();
        let _ = writeln!(
            out,
            "  {:<28} produced by {}; consumed by {}",
            n.name,
            list_or_none(&producers),
            list_or_none(&consumers)
        );
    }
    if schemas.len() > LIST_LIMIT {
        let _ = writeln!(out, "  … and {} more", schemas.len() - LIST_LIMIT);
    }

    if !api.webhooks.is_empty() {
        let _ = writeln!(out, "\nWebhooks (calls the API makes; listed, not tested):");
        for w in &api.webhooks {
            let _ = writeln!(
                out,
                "  {:<28} {}{}",
                w.name,
                w.method.as_str(),
                w.operation_id
                    .as_ref()
                    .map(|id| format!(" ({id})"))
                    .unwrap_or_default()
            );
        }
    }

    let unproduced = query::unproduced_required(g);
    let _ = writeln!(
        out,
        "\nRequired parameters no operation produces ({}):",
        unproduced.len()
    );
    if unproduced.is_empty() {
        let _ = writeln!(out, "  (none: every required parameter has a producer)");
    }
    for u in unproduced.iter().take(LIST_LIMIT) {
        let _ = writeln!(
            out,
            "  {:<28} {} {}",
            u.operation,
            u.location.as_str(),
            u.input
        );
    }
    if unproduced.len() > LIST_LIMIT {
        let _ = writeln!(out, "  … and {} more", unproduced.len() - LIST_LIMIT);
    }
    let _ = writeln!(
        out,
        "\nMore: `--op NAME` for one operation's inputs and outputs, `--chain NAME` for a call chain."
    );
    out
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else if items.len() > 6 {
        format!("{} and {} more", items[..6].join(", "), items.len() - 6)
    } else {
        items.join(", ")
    }
}

fn input_label(location: Location, name: &str) -> String {
    if name.is_empty() {
        "body (whole)".into()
    } else {
        format!("{} {}", location.as_str(), name)
    }
}

fn operation_text(g: &PropertyGraph, ix: petgraph::graph::NodeIndex) -> String {
    let mut out = String::new();
    let n = &g.graph[ix];
    let attrs = n.operation();
    let _ = writeln!(
        out,
        "{}  ({})",
        n.name,
        attrs
            .map(|a| format!("{} {}", a.method.as_str(), a.path))
            .unwrap_or_default()
    );
    let _ = writeln!(out, "\nInputs and where their values can come from:");
    let inputs = query::input_sources(g, ix);
    if inputs.is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    for input in &inputs {
        let _ = writeln!(
            out,
            "  {}{}: {}",
            input_label(input.location, &input.name),
            if input.required { " (required)" } else { "" },
            input.ty
        );
        if input.sources.is_empty() && input.suspended.is_empty() {
            let _ = writeln!(out, "      no source in the graph: values are generated");
        } else if input.sources.is_empty() {
            let _ = writeln!(
                out,
                "      no source in use: the run set aside the link(s) below after repeated failures, and generated values"
            );
        }
        let learnt = attrs.and_then(|a| {
            a.inputs
                .iter()
                .find(|i| i.location == input.location && i.name == input.name)
                .and_then(|i| i.learnt.as_ref())
        });
        if let Some(l) = learnt {
            let what = match (l.values.as_str(), &l.value) {
                ("pooled", _) => "only values earlier answers gave".to_string(),
                ("left_out", _) => "left out of positive tests".to_string(),
                (_, Some(v)) => format!("set to {v}, the value accepted"),
                (other, None) => other.to_string(),
            };
            let _ = writeln!(
                out,
                "      learnt from the answers: {what}; {} (exchanges {})",
                l.evidence.note,
                l.evidence
                    .exchanges
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        let all = input
            .sources
            .iter()
            .map(|s| (s, ""))
            .chain(input.suspended.iter().map(|s| (s, "  (suspended)")));
        for (s, state) in all {
            let what = if s.property.is_empty() {
                s.schema.clone()
            } else {
                format!("{}.{}", s.schema, s.property)
            };
            let how = match s.origin {
                Origin::Inferred => format!("inferred by {}, score {:.2}", s.rule, s.score),
                o => format!("{} ({})", o.as_str(), s.rule),
            };
            let _ = writeln!(
                out,
                "      ← {what}  [{how}]  produced by {}{state}",
                list_or_none(&s.producers)
            );
        }
    }
    let _ = writeln!(out, "\nOutputs and what consumes them:");
    let outputs = query::output_consumers(g, ix);
    if outputs.is_empty() {
        let _ = writeln!(out, "  (no schema in a documented 2xx response)");
    }
    for (schema, consumers) in outputs {
        let _ = writeln!(out, "  {schema}");
        if consumers.is_empty() {
            let _ = writeln!(out, "      consumed by no operation");
        }
        for (op, label) in consumers {
            let _ = writeln!(out, "      → {op}  ({label})");
        }
    }
    let peers: Vec<String> = g
        .graph
        .edges_directed(ix, Direction::Outgoing)
        .chain(g.graph.edges_directed(ix, Direction::Incoming))
        .filter(|e| e.weight().kind == EdgeKind::SameEndpoint)
        .map(|e| {
            let other = if e.source() == ix {
                e.target()
            } else {
                e.source()
            };
            g.graph[other].name.clone()
        })
        .collect();
    if !peers.is_empty() {
        let _ = writeln!(out, "\nSame endpoint: {}", peers.join(", "));
    }
    out
}

fn chain_text(g: &PropertyGraph, ix: petgraph::graph::NodeIndex) -> String {
    let mut out = String::new();
    let chain = query::chain(g, ix);
    let _ = writeln!(
        out,
        "Shortest call chain for {} ({} call{}):",
        g.graph[ix].name,
        chain.steps.len(),
        if chain.steps.len() == 1 { "" } else { "s" }
    );
    for (i, step) in chain.steps.iter().enumerate() {
        let _ = writeln!(out, "  {}. {}", i + 1, step.operation);
        for (consumer, input, via) in &step.provides {
            let _ = writeln!(out, "       {via} → {consumer} {input}");
        }
    }
    if !chain.unresolved.is_empty() {
        let _ = writeln!(
            out,
            "\nRequired inputs the chain cannot obtain (values are generated):"
        );
        for (op, input, why) in &chain.unresolved {
            let _ = writeln!(out, "  {op} {input}: {why}");
        }
    }
    out
}

/// The graph's call sequences, longest first.
fn sequences_text(g: &PropertyGraph, api: &crate::model::Api, limit: usize) -> String {
    let all = crate::generation::sequences::call_sequences(
        api,
        g,
        crate::generation::MioConfig::default().max_length,
        2_000,
        &|_| true,
    );
    let total = all.len();
    let mut seqs = all;
    seqs.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} call sequences from the graph (at most 2,000 are built); the {} longest:",
        total,
        limit.min(total)
    );
    for seq in seqs.iter().take(limit) {
        let names: Vec<&str> = seq
            .iter()
            .map(|&p| api.operations[p].name.as_str())
            .collect();
        let _ = writeln!(out, "  {}", names.join(" → "));
    }
    out
}
