//! Causes: the faults one oracle reports for one reason. A fault is one
//! signature (an oracle on one operation and status); a cause is what a
//! person fixes: one optional header the server rejects everywhere is one
//! cause however many operations answered it. How an oracle's faults
//! group is its registry row's [`Group`]; the reason is worked out here
//! from the finding and the exchange that showed it, with every value
//! hidden ([`crate::oracles::mask`]).

use serde::Serialize;

use super::{Confirmation, Fault};
use crate::execution::{BreachKind, Exchange};
use crate::oracles::Finding;
use crate::oracles::mask::{mask, sent_values};
use crate::oracles::registry::{self, Class, Code, Group, Severity};

/// Why a fault fired, as its cause: what groups it with others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    /// What faults of one cause share (code and reason, values hidden).
    pub key: String,
    /// For people, values hidden.
    pub title: String,
    /// Where the fault shows it, when its cause spans places (a schema
    /// location, an operation's input).
    pub place: Option<String>,
}

impl Reason {
    fn new(key: String, title: String) -> Reason {
        Reason {
            key,
            title,
            place: None,
        }
    }
}

/// One cause: its faults, where they were seen, and the fault that stands
/// for it.
#[derive(Debug, Clone, Serialize)]
pub struct Cause {
    /// A stable id (a hash of the reason): the same cause keeps it across runs.
    pub id: String,
    /// The oracle's code.
    pub code: Code,
    /// The oracle's class.
    pub class: Class,
    /// The oracle's severity.
    pub severity: Severity,
    /// What it is, with values hidden.
    pub title: String,
    /// Every operation it was seen on.
    pub operations: Vec<String>,
    /// Every place it was seen at, when it spans places (the schema
    /// locations of one drift through the description, the inputs of the
    /// operations that let a body field through).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub places: Vec<String>,
    /// The signatures of its faults.
    pub faults: Vec<String>,
    /// The signature of the fault whose reproducer stands for it.
    pub representative: String,
    /// Occurrences over all its faults.
    pub count: u64,
    /// What replaying its representative showed.
    pub confirmation: Confirmation,
    /// The Web Fuzzing Commons fault code of its check, where the catalogue
    /// has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wfc: Option<u16>,
}

/// The reason a finding fired, by its oracle's group.
///
/// A specific message (an exception text) is one cause wherever it was
/// seen. A generic one (a bare status phrase) says nothing of where the
/// server failed: its faults split by what triggered them (the input and
/// the class of value a negative test sent), and one trigger on several
/// operations is one cause. A body the server could not parse is one cause
/// whatever its parser says.
pub fn reason(finding: &Finding, ex: &Exchange) -> Reason {
    let (code, f) = (finding.code, &finding.found);
    let oracle = code.oracle();
    let title = oracle.title;
    let status = ex.status.map_or("-".to_string(), |s| s.to_string());
    let sent = sent_values(&ex.request);
    let sent: Vec<&str> = sent.iter().map(String::as_str).collect();
    let per_operation = || {
        Reason::new(
            format!("{code}:{}:{status}", f.operation),
            format!("{title}: {} ({status})", f.operation),
        )
    };
    let by_trigger = || by_trigger(finding, ex, title);
    let telling = matches!(oracle.group, Group::CodePath | Group::AnswerShape);
    if telling && unparsable(ex) {
        return Reason::new(
            format!("{code}:{status}:unparsable body"),
            format!("{title} ({status}): a request body it could not parse"),
        );
    }
    match oracle.group {
        // An identity check's detail names who did it to whose resource.
        Group::Operation
            if oracle.concern == registry::Concern::Security && !f.detail.is_empty() =>
        {
            Reason::new(
                format!("{code}:{}:{}", f.operation, f.detail),
                format!("{title}: {} ({})", f.operation, f.detail),
            )
        }
        Group::Operation => Reason::new(
            format!("{code}:{}", f.operation),
            format!("{title}: {}", f.operation),
        ),
        Group::CodePath => match code_path(&ex.body, &sent) {
            Some(path) => Reason::new(
                format!("{code}:{status}:{path}"),
                format!("{title} ({status}): {path}"),
            ),
            None => by_trigger(),
        },
        Group::Detail if f.drift.is_some() => {
            let drift = f.drift.unwrap_or_default();
            Reason {
                place: f.place.clone(),
                ..Reason::new(format!("{code}:drift:{drift}"), format!("{title}: {drift}"))
            }
        }
        Group::Detail if f.place.is_some() => {
            let place = f.place.clone().unwrap_or_default();
            Reason {
                key: format!("{code}:{place}"),
                title: format!("{title}: {place}"),
                place: Some(place),
            }
        }
        Group::Detail => {
            // A GraphQL error's detail starts with its root field: the same
            // leak under two root fields is one cause. Leak markers are
            // quoted literals, not values.
            let detail = f
                .detail
                .strip_prefix(&format!("{} ", f.operation))
                .unwrap_or(&f.detail);
            let detail = detail.trim_matches('"');
            let detail = if code.is_leak() {
                detail.to_string()
            } else {
                mask(detail, &sent, 120)
            };
            Reason::new(format!("{code}:{detail}"), format!("{title}: {detail}"))
        }
        Group::AnswerShape => {
            let shape = shape(ex, &sent);
            Reason::new(
                format!("{code}:{status}:{shape}"),
                format!("{title}: {status} {shape}"),
            )
        }
        Group::Input => match &ex.request.breach {
            // A server that checks no body lets every field through: one
            // cause, whichever fields and values showed it.
            Some(b) if code == Code::InvalidInputAccepted && b.input.starts_with("body /") => {
                Reason {
                    place: Some(format!("{}: {b}", f.operation)),
                    ..Reason::new(
                        format!("{code}:body fields"),
                        format!("{title}: fields of request bodies"),
                    )
                }
            }
            Some(b) => Reason {
                place: Some(format!("{}: {b}", f.operation)),
                ..Reason::new(
                    format!("{code}:{}:{}", b.input, b.kind.as_str()),
                    format!(
                        "{title}: {} ({})",
                        b.input,
                        b.kind.as_str().replace('_', " ")
                    ),
                )
            },
            None => per_operation(),
        },
        Group::Message => {
            // `errors[3] reports an internal failure: …` names the entry
            // and repeats the oracle's title: the reason is the excerpt.
            let message = f
                .message
                .split_once("] ")
                .filter(|(head, _)| head.starts_with("errors["))
                .map_or(f.message.as_str(), |(_, rest)| {
                    rest.split_once(": ").map_or(rest, |(_, excerpt)| excerpt)
                });
            let message = mask(message, &sent, 80);
            if specific(&message) {
                Reason::new(format!("{code}:{message}"), format!("{title}: {message}"))
            } else {
                by_trigger()
            }
        }
    }
}

/// A message that says nothing of where the server failed never merges on
/// its own: the trigger does (one trigger on several operations is one
/// cause), else the operation and status.
fn by_trigger(f: &Finding, ex: &Exchange, title: &str) -> Reason {
    let code = f.code;
    let status = ex.status.map_or("-".to_string(), |s| s.to_string());
    match trigger(&ex.request) {
        Some((key, said)) => Reason::new(
            format!("{code}:{status}:trigger {key}"),
            format!("{title} ({status}): after {said}"),
        ),
        None => Reason::new(
            format!("{code}:{}:{status}", f.found.operation),
            format!("{title}: {} ({status})", f.found.operation),
        ),
    }
}

/// The words a 5xx fault's cause was keyed on, when they are a plain
/// message (no stack trace), with the reason the fault has if those words
/// turn out to be the server's for every failure: seen on an answer of
/// another status too, they say nothing of where it failed.
pub fn catch_all(f: &Finding, ex: &Exchange) -> Option<(String, Reason)> {
    let oracle = f.code.oracle();
    if oracle.group != Group::CodePath || unparsable(ex) {
        return None;
    }
    let sent = sent_values(&ex.request);
    let sent: Vec<&str> = sent.iter().map(String::as_str).collect();
    if trace_frame(&unescaped(&ex.body), &sent).is_some() {
        return None;
    }
    let words = said(&ex.body)?;
    let words = words.trim();
    (specific(&mask(words, &sent, 100)) && words.len() >= 8)
        .then(|| (words.to_string(), by_trigger(f, ex, oracle.title)))
}

/// A body with the `\n` and `\"` of a JSON string read as what they stand
/// for, so that a trace inside a JSON message reads line by line.
fn unescaped(body: &str) -> String {
    if body.contains("\\n") {
        body.replace("\\n", "\n").replace("\\\"", "\"")
    } else {
        body.to_string()
    }
}

/// What triggered a failure, when a negative test's request did: its wrong
/// input and the class of value sent there (`query limit (huge)`), or what
/// was done to it.
fn trigger(request: &crate::execution::RequestSpec) -> Option<(String, String)> {
    let b = request.breach.as_ref()?;
    // An integer past 64 bits fails where it is converted to a machine or
    // database integer, one layer under every input (the driver's
    // OverflowError behind 17 inputs' causes on one service and 7 on
    // another): the input it went in does not part causes.
    if b.class == Some(crate::execution::EdgeClass::Huge) {
        return Some((
            "an integer past 64 bits".to_string(),
            format!("an integer past 64 bits (as in {})", b.input),
        ));
    }
    let class = match b.class {
        Some(c) => c.as_str(),
        None => b.kind.as_str(),
    };
    let t = format!("{} ({})", b.input, class.replace('_', " "));
    Some((t.clone(), t))
}

/// Words of messages a parser gives for a body it could not read,
/// whichever parser: Python's `json`, Express, Jackson, Go, serde,
/// pydantic.
const PARSE_WORDS: &[&str] = &[
    "parse",
    "decode",
    "deserializ",
    "syntax",
    "unexpected token",
    "unexpected end",
    "unexpected character",
    "invalid character",
    "unterminated",
    "malformed",
];

/// Words that say the same on their own.
const PARSER_SAYS: &[&str] = &[
    "expecting value",
    "expecting property name",
    "looking for beginning of value",
    "while parsing a",
    "json_invalid",
];

/// Whether the answer is to a body the server could not parse: the request
/// sent one that is not JSON, or the answer says a parser failed.
fn unparsable(ex: &Exchange) -> bool {
    if ex
        .request
        .breach
        .as_ref()
        .is_some_and(|b| b.kind == BreachKind::MalformedBody)
    {
        return true;
    }
    if ex.request.body.is_none() {
        return false;
    }
    let said = said(&ex.body).unwrap_or_default().to_lowercase();
    PARSER_SAYS.iter().any(|w| said.contains(w))
        || ((said.contains("json") || said.contains("body"))
            && PARSE_WORDS.iter().any(|w| said.contains(w)))
}

/// What a body says: the message a JSON error body carries, else its first
/// line that is not markup.
fn said(body: &str) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .as_ref()
        .and_then(message_of)
        .or_else(|| {
            let first = body.lines().find(|l| !l.trim().is_empty())?;
            (!first.trim_start().starts_with('<')).then(|| first.to_string())
        })
}

/// Whether a masked message says where the server failed: at least two of
/// its words are not words every failure may say.
fn specific(masked: &str) -> bool {
    masked
        .split(|c: char| !c.is_alphanumeric() && c != '#' && c != '…')
        .filter(|w| !w.is_empty())
        .filter(|w| !GENERIC.contains(&w.to_lowercase().as_str()))
        .count()
        >= 2
}

/// An answer's shape, values hidden: its media type and, for JSON, its
/// top-level keys and the message it carries (`application/json {error}:
/// "bad API version"`); for text, its first line.
fn shape(ex: &Exchange, sent: &[&str]) -> String {
    let media = ex
        .header("content-type")
        .map(crate::oracles::conformance::essence)
        .unwrap_or_else(|| "no content type".into());
    if ex.body.trim().is_empty() {
        return format!("{media}, empty");
    }
    match ex.json() {
        Some(serde_json::Value::Object(map)) => {
            let mut keys: Vec<&str> = map.keys().map(String::as_str).collect();
            keys.sort_unstable();
            let keys = keys.join(",");
            match message_of(&serde_json::Value::Object(map.clone())) {
                Some(m) => format!("{media} {{{keys}}}: {:?}", mask(&m, sent, 60)),
                None => format!("{media} {{{keys}}}"),
            }
        }
        Some(serde_json::Value::Array(_)) => format!("{media} [array]"),
        Some(other) => format!("{media} {}", crate::oracles::json_type(other)),
        None => {
            let first = ex.body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            format!("{media} {:?}", mask(first, sent, 60))
        }
    }
}

/// The human message an error body carries: `message`, `error`, `detail`,
/// `title`, `msg` or `error_description`, a level down too
/// (`{"error": {"message": …}}`), or the first of a list of them.
fn message_of(v: &serde_json::Value) -> Option<String> {
    const KEYS: [&str; 6] = [
        "message",
        "error",
        "detail",
        "title",
        "msg",
        "error_description",
    ];
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Object(map) => {
            KEYS.iter()
                .filter_map(|k| map.get(*k))
                .find_map(|x| match x {
                    serde_json::Value::String(s) => Some(s.clone()),
                    other => message_of(other),
                })
        }
        serde_json::Value::Array(items) => items.first().and_then(message_of),
        _ => None,
    }
}

/// Words of messages that say nothing about where a failure happened.
const GENERIC: &[&str] = &[
    "internal",
    "server",
    "error",
    "errors",
    "unexpected",
    "an",
    "a",
    "has",
    "have",
    "occurred",
    "something",
    "went",
    "wrong",
    "please",
    "try",
    "again",
    "later",
    "exception",
    "failed",
    "failure",
    "the",
    "request",
    "could",
    "not",
    "be",
    "processed",
    "unknown",
    "oops",
    "sorry",
    "status",
    "code",
    "service",
    "unavailable",
    "bad",
    "gateway",
    "timeout",
    "#",
    "…",
    "contact",
    "administrator",
    "support",
    "we",
    "are",
    "working",
    "on",
    "it",
    "unhandled",
    "while",
    "processing",
    "your",
];

/// The code path a server's answer names, when it names one: the exception
/// text of a Python, Java, .NET or Node.js trace when it says more than its
/// type (`KeyError: 'owner'`: one text on several operations is one
/// cause), else the exception type with the innermost stack frame (Go and
/// Rust panics too), or else a specific message (one that is not only
/// generic words), values hidden.
pub fn code_path(body: &str, sent: &[&str]) -> Option<String> {
    if let Some(p) = trace_frame(&unescaped(body), sent) {
        return Some(p);
    }
    let masked = mask(&said(body)?, sent, 100);
    specific(&masked).then_some(masked)
}

/// An exception's line (`TypeError: Cannot read properties of undefined
/// (reading 'owner')`), values hidden, when its text says more than its
/// type: some of its words are not generic.
fn exception_text(line: &str, sent: &[&str]) -> Option<String> {
    let masked = mask(line.trim(), sent, 100);
    let (_, message) = masked.split_once(": ")?;
    let telling = message
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.chars().any(char::is_alphabetic))
        .any(|w| !GENERIC.contains(&w.to_lowercase().as_str()));
    telling.then_some(masked)
}

/// What a stack trace in `text` names: the exception's text when it is
/// telling, else its type and innermost frame.
fn trace_frame(text: &str, sent: &[&str]) -> Option<String> {
    // Python: the last `File "…", line N, in f` and the closing line.
    if text.contains("Traceback (most recent call last)") {
        let frame = text.lines().rev().find_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("File \"")?;
            let (file, rest) = rest.split_once('"')?;
            let func = rest.rsplit_once(" in ").map(|(_, f)| f.trim())?;
            Some(format!(
                "{}:{func}",
                file.rsplit('/').next().unwrap_or(file)
            ))
        });
        let line = text.lines().rev().map(str::trim).find(|l| {
            l.split_once(':').is_some_and(|(t, _)| {
                !t.is_empty()
                    && t.chars()
                        .all(|c| c.is_alphanumeric() || c == '.' || c == '_')
            })
        });
        if let Some(said) = line.and_then(|l| exception_text(l, sent)) {
            return Some(said);
        }
        let exception = line.and_then(|l| l.split(':').next()).map(str::to_string);
        return match (exception, frame) {
            (Some(e), Some(f)) => Some(format!("{e} at {f}")),
            (e, f) => e.or(f),
        };
    }
    // Java, .NET, Node.js: the first `at …` frame, with the exception type
    // of the line before the frames when there is one.
    let frame = text.lines().map(str::trim).find_map(|l| {
        let rest = l.strip_prefix("at ")?;
        let frame = rest.split(['(', ' ']).next()?.trim();
        (!frame.is_empty()).then(|| frame.to_string())
    });
    if let Some(frame) = frame {
        // The line naming the exception, from its type on: `TypeError:
        // Cannot read…`, `java.lang.IllegalStateException: no owner`.
        let line = text.lines().find_map(|l| {
            let at = l.find(|c: char| c.is_alphanumeric())?;
            let l = &l[at..];
            let (head, _) = l.split_once(": ")?;
            let ty = head.rsplit([' ', '"', '\'']).next().unwrap_or(head);
            ((ty.ends_with("Exception") || ty.ends_with("Error")) && ty.len() > 5)
                .then(|| &l[l.find(ty).unwrap_or(0)..])
        });
        if let Some(said) = line.and_then(|l| exception_text(l, sent)) {
            return Some(said);
        }
        let exception = text
            .split(|c: char| c.is_whitespace() || c == ':' || c == '"')
            .find(|w| (w.ends_with("Exception") || w.ends_with("Error")) && w.len() > 5)
            .map(str::to_string);
        return Some(match exception {
            Some(e) => format!("{e} at {frame}"),
            None => frame,
        });
    }
    // Rust: `panicked at src/x.rs:12:5`.
    if let Some(at) = text.find("panicked at ") {
        let place: String = text[at + 12..]
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != ',')
            .collect();
        let place = place.trim_end_matches(':').to_string();
        if !place.is_empty() {
            return Some(format!("panic at {place}"));
        }
    }
    // Go: `panic: …` and the first `file.go:N` line.
    if text.contains("goroutine ") {
        let frame = text.lines().map(str::trim).find(|l| l.contains(".go:"))?;
        return Some(frame.split(' ').next().unwrap_or(frame).to_string());
    }
    None
}

/// A cause's stable id: `C` and eight hex digits of the FNV-1a hash of its key.
pub fn id(key: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("C{:08x}", h >> 32)
}

/// The faults grouped into causes (by the cause each fault names), most
/// important first: defects before conformance, then by severity, then by
/// how many operations and occurrences they span.
pub fn group(faults: &[Fault]) -> Vec<Cause> {
    let mut causes: indexmap::IndexMap<&str, Cause> = indexmap::IndexMap::new();
    for f in faults {
        let cause = causes.entry(f.cause.as_str()).or_insert_with(|| Cause {
            id: f.cause.clone(),
            code: f.code,
            class: f.class,
            severity: f.severity,
            title: f.cause_title.clone(),
            operations: Vec::new(),
            places: Vec::new(),
            faults: Vec::new(),
            representative: f.signature.clone(),
            count: 0,
            confirmation: f.confirmation,
            wfc: f.code.oracle().wfc,
        });
        if !cause.operations.contains(&f.operation) {
            cause.operations.push(f.operation.clone());
        }
        if let Some(place) = &f.place
            && !cause.places.contains(place)
        {
            cause.places.push(place.clone());
        }
        cause.faults.push(f.signature.clone());
        cause.count += f.count;
    }
    let mut causes: Vec<Cause> = causes.into_values().collect();
    for c in &mut causes {
        let members: Vec<&Fault> = faults
            .iter()
            .filter(|f| c.faults.contains(&f.signature))
            .collect();
        if let Some(best) = members.iter().min_by_key(|f| standing(f)) {
            c.representative = best.signature.clone();
            c.confirmation = best.confirmation;
        }
    }
    causes.sort_by_key(|c| {
        let (class, severity, at) = registry::rank(c.code);
        (
            class,
            severity,
            std::cmp::Reverse(c.operations.len()),
            std::cmp::Reverse(c.count),
            at,
        )
    });
    causes
}

/// The order to replay faults in (indexes into `faults`): each cause's
/// representative, causes by rank, before any cause's second fault, then
/// the second faults, and so on; so when the replay time ends, what is left
/// is the least telling.
pub fn replay_order(faults: &[Fault]) -> Vec<usize> {
    let causes = group(faults);
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    for c in &causes {
        let mut members: Vec<usize> = (0..faults.len())
            .filter(|&i| faults[i].cause == c.id)
            .collect();
        members.sort_by_key(|&i| {
            (
                faults[i].signature != c.representative,
                standing(&faults[i]),
            )
        });
        for (round, i) in members.into_iter().enumerate() {
            if rounds.len() <= round {
                rounds.push(Vec::new());
            }
            rounds[round].push(i);
        }
    }
    rounds.concat()
}

/// How well a fault stands for its cause, best first: a confirmed fault
/// with a reproducer that runs alone, then any confirmed one, then the one
/// with the shortest witness.
fn standing(f: &Fault) -> (u8, usize) {
    let rank = match (&f.reproducer, f.confirmation) {
        (Some(r), Confirmation::Confirmed) if r.standalone => 0,
        (_, Confirmation::Confirmed) => 1,
        (_, Confirmation::NotReplayed) => 2,
        _ => 3,
    };
    (rank, f.witness.len())
}

/// The summary of causes for a run's last line: `N causes (D defects, C
/// conformance) from F faults`.
pub fn summary(causes: &[Cause], faults: usize) -> String {
    let defects = causes.iter().filter(|c| c.class == Class::Defect).count();
    format!(
        "{} cause(s) ({defects} defect(s), {} conformance) from {faults} fault(s)",
        causes.len(),
        causes.len() - defects
    )
}

/// One line for a terminal: class and severity, the title, and where it
/// was seen (`defect/high  The server answered 500-599 (500): … — 3
/// fault(s) on listBooks, listAuthors, getList`).
pub fn line(c: &Cause) -> String {
    let mut ops = c
        .operations
        .iter()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if c.operations.len() > 3 {
        ops.push_str(&format!(" and {} more", c.operations.len() - 3));
    }
    // A cause through the whole description says how far it runs.
    let places = if c.places.len() > 1 {
        format!(" at {} places", c.places.len())
    } else {
        String::new()
    };
    format!(
        "{}/{:<6} {} — {} fault(s){places} on {ops}",
        c.class.as_str(),
        c.severity.as_str(),
        c.title,
        c.faults.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::EdgeClass;
    use crate::execution::{Breach, RequestSpec};

    fn ex(op: &str, path: &str, status: u16, ct: &str, body: &str) -> Exchange {
        Exchange {
            request: RequestSpec {
                operation: op.into(),
                method: "GET".into(),
                path: path.into(),
                ..Default::default()
            },
            status: Some(status),
            headers: vec![("content-type".into(), ct.into())],
            body: body.into(),
            ..Default::default()
        }
    }

    fn finding(code: &'static str, op: &str, detail: &str) -> Finding {
        let code = Code::from_name(code).unwrap();
        Finding::new(code, op, format!("{code} on {op}"), detail.into())
    }

    #[test]
    fn an_identity_cause_names_who_and_whose_resource_and_its_wfc_code() {
        let del = ex("deleteDraft", "/drafts/7", 204, "application/json", "");
        let r = reason(
            &finding(
                "other_identity_write",
                "deleteDraft",
                "bob on main's createDraft",
            ),
            &del,
        );
        assert!(
            r.title.contains("deleteDraft (bob on main's createDraft)"),
            "{}",
            r.title
        );
        let mut faults = crate::faults::Faults::new();
        let f = finding(
            "other_identity_write",
            "deleteDraft",
            "bob on main's createDraft",
        );
        faults.record(
            std::slice::from_ref(&del),
            &[vec![f]],
            &crate::faults::witness::Ledger::new(),
        );
        let causes = group(&faults.faults());
        assert_eq!(causes[0].wfc, Some(306));
        let json = serde_json::to_value(&causes[0]).unwrap();
        assert_eq!(json["wfc"], 306);
        let plain = finding("non_idempotent", "deleteDraft", "");
        let mut faults = crate::faults::Faults::new();
        faults.record(
            std::slice::from_ref(&del),
            &[vec![plain]],
            &crate::faults::witness::Ledger::new(),
        );
        let json = serde_json::to_value(&group(&faults.faults())[0]).unwrap();
        assert!(json.get("wfc").is_none());
    }

    #[test]
    fn one_rejected_header_on_many_operations_is_one_cause() {
        // The header the server names is one the request sent.
        let sent = |mut e: Exchange, version: &str| {
            e.request.headers = vec![("X-Api-Version".into(), version.into())];
            e
        };
        let a = ex(
            "listA",
            "/a",
            400,
            "application/json",
            r#"{"error":"bad API version 'x1'"}"#,
        );
        let a = sent(a, "x1");
        let b = ex(
            "listB",
            "/b",
            400,
            "application/json",
            r#"{"error":"bad API version 'zz9'"}"#,
        );
        let b = sent(b, "zz9");
        let ra = reason(&finding("undocumented_status", "listA", ""), &a);
        let rb = reason(&finding("undocumented_status", "listB", ""), &b);
        assert_eq!(ra.key, rb.key);
        let c = ex("listB", "/b", 400, "text/plain", "Bad Request");
        assert_ne!(
            ra.key,
            reason(&finding("undocumented_status", "listB", ""), &c).key
        );
        let d = ex(
            "listB",
            "/b",
            401,
            "application/json",
            r#"{"error":"bad API version 'x'"}"#,
        );
        let d = sent(d, "x");
        assert_ne!(
            ra.key,
            reason(&finding("undocumented_status", "listB", ""), &d).key
        );
    }

    #[test]
    fn server_errors_group_by_code_path_only() {
        let generic = |op: &str| {
            ex(
                op,
                "/x",
                500,
                "application/json",
                r#"{"detail":"Internal Server Error"}"#,
            )
        };
        let r1 = reason(&finding("server_error", "opA", ""), &generic("opA"));
        let r2 = reason(&finding("server_error", "opB", ""), &generic("opB"));
        assert_ne!(
            r1.key, r2.key,
            "a generic 500 is its own cause per operation"
        );
        let overflow = |op: &str, n: &str| {
            ex(
                op,
                &format!("/x?n={n}"),
                500,
                "application/json",
                &format!(
                    r#"{{"detail":"Python int too large to convert to SQLite INTEGER: {n}"}}"#
                ),
            )
        };
        let r3 = reason(
            &finding("server_error", "opA", ""),
            &overflow("opA", "123456789012345678901"),
        );
        let r4 = reason(
            &finding("server_error", "opB", ""),
            &overflow("opB", "99999999999999999999"),
        );
        assert_eq!(r3.key, r4.key);
        let trace = |op: &str| {
            ex(
                op,
                "/x",
                500,
                "text/plain",
                "Traceback (most recent call last):\n  File \"/app/db.py\", line 12, in insert\n    x()\nsqlite3.IntegrityError: UNIQUE constraint failed: t.name\n",
            )
        };
        let r5 = reason(&finding("server_error", "opA", ""), &trace("opA"));
        assert_eq!(
            r5.title,
            "The server answered 500-599 (500): sqlite#.IntegrityError: UNIQUE constraint failed: t.name"
        );
        assert_eq!(
            r5.key,
            reason(&finding("server_error", "opB", ""), &trace("opB")).key
        );
    }

    fn breach(input: &str, kind: BreachKind, class: Option<EdgeClass>) -> Option<Breach> {
        Some(Breach {
            input: input.into(),
            kind,
            class,
        })
    }

    fn key(code: &'static str, ex: &Exchange) -> String {
        reason(&finding(code, &ex.request.operation, ""), ex).key
    }

    #[test]
    fn one_exception_text_on_several_operations_is_one_cause() {
        // Node.js: the same failure raised in each route's own handler.
        let node = |op: &str, prop: &str| {
            let body = serde_json::json!({
                "error": format!("TypeError: Cannot read properties of undefined (reading '{prop}')\n    at {op}Handler (/app/routes/{op}.js:41:17)\n    at Layer.handle (/app/node_modules/express/lib/router/layer.js:95:5)"),
            });
            ex(
                op,
                &format!("/{op}"),
                500,
                "application/json",
                &body.to_string(),
            )
        };
        let owner = key("server_error", &node("listPets", "owner"));
        assert_eq!(owner, key("server_error", &node("getPet", "owner")));
        assert_eq!(owner, key("server_error", &node("listOrders", "owner")));
        // Which property was read tells two failures apart.
        assert_ne!(owner, key("server_error", &node("listPets", "tags")));
        assert_eq!(
            reason(
                &finding("server_error", "getPet", ""),
                &node("getPet", "owner")
            )
            .title,
            "The server answered 500-599 (500): TypeError: Cannot read properties of undefined (reading 'owner')"
        );
        // Python: the same KeyError from two functions.
        let python = |op: &str, func: &str, k: &str| {
            ex(
                op,
                "/x",
                500,
                "text/plain",
                &format!(
                    "Traceback (most recent call last):\n  File \"/app/main.py\", line 88, in {func}\n    return row['{k}']\nKeyError: '{k}'\n"
                ),
            )
        };
        let a = key("server_error", &python("getUser", "get_user", "email"));
        assert_eq!(
            a,
            key("server_error", &python("listUsers", "list_users", "email"))
        );
        assert_ne!(
            a,
            key("server_error", &python("getUser", "get_user", "phone"))
        );
        // Java: the exception's message, not the innermost frame.
        let java = |op: &str, frame: &str| {
            ex(
                op,
                "/x",
                500,
                "text/plain",
                &format!(
                    "java.lang.IllegalStateException: Inventory not initialised for warehouse\n\tat com.shop.{frame}(Stock.java:52)\n\tat com.shop.Api.handle(Api.java:10)"
                ),
            )
        };
        assert_eq!(
            key("server_error", &java("getStock", "Stock.get")),
            key("server_error", &java("listStock", "Stock.list"))
        );
        // A bare exception type says only where it was raised.
        let npe = |frame: &str| {
            ex(
                "getStock",
                "/x",
                500,
                "text/plain",
                &format!("java.lang.NullPointerException\n\tat com.shop.{frame}(Stock.java:52)"),
            )
        };
        assert_ne!(
            key("server_error", &npe("Stock.get")),
            key("server_error", &npe("Stock.list"))
        );
    }

    #[test]
    fn a_generic_message_splits_by_trigger_and_one_trigger_is_one_cause() {
        let generic = |op: &str, body: &str, b: Option<Breach>| {
            let mut e = ex(
                op,
                &format!("/{op}?limit=18446744073709551616"),
                500,
                "application/json",
                body,
            );
            e.request.breach = b;
            e
        };
        let huge = || breach("query limit", BreachKind::Unusual, Some(EdgeClass::Huge));
        let fastapi = r#"{"detail":"Internal Server Error"}"#;
        let bare = "Internal Server Error";
        // `limit` past 64 bits crashing six listings is one cause, whatever
        // generic words each answer carries.
        let first = key("server_error", &generic("listA", fastapi, huge()));
        for op in ["listB", "listC", "listD", "listE", "listF"] {
            assert_eq!(first, key("server_error", &generic(op, fastapi, huge())));
        }
        assert_eq!(first, key("server_error", &generic("listB", bare, huge())));
        assert_eq!(
            reason(
                &finding("server_error", "listA", ""),
                &generic("listA", fastapi, huge())
            )
            .title,
            "The server answered 500-599 (500): after an integer past 64 bits (as in query limit)"
        );
        // An integer past 64 bits in another input is the same cause (it
        // overflows where it is converted, under every input)…
        let offset = breach("query offset", BreachKind::Unusual, Some(EdgeClass::Huge));
        assert_eq!(
            first,
            key("server_error", &generic("listA", fastapi, offset))
        );
        // …another class of value in another input is another cause.
        let long = breach("query name", BreachKind::Unusual, Some(EdgeClass::Long));
        let other = key("server_error", &generic("listA", fastapi, long));
        assert_ne!(first, other);
        let long_elsewhere = breach("query title", BreachKind::Unusual, Some(EdgeClass::Long));
        assert_ne!(
            other,
            key("server_error", &generic("listA", fastapi, long_elsewhere))
        );
        let word = breach(
            "query limit",
            BreachKind::WrongType,
            Some(EdgeClass::WrongType),
        );
        assert_ne!(first, key("server_error", &generic("listA", fastapi, word)));
        // Without a trigger, each operation is its own cause.
        assert_ne!(
            key("server_error", &generic("listA", fastapi, None)),
            key("server_error", &generic("listB", fastapi, None))
        );
        // A specific message merges whatever triggered it.
        let overflow = r#"{"detail":"Python int too large to convert to SQLite INTEGER"}"#;
        assert_eq!(
            key("server_error", &generic("listA", overflow, huge())),
            key(
                "server_error",
                &generic(
                    "listB",
                    overflow,
                    breach("query offset", BreachKind::Unusual, Some(EdgeClass::Huge))
                )
            )
        );
        // GraphQL: a generic message under two root fields is two causes,
        // a specific one is one.
        let gql = |field: &str, message: &str| {
            let f = Finding::new(
                Code::GraphqlInternalError,
                field,
                format!("errors[0] reports an internal failure: {message}"),
                String::new(),
            );
            let e = ex(field, "/graphql", 200, "application/json", "{}");
            reason(&f, &e).key
        };
        for generic in [
            "A programmatic error occurred.",
            "An unexpected error occurred",
            "Internal server error",
        ] {
            assert_ne!(
                gql("Query.orders", generic),
                gql("Query.products", generic),
                "{generic}"
            );
        }
        let specific = "Cannot read properties of undefined (reading 'price')";
        assert_eq!(
            gql("Query.orders", specific),
            gql("Query.products", specific)
        );
    }

    #[test]
    fn a_body_the_server_could_not_parse_is_one_cause_whatever_its_parser_says() {
        let answer = |op: &str, status: u16, body: &str| {
            let mut e = ex(op, "/x", status, "application/json", body);
            e.request.method = "POST".into();
            e.request.body = Some("{\"name\": \"ab".into());
            e.request.breach = breach(
                "body",
                BreachKind::MalformedBody,
                Some(EdgeClass::Malformed),
            );
            e
        };
        let wordings = [
            r#"{"detail":[{"type":"json_invalid","loc":["body",12],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}]}"#,
            r#"{"error":"Unexpected token } in JSON at position 12"}"#,
            r#"{"message":"JSON parse error: Unexpected end-of-input: expected close marker for Object"}"#,
        ];
        let keys: Vec<String> = wordings
            .iter()
            .enumerate()
            .map(|(i, w)| key("undocumented_status", &answer(&format!("op{i}"), 400, w)))
            .collect();
        assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
        // A parser's words alone tell it, whatever the request noted.
        let mut plain = ex(
            "createPet",
            "/pets",
            500,
            "text/plain",
            "Expecting value: line 1 column 1 (char 0)",
        );
        plain.request.body = Some("x".into());
        let mut node = ex(
            "createOrder",
            "/orders",
            500,
            "application/json",
            r#"{"error":"SyntaxError: Unexpected token x in JSON at position 0"}"#,
        );
        node.request.body = Some("x".into());
        assert_eq!(key("server_error", &plain), key("server_error", &node));
    }

    #[test]
    fn a_body_field_let_through_anywhere_is_one_cause_listing_its_places() {
        let accepted = |op: &str, b: Option<Breach>| {
            let mut e = ex(op, "/x", 201, "application/json", "{}");
            e.request.breach = b;
            reason(&finding("invalid_input_accepted", op, ""), &e)
        };
        let a = accepted(
            "createPet",
            breach(
                "body /name",
                BreachKind::WrongType,
                Some(EdgeClass::WrongType),
            ),
        );
        let b = accepted(
            "createOrder",
            breach("body /quantity", BreachKind::Null, Some(EdgeClass::Null)),
        );
        assert_eq!(a.key, b.key);
        assert_eq!(
            a.place.as_deref(),
            Some("createPet: body /name: wrong type")
        );
        assert_eq!(
            b.place.as_deref(),
            Some("createOrder: body /quantity: null")
        );
        // A query parameter stays its own cause.
        let q = accepted(
            "listPets",
            breach(
                "query limit",
                BreachKind::AboveMaximum,
                Some(EdgeClass::Bounds),
            ),
        );
        assert_ne!(a.key, q.key);
        let fault = |op: &str, r: &Reason| Fault {
            cause: id(&r.key),
            cause_title: r.title.clone(),
            place: r.place.clone(),
            code: Code::InvalidInputAccepted,
            class: Code::InvalidInputAccepted.oracle().class,
            severity: Code::InvalidInputAccepted.oracle().severity,
            operation: op.into(),
            status: Some(201),
            signature: format!("invalid_input_accepted:{op}:201"),
            message: String::new(),
            count: 1,
            first_seq: 0,
            witness: Vec::new(),
            confirmation: Confirmation::NotReplayed,
            reproducer: None,
        };
        let causes = group(&[
            fault("createPet", &a),
            fault("createOrder", &b),
            fault("listPets", &q),
        ]);
        assert_eq!(causes.len(), 2);
        let body = causes.iter().find(|c| c.faults.len() == 2).unwrap();
        assert_eq!(
            body.places,
            [
                "createPet: body /name: wrong type",
                "createOrder: body /quantity: null"
            ]
        );
        assert!(
            line(body).ends_with("— 2 fault(s) at 2 places on createPet, createOrder"),
            "{}",
            line(body)
        );
    }

    #[test]
    fn null_through_a_description_that_marks_nothing_nullable_is_one_cause() {
        let spec = |nullable: &str| {
            format!(
                "openapi: 3.0.0\ninfo: {{title: t, version: '1'}}\npaths:\n  /pets/{{id}}:\n    get:\n      operationId: getPet\n      parameters: [{{name: id, in: path, required: true, schema: {{type: integer}}}}]\n      responses:\n        '200': {{description: ok, content: {{application/json: {{schema: {{$ref: '#/components/schemas/Pet'}}}}}}}}\n  /owners/{{id}}:\n    get:\n      operationId: getOwner\n      parameters: [{{name: id, in: path, required: true, schema: {{type: integer}}}}]\n      responses:\n        '200': {{description: ok, content: {{application/json: {{schema: {{$ref: '#/components/schemas/Owner'}}}}}}}}\ncomponents:\n  schemas:\n    Pet:\n      type: object\n      properties: {{name: {{type: string}}, tag: {{type: string}}}}\n    Owner:\n      type: object\n      properties: {{email: {{type: string{nullable}}}, phone: {{type: string}}}}\n"
            )
        };
        let reasons = |nullable: &str| -> Vec<Reason> {
            let api = crate::load::load_text(&spec(nullable), std::path::Path::new("openapi.yaml"))
                .unwrap()
                .api;
            let checker = crate::oracles::Checker::new(&api, Vec::new(), None);
            [
                ("getPet", "/pets/1", r#"{"name":"Rex","tag":null}"#),
                ("getOwner", "/owners/1", r#"{"email":"a@b.c","phone":null}"#),
            ]
            .iter()
            .map(|(op, path, body)| {
                let a = ex(op, path, 200, "application/json", body);
                let f = checker.exchange(&api, &a);
                assert_eq!(f.len(), 1, "{f:?}");
                reason(&f[0], &a)
            })
            .collect()
        };
        let none = reasons("");
        assert_eq!(none[0].key, none[1].key);
        assert_eq!(
            none[0].title,
            "The body breaks the documented schema: null where the description marks no schema nullable"
        );
        assert_eq!(
            none[0].place.as_deref(),
            Some("#/components/schemas/Pet/properties/tag: type")
        );
        // Where the description marks some field nullable, each place
        // missing it is its own cause.
        let some = reasons(", nullable: true");
        assert_ne!(some[0].key, some[1].key);
    }

    #[test]
    fn a_broken_schema_is_one_cause_whichever_operation_answered_it() {
        let api = crate::load::load_text(
            crate::demo::OPENAPI_YAML,
            std::path::Path::new("openapi.yaml"),
        )
        .unwrap()
        .api;
        let checker = crate::oracles::Checker::new(&api, Vec::new(), None);
        let book = |price: &str| {
            format!(
                r#"{{"id":2,"authorId":1,"title":"T","price":{price},"stock":1,"tags":[],"status":"available"}}"#
            )
        };
        let answers = [
            ex(
                "getBook",
                "/authors/1/books/2",
                200,
                "application/json",
                &book("\"12.50\""),
            ),
            ex(
                "listBooks",
                "/authors/1/books",
                200,
                "application/json",
                &format!("[{}]", book("\"3.10\"")),
            ),
        ];
        let reasons: Vec<Reason> = answers
            .iter()
            .map(|a| {
                let f = checker.exchange(&api, a);
                assert_eq!(f.len(), 1, "{f:?}");
                reason(&f[0], a)
            })
            .collect();
        assert_eq!(reasons[0].key, reasons[1].key);
        assert_eq!(
            reasons[0].title,
            "The body breaks the documented schema: #/components/schemas/Book/properties/price: type"
        );
    }

    #[test]
    fn accepted_invalid_inputs_group_by_input_and_kind() {
        let mut a = ex("listA", "/a?limit=abc", 200, "application/json", "[]");
        a.request.breach = Some(Breach {
            input: "query limit".into(),
            kind: BreachKind::WrongType,
            class: None,
        });
        let mut b = ex("listB", "/b?limit=xyz", 200, "application/json", "[]");
        b.request.breach = a.request.breach.clone();
        let ra = reason(&finding("invalid_input_accepted", "listA", ""), &a);
        assert_eq!(
            ra.key,
            reason(&finding("invalid_input_accepted", "listB", ""), &b).key
        );
        b.request.breach = Some(Breach {
            input: "query limit".into(),
            kind: BreachKind::AboveMaximum,
            class: None,
        });
        assert_ne!(
            ra.key,
            reason(&finding("invalid_input_accepted", "listB", ""), &b).key
        );
    }

    #[test]
    fn replays_take_every_cause_once_before_any_twice() {
        let fault = |code: &str, sig: &str, cause: &str, steps: usize| Fault {
            cause: id(cause),
            cause_title: String::new(),
            place: None,
            code: Code::from_name(code).unwrap(),
            class: Code::from_name(code).unwrap().oracle().class,
            severity: Code::from_name(code).unwrap().oracle().severity,
            operation: sig.into(),
            status: Some(400),
            signature: sig.into(),
            message: String::new(),
            count: 1,
            first_seq: 0,
            witness: vec![
                crate::faults::WitnessStep {
                    seq: 0,
                    operation: String::new(),
                    method: "GET".into(),
                    path: "/".into(),
                    status: None,
                };
                steps
            ],
            confirmation: Confirmation::NotReplayed,
            reproducer: None,
        };
        let faults = [
            fault("undocumented_status", "u1", "u", 3),
            fault("undocumented_status", "u2", "u", 1),
            fault("undocumented_status", "u3", "u", 2),
            fault("server_error", "s1", "s1", 4),
            fault("server_error", "s2", "s2", 1),
        ];
        let order: Vec<&str> = replay_order(&faults)
            .into_iter()
            .map(|i| faults[i].signature.as_str())
            .collect();
        // Defects first; the shortest witness stands for its cause.
        assert_eq!(order[..3], ["s1", "s2", "u2"]);
        assert_eq!(order.len(), 5);
    }

    #[test]
    fn causes_rank_defects_first_and_count_their_faults() {
        let fault = |code: &str, op: &str, sig: &str, cause: &str| Fault {
            cause: id(cause),
            cause_title: cause.to_uppercase(),
            place: None,
            code: Code::from_name(code).unwrap(),
            class: Code::from_name(code).unwrap().oracle().class,
            severity: Code::from_name(code).unwrap().oracle().severity,
            operation: op.into(),
            status: Some(400),
            signature: sig.into(),
            message: String::new(),
            count: 2,
            first_seq: 0,
            witness: Vec::new(),
            confirmation: Confirmation::NotReplayed,
            reproducer: None,
        };
        let faults = [
            fault("undocumented_status", "a", "s1", "u"),
            fault("undocumented_status", "b", "s2", "u"),
            fault("server_error", "c", "s3", "s"),
        ];
        let causes = group(&faults);
        assert_eq!(causes.len(), 2);
        assert_eq!(causes[0].code.as_str(), "server_error");
        assert_eq!(causes[1].faults, ["s1", "s2"]);
        assert_eq!(causes[1].operations, ["a", "b"]);
        assert_eq!(causes[1].count, 4);
        assert_eq!(
            summary(&causes, 3),
            "2 cause(s) (1 defect(s), 1 conformance) from 3 fault(s)"
        );
        assert!(causes[0].id.starts_with('C') && causes[0].id.len() == 9);
        assert!(
            line(&causes[1]).ends_with("— 2 fault(s) on a, b"),
            "{}",
            line(&causes[1])
        );
    }
}
