//! Turning a fault's witness into something anyone can replay: a [`Script`] of
//! concrete requests whose values are carried from one response to the next,
//! confirmed and shrunk against the target, and rendered as a shell script of
//! `curl` calls or as a Hurl file.

use serde::{Deserialize, Serialize};

pub use crate::oracles::FaultCheck;

/// A replayable sequence of requests. Values that one step takes from an
/// earlier response appear as `{{var}}` in its path, headers or body, and the
/// earlier step names where it captures them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Script {
    /// Base URL of the run the script came from (the default target).
    pub target: String,
    /// The fault the script shows, when it is a reproducer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<ScriptFault>,
    /// The requests, in order.
    pub steps: Vec<Step>,
    /// Whether it creates what it uses (false: it names resources it does not
    /// create, the server's own data or what the run made earlier).
    #[serde(default = "yes")]
    pub standalone: bool,
    /// What it names without creating.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmade: Vec<Unmade>,
    /// Why it may not show its fault on a freshly started server, for
    /// people (empty when it is standalone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_standalone: Vec<String>,
    /// Operations whose requests go without following a redirect (they
    /// document one: the redirect is their answer), as the run sent them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub direct: Vec<String>,
    /// How many first steps plant what the fault needs: inputs the
    /// description forbids that the server accepted earlier in the run
    /// (with what they name), before the fault first showed: it began after
    /// them, or its witness alone no longer showed it. Shrinking keeps them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub planted: usize,
    /// What it did when run after a reset before it was written (with
    /// `--reset-command`); `None` when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fresh: Option<crate::faults::Fresh>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Script {
    /// Settles whether the script stands alone, after shrinking: it names
    /// nothing it does not make (of what is still in it), takes no value
    /// from a place in a list (which item is there depends on the server's
    /// data), and needs nothing the reasons already given say.
    pub fn settle_standalone(&mut self) {
        // What it still names, and no step of it still makes; what the run
        // made first: that is what a fresh server lacks.
        let (mut kept, rest): (Vec<Unmade>, Vec<Unmade>) = self
            .unmade
            .iter()
            .filter(|u| u.in_script(self) && !u.made_in(self))
            .cloned()
            .partition(|u| u.from_run == Some(true));
        let from_run = kept.len();
        kept.extend(rest);
        // One entry per value a step names, though several steps send it.
        let mut seen = std::collections::HashSet::new();
        let mut from_run_left = from_run;
        let mut unique = Vec::with_capacity(kept.len());
        for (i, u) in kept.into_iter().enumerate() {
            if seen.insert(u.to_string()) {
                unique.push(u);
            } else if i < from_run {
                from_run_left -= 1;
            }
        }
        let from_run = from_run_left;
        self.unmade = unique;
        let mut reasons: Vec<String> = self.not_standalone.clone();
        // Each named once, though several steps send it.
        let names = |us: &[Unmade]| {
            let mut said: Vec<String> = Vec::new();
            for u in us {
                let u = u.to_string();
                if !said.contains(&u) {
                    said.push(u);
                }
            }
            said.join(", ")
        };
        let (ran, rest) = self.unmade.split_at(from_run);
        if !ran.is_empty() {
            push_once(
                &mut reasons,
                format!(
                    "it uses {} from the run, which the script does not create: a fresh server does not have it",
                    names(ran)
                ),
            );
        }
        if rest.iter().all(|u| u.from_run == Some(false)) && !rest.is_empty() {
            push_once(
                &mut reasons,
                format!(
                    "it names data the run did not make, and does not create it: {} (the server's own, which a fresh server has only if it starts with the same data)",
                    names(rest)
                ),
            );
        } else if !rest.is_empty() {
            push_once(
                &mut reasons,
                format!(
                    "it names what it does not create (the server's own data, or what the run made earlier): {}",
                    names(rest)
                ),
            );
        }
        for (i, step) in self.steps.iter().enumerate() {
            for c in &step.captures {
                let Source::Json { pointer } = &c.from else {
                    continue;
                };
                if let Some(at) = pointer.split('/').find(|t| t.parse::<usize>().is_ok()) {
                    push_once(
                        &mut reasons,
                        format!(
                            "step {} takes `{}` from item {at} of a list ({pointer}): which item is there depends on the server's data",
                            i + 1,
                            c.var
                        ),
                    );
                }
            }
        }
        self.standalone = reasons.is_empty();
        self.not_standalone = reasons;
    }
}

impl Script {
    /// Whether the step before the last makes what the last one's 409
    /// conflict needs: the same creation (method and path), sent once
    /// before, as [`candidates`] puts it for a conflict. Shrinking keeps
    /// it and its values: without it a fresh server answers the last one
    /// 2xx, while the run's state, which already holds the name, still
    /// shows the conflict.
    pub fn makes_its_conflict(&self) -> bool {
        let n = self.steps.len();
        let conflict = self
            .fault
            .as_ref()
            .is_some_and(|f| f.signature.ends_with(":409"));
        n >= 2 && conflict && {
            let (a, b) = (&self.steps[n - 2], &self.steps[n - 1]);
            let path = |s: &Step| s.path.split('?').next().map(str::to_string);
            matches!(b.method.as_str(), "POST" | "PUT")
                && a.method == b.method
                && path(a) == path(b)
        }
    }

    /// Whether shrinking must keep step `i`, with its values: one of the
    /// `planted` first ones, or, for a conflict, the creation just before
    /// the last ([`Script::makes_its_conflict`]).
    pub fn kept_by_shrinking(&self, i: usize) -> bool {
        i < self.planted || (self.makes_its_conflict() && i + 2 == self.steps.len())
    }
}

fn push_once(reasons: &mut Vec<String>, reason: String) {
    if !reasons.contains(&reason) {
        reasons.push(reason);
    }
}

/// A value a script's step names without an earlier step making it: a
/// resource of the server's own, or one the run made earlier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unmade {
    /// The step's operation.
    pub operation: String,
    /// Where the value goes (`bookId`, `variables/id`).
    pub name: String,
    /// The value, as sent.
    pub value: String,
    /// For a path segment, the resource path it ends (`/tenants/t1`): what
    /// it names, told apart from equal values elsewhere (a collection
    /// named like a tenant).
    #[serde(skip)]
    pub at: Option<String>,
    /// Whether the run made it (`Some(true)`: a fresh server does not have
    /// it), or the server had it (`Some(false)`); `None` when not known.
    #[serde(skip)]
    pub from_run: Option<bool>,
    /// The step of the script that made it without handing it on as a
    /// capture: while that step is in the script (and still sends the
    /// value, when it chose it), the value is not missing.
    #[serde(skip)]
    pub maker: Option<Maker>,
}

/// The step that made a value a later step names literally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Maker {
    /// Its operation.
    pub operation: String,
    /// Its method.
    pub method: String,
    /// Its path, without the query.
    pub path: String,
    /// Whether it sent the value itself (a name the client chose): then
    /// it makes that value only while it still sends it (shrinking may
    /// cut the field).
    pub chose: bool,
}

impl Unmade {
    fn new(ex: &crate::execution::Exchange, name: &str, value: &str) -> Unmade {
        Unmade {
            operation: ex.request.operation.clone(),
            name: name.to_string(),
            value: value.to_string(),
            at: None,
            from_run: None,
            maker: None,
        }
    }

    /// Whether a step of `script` still names it (shrinking may drop it).
    pub fn in_script(&self, script: &Script) -> bool {
        script
            .steps
            .iter()
            .any(|s| s.operation == self.operation && sends(s, &self.value))
    }

    /// Whether `script` still holds the step that made it (see `maker`).
    fn made_in(&self, script: &Script) -> bool {
        self.maker.as_ref().is_some_and(|m| {
            script.steps.iter().any(|s| {
                s.operation == m.operation
                    && s.method == m.method
                    && s.path.split('?').next() == Some(m.path.as_str())
                    && (!m.chose || sends(s, &self.value))
            })
        })
    }
}

/// Whether `step` sends `value` (in its path, query or body).
fn sends(step: &Step, value: &str) -> bool {
    let path = percent_encoding::percent_decode_str(&step.path).decode_utf8_lossy();
    step.path.contains(value)
        || path.contains(value)
        || step.body.as_deref().is_some_and(|b| b.contains(value))
}

impl std::fmt::Display for Unmade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} = {}", self.operation, self.name, self.value)
    }
}

fn yes() -> bool {
    true
}

/// The fault a reproducer shows, and how a script without Cartograph tells
/// that it showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptFault {
    /// Oracle code.
    pub code: crate::oracles::registry::Code,
    /// Fault signature.
    pub signature: String,
    /// What the oracle said.
    pub message: String,
    /// What the last step's response must show for the fault to be there.
    pub check: FaultCheck,
}

/// One request of a script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The operation it exercises (the graph's name), for people.
    pub operation: String,
    /// HTTP method.
    pub method: String,
    /// Path and query relative to the target, with `{{var}}` where a captured
    /// value goes (already percent-encoded where it is literal).
    pub path: String,
    /// Extra headers (credentials are never recorded here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    /// The body's media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// The body, with `{{var}}` where a captured value goes. In a JSON body a
    /// captured number stands bare (`{"bookId":{{book_id}}}`) and a captured
    /// string inside quotes (`"{{token}}"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Whether it is a GraphQL query (reads, although it is a POST).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub graphql_query: bool,
    /// What it deliberately gets wrong (a negative test's request): one
    /// that drops credentials is replayed without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breach: Option<crate::execution::Breach>,
    /// The identity it goes as instead of the run's own credentials (by
    /// name, or `anonymous` for none): a reproducer reads its header from
    /// the identity's environment variable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// Values taken from this step's response for later steps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub captures: Vec<Capture>,
    /// The status the run saw, when there was a response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// A GraphQL request answered without any `errors` entry: a regression
    /// test asserts it stays so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub graphql_clean: bool,
}

/// A value taken from a response into a variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capture {
    /// Variable name: letters, digits and `_`, starting with a letter.
    pub var: String,
    /// Where in the response it is.
    pub from: Source,
}

/// Where a captured value is in a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// The last path segment of the `Location` header.
    LocationId,
    /// The value at a JSON pointer of the body (`/id`, `/0/id`).
    Json {
        /// The pointer.
        pointer: String,
    },
}

pub mod build;
pub mod candidates;
pub mod channel;
pub mod confirm;
pub mod files;
pub mod hurl;
pub mod phase;
pub mod script_run;
pub mod shell;
pub mod shrink;
pub mod suite;

/// A file of the phase (a reproducer, a suite file, `replay.ndjson`) could
/// not be written; the message names it.
#[derive(Debug, thiserror::Error)]
#[error("cannot {verb} {}: {error}", path.display())]
pub struct WriteError {
    verb: &'static str,
    path: std::path::PathBuf,
    error: std::io::Error,
}

impl WriteError {
    fn new(verb: &'static str, path: &std::path::Path, error: std::io::Error) -> WriteError {
        WriteError {
            verb,
            path: path.to_path_buf(),
            error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(path: &str, captures: Vec<Capture>) -> Step {
        Step {
            operation: "op".into(),
            method: "GET".into(),
            path: path.into(),
            headers: vec![],
            content_type: None,
            body: None,
            graphql_query: false,
            breach: None,
            identity: None,
            captures,
            status: Some(200),
            graphql_clean: false,
        }
    }

    #[test]
    fn a_value_from_a_place_in_a_list_is_not_standalone() {
        let listed = Capture {
            var: "thing_id".into(),
            from: Source::Json {
                pointer: "/3/id".into(),
            },
        };
        let mut script = Script {
            target: "http://127.0.0.1:1".into(),
            fault: None,
            steps: vec![
                step("/things", vec![listed]),
                step("/things/{{thing_id}}", vec![]),
            ],
            standalone: true,
            unmade: vec![],
            not_standalone: vec![],
            direct: Vec::new(),
            planted: 0,
            fresh: None,
        };
        script.settle_standalone();
        assert!(!script.standalone);
        assert!(
            script.not_standalone[0].contains("item 3 of a list"),
            "{:?}",
            script.not_standalone
        );
        // A value the sequence made itself, by name, stands alone.
        script.steps[0].captures[0].from = Source::Json {
            pointer: "/id".into(),
        };
        script.not_standalone.clear();
        script.settle_standalone();
        assert!(script.standalone, "{:?}", script.not_standalone);
        // What it names without making, once shrinking cut it, no longer counts.
        script.unmade.push(Unmade {
            operation: "gone".into(),
            name: "id".into(),
            value: "77".into(),
            at: None,
            from_run: None,
            maker: None,
        });
        script.settle_standalone();
        assert!(script.standalone);
        assert!(script.unmade.is_empty());
    }
}
