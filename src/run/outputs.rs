//! What a run writes besides the report: the graph before and after the
//! answers refined it, and a line on what feedback changed.

use crate::graph;

/// One line on what feedback changed in the graph, when it changed anything.
pub fn print_changes(changes: &[crate::graph::feedback::Change]) {
    use crate::graph::feedback::Change;
    if changes.is_empty() {
        return;
    }
    let mut counts = [0usize; 5];
    for c in changes {
        counts[match c {
            Change::Produces { .. } => 0,
            Change::Equivalent { .. } => 1,
            Change::Binding { .. } => 2,
            Change::Suspended { .. } => 3,
            Change::Reactivated { .. } => 4,
        }] += 1;
    }
    eprintln!(
        "cartograph: the graph learned from the responses: {} produces edge(s), {} equivalence(s), {} new binding(s); {} suspension(s), {} re-activation(s) (graph-final.json; compare with `cartograph graph --diff`)",
        counts[0], counts[1], counts[2], counts[3], counts[4]
    );
}

/// Writes the graph's JSON export as `name` in the output folder.
pub fn write_graph(
    out: &crate::execution::OutDir,
    name: &str,
    g: &graph::PropertyGraph,
) -> anyhow::Result<()> {
    out.write(
        name,
        graph::export::render(g, graph::export::Format::Json).as_bytes(),
    )
    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.path(name).display()))
}
