//! The faults of a run ([`Faults`]): what each test's answers showed,
//! deduplicated by signature, counted, with the first and the smallest
//! witness kept (completed by the [`witness::Ledger`]), and the faults
//! first seen told to whoever listens.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use indexmap::IndexMap;

use super::{Confirmation, Fault, causes, steps, witness};
use crate::execution::Exchange;
use crate::oracles::{FaultCheck, Finding};

/// A fault as kept during a run: the report's record, the script check, and
/// the exchanges of its smallest witness (with the earlier requests that
/// created the ids it uses).
#[derive(Debug, Clone)]
pub struct Kept {
    /// The report's record.
    pub fault: Fault,
    /// How a script tells that it showed.
    pub check: FaultCheck,
    /// The smallest witness: producers of the ids it uses, then the test's
    /// requests up to the one that showed the fault.
    pub witness: Vec<Exchange>,
    /// The first witness, completed the same way (replayed when the smallest
    /// does not show the fault: it may rely on less of the run's state).
    pub first: Vec<Exchange>,
    /// The plain words its cause was keyed on, while they may yet prove to
    /// be the server's words for every failure, with the cause it then has.
    pub catch_all: Option<(String, causes::Reason)>,
}

/// The faults of a run, by signature, in the order first seen.
#[derive(Default)]
pub struct Faults {
    kept: IndexMap<String, Kept>,
    /// Plain words seen on a 5xx and on an answer of another status: the
    /// server's words for every failure, which name no cause.
    catch_all: std::collections::HashSet<String>,
    /// How many kept faults have words still to be judged so.
    watching: usize,
    count: Arc<AtomicUsize>,
    news: Arc<News>,
}

/// Faults first seen since the last look, for whoever listens (`--events`).
#[derive(Default)]
pub struct News {
    listening: std::sync::atomic::AtomicBool,
    fresh: std::sync::Mutex<Vec<Fault>>,
}

impl News {
    /// The faults first seen since the last call, in the order seen.
    pub fn take(&self) -> Vec<Fault> {
        std::mem::take(&mut *self.fresh.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Faults {
    /// An empty record.
    pub fn new() -> Faults {
        Faults::default()
    }

    /// A counter of distinct faults that other threads can read (progress).
    pub fn counter(&self) -> Arc<AtomicUsize> {
        self.count.clone()
    }

    /// Faults first seen from now on, as other threads can read them; only
    /// a caller of this keeps them.
    pub fn news(&self) -> Arc<News> {
        self.news.listening.store(true, Ordering::Relaxed);
        self.news.clone()
    }

    /// How many distinct faults so far.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// When each fault after the first `known` was first seen: those
    /// recorded since [`Faults::len`] was `known`.
    pub fn first_seqs_since(&self, known: usize) -> impl Iterator<Item = u64> + '_ {
        self.kept.values().skip(known).map(|k| k.fault.first_seq)
    }

    /// Whether none was found.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// Records what a test's answers showed (`findings` from [`Checker::test`](crate::oracles::Checker::test)).
    pub fn record(
        &mut self,
        exchanges: &[Exchange],
        findings: &[Vec<Finding>],
        ledger: &witness::Ledger,
    ) {
        self.judge_words(exchanges);
        for (k, found) in findings.iter().enumerate() {
            let ex = &exchanges[k];
            for f in found {
                let signature = f.signature(ex.status);
                let shorter = |kept: &Kept| kept.fault.witness.len() > k + 1;
                match self.kept.get_mut(&signature) {
                    Some(kept) => {
                        kept.fault.count += 1;
                        if shorter(kept) {
                            if kept.first.is_empty() {
                                kept.first = std::mem::take(&mut kept.witness);
                            }
                            kept.witness = ledger.complete(&exchanges[..=k]);
                            kept.fault.witness = steps(&exchanges[..=k]);
                        }
                    }
                    None => {
                        let mut reason = causes::reason(f, ex);
                        let mut catch_all = causes::catch_all(f, ex);
                        if let Some((words, fallback)) = &catch_all
                            && self.catch_all.contains(words)
                        {
                            reason = fallback.clone();
                            catch_all = None;
                        }
                        self.watching += usize::from(catch_all.is_some());
                        let fault = Fault {
                            code: f.code,
                            class: f.code.oracle().class,
                            severity: f.code.oracle().severity,
                            cause: causes::id(&reason.key),
                            cause_title: reason.title,
                            place: reason.place,
                            operation: f.found.operation.clone(),
                            status: ex.status,
                            signature: signature.clone(),
                            message: f.found.message.clone(),
                            count: 1,
                            first_seq: ex.seq,
                            witness: steps(&exchanges[..=k]),
                            confirmation: Confirmation::NotReplayed,
                            reproducer: None,
                        };
                        if self.news.listening.load(Ordering::Relaxed) {
                            self.news
                                .fresh
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push(fault.clone());
                        }
                        self.kept.insert(
                            signature.clone(),
                            Kept {
                                fault,
                                check: f.script_check(ex.status),
                                witness: ledger.complete(&exchanges[..=k]),
                                first: Vec::new(),
                                catch_all,
                            },
                        );
                        self.count.store(self.kept.len(), Ordering::Relaxed);
                    }
                }
            }
        }
    }

    /// Gives the faults whose cause was keyed on words that `exchanges` show
    /// on an answer of another status (the server's words for every
    /// failure, `{"message": "Request failed"}` on a 404 and a 500 alike)
    /// the cause of what triggered them instead.
    fn judge_words(&mut self, exchanges: &[Exchange]) {
        if self.watching == 0 {
            return;
        }
        for ex in exchanges {
            // A client error in the words of a crash: they are what the
            // server says to every failure.
            let Some(status) = ex.status.filter(|s| (400..500).contains(s)) else {
                continue;
            };
            for kept in self.kept.values_mut() {
                let Some((words, _)) = &kept.catch_all else {
                    continue;
                };
                if kept.fault.status == Some(status) || !ex.body.contains(words.as_str()) {
                    continue;
                }
                if let Some((words, fallback)) = kept.catch_all.take() {
                    kept.fault.cause = causes::id(&fallback.key);
                    kept.fault.cause_title = fallback.title;
                    kept.fault.place = fallback.place;
                    self.catch_all.insert(words);
                    self.watching -= 1;
                }
            }
        }
    }

    /// The faults as kept.
    pub fn kept(&self) -> impl Iterator<Item = &Kept> {
        self.kept.values()
    }

    /// The faults, in the order first seen.
    pub fn faults(&self) -> Vec<Fault> {
        self.kept.values().map(|k| k.fault.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::RequestSpec;
    use crate::oracles::Checker;
    use crate::oracles::registry::Code;

    fn answer(seq: u64, query: &str, body: serde_json::Value) -> Exchange {
        Exchange {
            seq,
            request: RequestSpec {
                operation: "Query.book".into(),
                method: "POST".into(),
                path: String::new(),
                headers: Vec::new(),
                body: Some(serde_json::json!({ "query": query }).to_string()),
                content_type: Some("application/json".into()),
                graphql_query: true,
                breach: None,
                identity: None,
            },
            status: Some(200),
            body: body.to_string(),
            ..Default::default()
        }
    }

    #[test]
    fn the_words_a_server_gives_every_failure_name_no_cause() {
        let words = r#"{"message":"Request could not be completed by the pipeline"}"#;
        let answer = |seq: u64, op: &str, status: u16, input: &str| Exchange {
            seq,
            request: RequestSpec {
                operation: op.into(),
                method: "GET".into(),
                path: format!("/{op}"),
                breach: Some(crate::execution::Breach {
                    input: input.into(),
                    kind: crate::execution::BreachKind::Unusual,
                    // Not an integer past 64 bits: that is one cause
                    // whichever input it went in.
                    class: Some(crate::execution::EdgeClass::Long),
                }),
                ..Default::default()
            },
            status: Some(status),
            body: words.into(),
            ..Default::default()
        };
        let crash = |op: &str| {
            Finding::new(
                Code::ServerError,
                op,
                "the server answered 500".into(),
                String::new(),
            )
        };
        let mut faults = Faults::new();
        let ledger = witness::Ledger::new();
        let record = |faults: &mut Faults, ex: Exchange, found: Vec<Finding>| {
            faults.record(std::slice::from_ref(&ex), &[found], &ledger);
        };
        record(
            &mut faults,
            answer(0, "listA", 500, "query limit"),
            vec![crash("listA")],
        );
        record(
            &mut faults,
            answer(1, "listB", 500, "query offset"),
            vec![crash("listB")],
        );
        // Specific words, so far: one cause.
        let causes = |f: &Faults| {
            let mut c: Vec<String> = f.faults().into_iter().map(|f| f.cause).collect();
            c.dedup();
            c.len()
        };
        assert_eq!(causes(&faults), 1);
        // The same words on a 404: the server's for every failure. Each
        // crash is its trigger's cause; a crash seen later too.
        record(&mut faults, answer(2, "getA", 404, "path id"), Vec::new());
        assert_eq!(causes(&faults), 2);
        record(
            &mut faults,
            answer(3, "listC", 500, "query limit"),
            vec![crash("listC")],
        );
        let all = faults.faults();
        assert_eq!(all[0].cause, all[2].cause);
        assert_ne!(all[0].cause, all[1].cause);
        assert!(
            all[2].cause_title.ends_with("after query limit (long)"),
            "{}",
            all[2].cause_title
        );
    }

    #[test]
    fn one_broken_field_is_one_fault_whatever_path_reaches_it() {
        let api = crate::load::load_text(
            crate::demo::GRAPHQL_SDL,
            std::path::Path::new("schema.graphql"),
        )
        .unwrap()
        .api;
        let checker = Checker::new(&api, Vec::new(), None);
        let mut faults = Faults::new();
        let ledger = witness::Ledger::new();
        let answers = [
            answer(
                0,
                "{ book(id: \"4\") { author { name } } }",
                serde_json::json!({"data": {"book": {"author": null}}}),
            ),
            answer(
                1,
                "{ order(id: \"2\") { book { author { name } } } }",
                serde_json::json!({"data": {"order": {"book": {"author": null}}}}),
            ),
            answer(
                2,
                "{ authors { books { author { name } } } }",
                serde_json::json!({"data": {"authors": [{"books": [{"author": null}, {"author": null}]}]}}),
            ),
        ];
        for ex in &answers {
            let findings = checker.test(&api, std::slice::from_ref(ex));
            faults.record(std::slice::from_ref(ex), &findings, &ledger);
        }
        let all = faults.faults();
        assert_eq!(all.len(), 1, "{all:#?}");
        assert_eq!(all[0].code.as_str(), "graphql_null_violation");
        assert_eq!(all[0].count, 3);
        assert!(
            all[0].signature.contains("Book.author"),
            "{}",
            all[0].signature
        );
    }
}
