//! What a run writes besides the report: the graph before and after the
//! answers refined it, and a line on what feedback changed.

use crate::graph;

/// One line on what feedback changed in the graph, when it changed anything.
pub(crate) fn print_changes(changes: &[crate::graph::feedback::Change], verbose: bool) {
    if let Some(line) = changes_line(changes, verbose) {
        eprintln!("cartograph: {line}");
    }
}

/// What feedback changed in the graph, in plain words; `verbose` adds the
/// search's own bookkeeping (links set aside after failures and taken back),
/// which says more about the search than about the API.
fn changes_line(changes: &[crate::graph::feedback::Change], verbose: bool) -> Option<String> {
    use crate::graph::feedback::Change;
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
    let learned = counts[0] + counts[1] + counts[2];
    let diff = "`cartograph graph --diff graph-initial.json graph-final.json` shows what changed";
    if verbose && !changes.is_empty() {
        return Some(format!(
            "the graph learned from the answers: {} produces edge(s), {} equivalence(s), {} new binding(s); {} suspension(s), {} re-activation(s) of links that kept failing ({diff})",
            counts[0], counts[1], counts[2], counts[3], counts[4]
        ));
    }
    (learned > 0).then(|| {
        format!("the answers showed {learned} link(s) between operations the description does not state ({diff})")
    })
}

/// A line for the terminal when the exchange log `file`, limited to
/// `limit` bytes (`--trace-limit`), left exchanges out; none otherwise.
pub(crate) fn trace_note(
    file: &str,
    counts: crate::execution::TraceCounts,
    limit: usize,
) -> Option<String> {
    (counts.left_out > 0).then(|| {
        format!(
            "{file} holds the first {} exchange(s), {} (--trace-limit); the {} later one(s) were counted, not written (--trace-limit 0 keeps all)",
            counts.written,
            crate::model::text::size_text(limit),
            counts.left_out
        )
    })
}

/// Writes the graph's JSON export as `name` in the output folder.
pub(crate) fn write_graph(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::feedback::Change;

    #[test]
    fn a_trace_that_left_exchanges_out_says_how_many() {
        let counts = crate::execution::TraceCounts {
            written: 7,
            left_out: 43,
        };
        let note = trace_note("trace.ndjson", counts, 1000).unwrap();
        assert!(note.contains(&counts.left_out.to_string()), "{note}");
        assert!(note.contains("first 7 exchange(s), 1000 bytes"), "{note}");
        let all = crate::execution::TraceCounts {
            written: 50,
            left_out: 0,
        };
        assert_eq!(trace_note("trace.ndjson", all, 1000), None);
    }

    #[test]
    fn the_line_on_feedback_is_plain_unless_verbose() {
        let changes = vec![
            Change::Suspended {
                schema: "Pet".into(),
                operation: "getPet".into(),
            },
            Change::Reactivated {
                schema: "Pet".into(),
                operation: "getPet".into(),
            },
        ];
        // Only the search's bookkeeping: nothing a user learns about the API.
        assert_eq!(changes_line(&changes, false), None);
        let verbose = changes_line(&changes, true).unwrap();
        assert!(
            verbose.contains("1 suspension(s), 1 re-activation(s)"),
            "{verbose}"
        );
        let mut learned = changes.clone();
        learned.push(Change::Produces {
            operation: "listPets".into(),
            schema: "Pet".into(),
        });
        let plain = changes_line(&learned, false).unwrap();
        assert!(plain.contains("1 link(s)"), "{plain}");
        assert!(!plain.contains("suspension"), "{plain}");
    }
}
