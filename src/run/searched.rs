//! The search as a source of tests: MIO over the graph, through the API's
//! protocol (REST or GraphQL). After the engine stops it hands over its
//! faults (causes' representatives first), its archive as the suite to
//! record again, and the refined graph.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::outputs;
use super::search::Found;
use super::source::{Collected, Ended, Source};
use super::{RuntimeFailure, write_suite_document};
use crate::execution::{Driver, Exchange};
use crate::generation::Search;
use crate::generation::search::Protocol;
use crate::graph;
use crate::model::text::one_line;
use crate::reports::{self, Report};
use crate::reproduce;
use crate::reproduce::phase::{Replays, Suite};

/// A search, and what only its protocol adds to the report.
pub(crate) struct Searched<P: Protocol, F> {
    search: Arc<Mutex<Search<P>>>,
    extras: F,
}

impl<P: Protocol, F: Fn(&P, &mut Report)> Searched<P, F> {
    /// `search` as a source; `extras` adds what only the protocol knows to
    /// the report (GraphQL's schema coverage).
    pub(crate) fn new(search: Search<P>, extras: F) -> Self {
        Searched {
            search: Arc::new(Mutex::new(search)),
            extras,
        }
    }
}

impl<P: Protocol + 'static, F: Fn(&P, &mut Report)> Source for Searched<P, F> {
    fn driver(&self) -> Arc<Mutex<dyn Driver>> {
        self.search.clone()
    }

    fn found(&self, listening: bool) -> Found {
        let search = self.search.lock().unwrap_or_else(|e| e.into_inner());
        Found {
            count: search.faults().counter(),
            news: listening.then(|| search.faults().news()),
        }
    }

    fn collect(self, ended: Ended<'_>) -> anyhow::Result<Collected> {
        let Ended {
            api,
            target,
            outcome,
            options,
            out,
            secrets,
            tally,
            settings,
            until,
        } = ended;
        let mut search = self.search.lock().unwrap_or_else(|e| e.into_inner());
        let mut report = tally.report(settings, outcome, search.faults().faults());
        report.search = Some(search.summary());
        // Said once each, after the search: what it cost, and that it was
        // held to its share.
        let slow = search.slow_operations();
        for s in &slow {
            eprintln!("warning: {s}");
            report.warnings.push(s.to_string());
        }
        if let Some(s) = search.identity_silence() {
            eprintln!("warning: {}", one_line(&s));
            report.warnings.push(s);
        }
        report.graph_coverage = Some(reports::GraphCoverage::of(
            search.graph(),
            search.link_flows(),
            &report.operations,
        ));
        (self.extras)(search.protocol(), &mut report);
        outputs::write_graph(out, "graph-final.json", search.graph()).map_err(|e| {
            RuntimeFailure::error("cannot write graph-final.json", format!("{e:#}"))
        })?;
        let graph = graph::export::to_document(search.graph());
        // Written now, and again once the replays tell what became of each test.
        let suite_doc = search.suite_document();
        // No credentials in it yet: they are named once the replays are done.
        write_suite_document(out, &suite_doc, secrets, &[])?;
        outputs::print_changes(search.changes(), options.verbose);
        let checker = search.checker().clone();
        for w in checker.warnings() {
            eprintln!("warning: {}", one_line(&secrets.redact(&w)));
        }
        // Causes first: each cause's representative, defects first, before
        // any cause's second fault, so a replay time that runs out leaves
        // the least telling faults unreplayed.
        search.note_given();
        let kept: Vec<_> = search.faults().kept().collect();
        let order = crate::faults::causes::replay_order(&report.faults);
        // The order's first round: one fault per cause.
        let first = report
            .faults
            .iter()
            .map(|f| &f.cause)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let faults: Vec<_> = order
            .into_iter()
            .filter_map(|i| kept.get(i))
            .take_while(|_| super::source::replays_ahead(until))
            .map(|k| {
                let known = reproduce::candidates::Known {
                    ledger: search.ledger(),
                    echoes: search.echoes(),
                };
                reproduce::candidates::fault_script(api, &checker, known, target.as_str(), k)
            })
            .collect();
        let answers = conformance_answers(search.faults());
        let suite = Suite::Rerun(search.suite_runs());
        let ledger = search.take_ledger();
        let echoes = search.take_echoes();
        Ok(Collected {
            report,
            graph,
            replays: Replays {
                api: api.clone(),
                checker,
                ledger,
                echoes,
                faults,
                first,
                slow: slow.into_iter().map(|s| s.operation).collect(),
            },
            suite,
            suite_doc: Some(suite_doc),
            answers,
        })
    }
}

/// Per conformance fault, the answers that showed it (the last exchange of
/// its smallest and of its first witness): what the spec fixes read.
fn conformance_answers(faults: &crate::faults::Faults) -> HashMap<String, Vec<Exchange>> {
    faults
        .kept()
        .filter(|k| k.fault.class == crate::oracles::registry::Class::Conformance)
        .map(|k| {
            let mut answers: Vec<Exchange> = Vec::new();
            for e in [k.witness.last(), k.first.last()].into_iter().flatten() {
                if !answers.iter().any(|a| a.seq == e.seq) {
                    answers.push(e.clone());
                }
            }
            (k.fault.signature.clone(), answers)
        })
        .collect()
}
