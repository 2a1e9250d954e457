//! Constraints a description states only in prose, or a server states only
//! when it refuses a request (400, 422): "The value should be integer between
//! double quotes", "limit must be an integer", FastAPI's `detail` entries
//! with their `loc`, `type` and `ctx`, Cornice's `details` with `location`
//! and `name`. Each names an input and a rule; the rule is written into that
//! input's schema so that later values keep it (unless a negative test breaks
//! it on purpose), and the run reports what it learnt.

use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;
use serde_json::{json, Value};

use crate::model::{Api, Location, Operation, Schema, SchemaType};

/// A rule about one input's values.
#[derive(Debug, Clone, PartialEq)]
pub enum Rule {
    /// An integer.
    Integer,
    /// A number.
    Number,
    /// A UUID.
    Uuid,
    /// An integer between double quotes (an entity tag such as `"3"`).
    QuotedInteger,
    /// A string matching this regex.
    Pattern(String),
    /// At least this much.
    Minimum(f64),
    /// At most this much.
    Maximum(f64),
    /// At least this many characters.
    MinLength(u64),
    /// At most this many characters.
    MaxLength(u64),
    /// One of these values.
    OneOf(Vec<Value>),
}

impl Rule {
    /// The rule in words, for reports.
    pub fn describe(&self) -> String {
        match self {
            Rule::Integer => "an integer".into(),
            Rule::Number => "a number".into(),
            Rule::Uuid => "a uuid".into(),
            Rule::QuotedInteger => "an integer between double quotes".into(),
            Rule::Pattern(p) => format!("matches {p}"),
            Rule::Minimum(m) => format!("at least {m}"),
            Rule::Maximum(m) => format!("at most {m}"),
            Rule::MinLength(n) => format!("at least {n} characters"),
            Rule::MaxLength(n) => format!("at most {n} characters"),
            Rule::OneOf(v) => format!("one of {}", Value::Array(v.clone())),
        }
    }

    /// Writes the rule into `schema`; whether that changed it.
    pub fn apply(&self, schema: &mut Schema) -> bool {
        let before = schema.clone();
        match self {
            Rule::Integer => schema.types = vec![SchemaType::Integer],
            Rule::Number => {
                if !schema.types.contains(&SchemaType::Integer) {
                    schema.types = vec![SchemaType::Number];
                }
            }
            Rule::Uuid => {
                schema.types = vec![SchemaType::String];
                schema.format = Some("uuid".into());
            }
            Rule::QuotedInteger => {
                schema.types = vec![SchemaType::String];
                schema.pattern = Some("^\"[0-9]{1,6}\"$".into());
            }
            Rule::Pattern(p) => schema.pattern = Some(p.clone()),
            Rule::Minimum(m) => schema.minimum = Some(*m),
            Rule::Maximum(m) => schema.maximum = Some(*m),
            Rule::MinLength(n) => schema.min_length = Some(*n),
            Rule::MaxLength(n) => schema.max_length = Some(*n),
            Rule::OneOf(v) => schema.enum_values = v.clone(),
        }
        *schema != before
    }
}

/// One constraint the run learnt, as `report.json` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Learnt {
    /// The operation.
    pub operation: String,
    /// The input: `query limit`, `header If-Match`, `body /password`.
    pub input: String,
    /// The rule, in words.
    pub rule: String,
    /// Where it was read: `description`, or `answer 400 (seq 12)`.
    pub source: String,
}

/// An input of an operation a rule is about: a parameter, or a body field
/// by its path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Input {
    /// A parameter, by its position.
    Param(usize),
    /// A body field, by its path from the body's root.
    Field(Vec<String>),
}

impl Input {
    /// Its schema as the description gives it.
    pub fn schema<'a>(&self, api: &'a Api, op: &'a Operation) -> Option<&'a Schema> {
        match self {
            Input::Param(j) => op.parameters.get(*j).map(|p| &p.schema),
            Input::Field(path) => body_field(api, op, path),
        }
    }

    /// The input as reports name it.
    pub fn describe(&self, op: &Operation) -> String {
        match self {
            Input::Param(j) => {
                let p = &op.parameters[*j];
                format!("{} {}", p.location.as_str(), p.name)
            }
            Input::Field(path) => format!("body /{}", path.join("/")),
        }
    }
}

fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a valid built-in regex"))
}

/// The rules one sentence states.
pub fn rules_in(text: &str) -> Vec<Rule> {
    static QUOTED: OnceLock<Regex> = OnceLock::new();
    static INTEGER: OnceLock<Regex> = OnceLock::new();
    static NUMBER: OnceLock<Regex> = OnceLock::new();
    static UUID: OnceLock<Regex> = OnceLock::new();
    static BETWEEN: OnceLock<Regex> = OnceLock::new();
    static LEAST: OnceLock<Regex> = OnceLock::new();
    static MOST: OnceLock<Regex> = OnceLock::new();
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    let mut out = Vec::new();
    if regex(
        &QUOTED,
        r"(?i)integer[s]? (between|in|within|inside|surrounded by) (double )?quotes",
    )
    .is_match(text)
    {
        out.push(Rule::QuotedInteger);
        return out;
    }
    if regex(
        &INTEGER,
        r"(?i)\b((must|should|has to) be an? (valid )?(integer|int|whole number)|not an? (valid )?integer|valid integer|expected (an )?integer|integer expected|int_parsing|int_type)\b",
    )
    .is_match(text)
    {
        out.push(Rule::Integer);
    } else if regex(
        &NUMBER,
        r"(?i)\b((must|should) be an? (valid )?number|not an? (valid )?number|valid number|float_parsing)\b",
    )
    .is_match(text)
    {
        out.push(Rule::Number);
    }
    if regex(
        &UUID,
        r"(?i)\b(valid uuid|uuid_parsing|uuid_type|must be an? uuid|not an? (valid )?uuid)\b",
    )
    .is_match(text)
    {
        out.push(Rule::Uuid);
    }
    let num = |s: &str| s.parse::<f64>().ok();
    if let Some(c) = regex(
        &BETWEEN,
        r"(?i)between (-?\d+(?:\.\d+)?) and (-?\d+(?:\.\d+)?)( characters?| chars?| letters?)",
    )
    .captures(text)
    {
        let (lo, hi) = (num(&c[1]), num(&c[2]));
        if let (Some(lo), Some(hi)) = (lo, hi) {
            if c.get(3).is_some() {
                out.push(Rule::MinLength(lo.max(0.0) as u64));
                out.push(Rule::MaxLength(hi.max(0.0) as u64));
            } else {
                out.push(Rule::Minimum(lo));
                out.push(Rule::Maximum(hi));
            }
        }
    }
    for (cell, pattern, min) in [
        (
            &LEAST,
            r"(?i)(?:at least|greater than or equal to|>=|no less than|minimum(?: of| is)?) (-?\d+(?:\.\d+)?)( characters?| chars?| letters?)",
            true,
        ),
        (
            &MOST,
            r"(?i)(?:at most|less than or equal to|<=|no more than|maximum(?: of| is)?) (-?\d+(?:\.\d+)?)( characters?| chars?| letters?)",
            false,
        ),
    ] {
        if let Some(c) = regex(cell, pattern).captures(text) {
            let Some(n) = num(&c[1]) else { continue };
            let rule = match (c.get(2).is_some(), min) {
                (true, true) => Rule::MinLength(n.max(0.0) as u64),
                (true, false) => Rule::MaxLength(n.max(0.0) as u64),
                (false, true) => Rule::Minimum(n),
                (false, false) => Rule::Maximum(n),
            };
            if !out.contains(&rule) {
                out.push(rule);
            }
        }
    }
    if let Some(c) = regex(&PATTERN, r#"(?i)(?:match(?:es)?|matching) (?:the )?(?:pattern|regex|regular expression)[:\s]*['"`/]([^'"`]+?)['"`/](?:\s|$|[.,;)])"#).captures(text) {
        if super::pattern::pattern_matches(&c[1], "").is_some() {
            out.push(Rule::Pattern(c[1].to_string()));
        }
    }
    out
}

/// The rules an answer to a request of `op` states, each with its input.
pub fn from_answer(
    api: &Api,
    op: &Operation,
    body: Option<&Value>,
    text: &str,
) -> Vec<(Input, Rule)> {
    let mut out = Vec::new();
    // FastAPI / pydantic: {"detail": [{"loc": ["query", "limit"], "type": …, "msg": …, "ctx": …}]}
    if let Some(Value::Array(entries)) = body.and_then(|b| b.get("detail")) {
        for e in entries {
            let loc: Vec<String> = e
                .get("loc")
                .and_then(Value::as_array)
                .map(|l| l.iter().map(crate::execution::wire::as_text).collect())
                .unwrap_or_default();
            let Some(input) = input_at(api, op, &loc) else {
                continue;
            };
            for rule in pydantic_rules(e) {
                out.push((input.clone(), rule));
            }
        }
        return out;
    }
    // Cornice (Kinto) and alike: {"details": [{"location": "header", "name": "If-Match", "description": …}]}
    if let Some(Value::Array(entries)) =
        body.and_then(|b| b.get("details").or_else(|| b.get("errors")))
    {
        let mut any = false;
        for e in entries {
            let location = e
                .get("location")
                .or_else(|| e.get("in"))
                .and_then(Value::as_str);
            let name = e
                .get("name")
                .or_else(|| e.get("field"))
                .or_else(|| e.get("param"))
                .and_then(Value::as_str);
            let description = e
                .get("description")
                .or_else(|| e.get("message"))
                .or_else(|| e.get("msg"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let Some(name) = name else { continue };
            let mut loc: Vec<String> = location.map(|l| vec![l.to_string()]).unwrap_or_default();
            loc.extend(name.split('.').map(str::to_string));
            let input =
                input_at(api, op, &loc).or_else(|| input_at(api, op, &loc[loc.len().min(1)..]));
            if let Some(input) = input {
                for rule in rules_in(description) {
                    any = true;
                    out.push((input.clone(), rule));
                }
            }
        }
        if any {
            return out;
        }
    }
    // Free text: a sentence that names one input and states a rule.
    for sentence in text
        .split(['.', '\n', ';'])
        .filter(|s| !s.trim().is_empty())
    {
        let rules = rules_in(sentence);
        if rules.is_empty() {
            continue;
        }
        if let Some(input) = named_in(api, op, sentence) {
            for rule in rules {
                out.push((input.clone(), rule));
            }
        }
    }
    out
}

/// The input a location path (`["query", "limit"]`, `["body", "user", "name"]`,
/// `["If-Match"]`) names.
fn input_at(api: &Api, op: &Operation, loc: &[String]) -> Option<Input> {
    let (first, rest) = loc.split_first()?;
    let location = match first.to_ascii_lowercase().as_str() {
        "query" | "querystring" => Some(Location::Query),
        "path" => Some(Location::Path),
        "header" | "headers" => Some(Location::Header),
        "cookie" | "cookies" => Some(Location::Cookie),
        "body" => None,
        _ => {
            // No location word: a parameter or a top-level body field by name.
            return param_named(op, None, first)
                .map(Input::Param)
                .or_else(|| field_path(api, op, loc).map(Input::Field));
        }
    };
    match location {
        Some(l) => param_named(op, Some(l), rest.first()?).map(Input::Param),
        None => field_path(api, op, rest).map(Input::Field),
    }
}

fn param_named(op: &Operation, location: Option<Location>, name: &str) -> Option<usize> {
    op.parameters
        .iter()
        .position(|p| location.is_none_or(|l| p.location == l) && p.name.eq_ignore_ascii_case(name))
}

/// `path` when it names a property chain of the body's schema.
fn field_path(api: &Api, op: &Operation, path: &[String]) -> Option<Vec<String>> {
    if path.is_empty() {
        return None;
    }
    body_field(api, op, path).map(|_| path.to_vec())
}

/// The schema of the body field at `path` (the body's own for an empty one).
pub fn body_field<'a>(api: &'a Api, op: &'a Operation, path: &[String]) -> Option<&'a Schema> {
    let (_, mut schema) = op.request_body.as_ref()?.primary_schema()?;
    for name in path {
        schema = api.resolve(schema).properties.get(name)?;
    }
    Some(schema)
}

/// The one input whose name a sentence mentions as a word, if exactly one.
fn named_in(api: &Api, op: &Operation, sentence: &str) -> Option<Input> {
    let words: Vec<String> = sentence
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let mut found: Vec<Input> = Vec::new();
    for (j, p) in op.parameters.iter().enumerate() {
        if words.contains(&p.name.to_ascii_lowercase()) {
            found.push(Input::Param(j));
        }
    }
    if let Some((_, schema)) = op.request_body.as_ref().and_then(|b| b.primary_schema()) {
        for name in api.resolve(schema).properties.keys() {
            if words.contains(&name.to_ascii_lowercase()) {
                found.push(Input::Field(vec![name.clone()]));
            }
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// The rules of one pydantic error entry.
fn pydantic_rules(e: &Value) -> Vec<Rule> {
    let kind = e.get("type").and_then(Value::as_str).unwrap_or("");
    let ctx = e.get("ctx");
    let n = |key: &str| ctx.and_then(|c| c.get(key)).and_then(Value::as_f64);
    let out = match kind {
        "int_parsing" | "int_type" | "int_from_float" | "type_error.integer" => vec![Rule::Integer],
        "float_parsing" | "float_type" | "type_error.float" => vec![Rule::Number],
        "uuid_parsing" | "uuid_type" | "type_error.uuid" => vec![Rule::Uuid],
        "greater_than_equal" => n("ge").map(Rule::Minimum).into_iter().collect(),
        "greater_than" => n("gt")
            .map(|x| Rule::Minimum(x + 1.0))
            .into_iter()
            .collect(),
        "less_than_equal" => n("le").map(Rule::Maximum).into_iter().collect(),
        "less_than" => n("lt")
            .map(|x| Rule::Maximum(x - 1.0))
            .into_iter()
            .collect(),
        "string_too_short" => n("min_length")
            .map(|x| Rule::MinLength(x as u64))
            .into_iter()
            .collect(),
        "string_too_long" => n("max_length")
            .map(|x| Rule::MaxLength(x as u64))
            .into_iter()
            .collect(),
        "string_pattern_mismatch" => ctx
            .and_then(|c| c.get("pattern"))
            .and_then(Value::as_str)
            .map(|p| Rule::Pattern(p.to_string()))
            .into_iter()
            .collect(),
        "enum" | "literal_error" => ctx
            .and_then(|c| c.get("expected"))
            .and_then(Value::as_str)
            .map(|x| {
                // "'a', 'b' or 'c'"
                let v: Vec<Value> = x
                    .split([',', ' '])
                    .map(|w| w.trim().trim_matches('\''))
                    .filter(|w| !w.is_empty() && *w != "or")
                    .map(|w| json!(w))
                    .collect();
                Rule::OneOf(v)
            })
            .into_iter()
            .collect(),
        _ => Vec::new(),
    };
    if out.is_empty() {
        e.get("msg")
            .and_then(Value::as_str)
            .map(rules_in)
            .unwrap_or_default()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api() -> Api {
        crate::load::load_text(
            r#"openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /c/{id}:
    put:
      operationId: put
      parameters:
      - {name: id, in: path, required: true, schema: {type: string}}
      - {name: If-Match, in: header, schema: {type: string}}
      - {name: limit, in: query, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                password: {type: string}
                user: {type: object, properties: {age: {type: integer}}}
      responses: {'200': {description: ok}}
"#,
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api
    }

    #[test]
    fn cornice_pydantic_and_free_text_refusals_name_an_input_and_a_rule() {
        let api = api();
        let op = &api.operations[0];
        let kinto = json!({"code": 400, "message": "If-Match in header: The value should be integer between double quotes.",
            "details": [{"location": "header", "name": "If-Match", "description": "The value should be integer between double quotes."}]});
        assert_eq!(
            from_answer(&api, op, Some(&kinto), &kinto.to_string()),
            vec![(Input::Param(1), Rule::QuotedInteger)]
        );
        let fastapi = json!({"detail": [
            {"loc": ["query", "limit"], "type": "int_parsing", "msg": "Input should be a valid integer"},
            {"loc": ["body", "user", "age"], "type": "greater_than_equal", "msg": "…", "ctx": {"ge": 18}},
            {"loc": ["body", "password"], "type": "string_pattern_mismatch", "msg": "…", "ctx": {"pattern": "^[a-z]+[0-9]$"}}
        ]});
        assert_eq!(
            from_answer(&api, op, Some(&fastapi), ""),
            vec![
                (Input::Param(2), Rule::Integer),
                (
                    Input::Field(vec!["user".into(), "age".into()]),
                    Rule::Minimum(18.0)
                ),
                (
                    Input::Field(vec!["password".into()]),
                    Rule::Pattern("^[a-z]+[0-9]$".into())
                ),
            ]
        );
        let text = "Invalid request. password must be between 8 and 64 characters.";
        assert_eq!(
            from_answer(&api, op, None, text),
            vec![
                (Input::Field(vec!["password".into()]), Rule::MinLength(8)),
                (Input::Field(vec!["password".into()]), Rule::MaxLength(64)),
            ]
        );
        // A sentence naming no input, or two, teaches nothing.
        assert!(from_answer(&api, op, None, "must be an integer").is_empty());
    }

    #[test]
    fn a_quoted_integer_rule_makes_values_that_keep_it() {
        let mut s = Schema::of_type(SchemaType::String);
        assert!(Rule::QuotedInteger.apply(&mut s));
        assert!(
            !Rule::QuotedInteger.apply(&mut s),
            "no change the second time"
        );
        let api = api();
        let mut rng = <crate::generation::values::Rng64 as rand::SeedableRng>::seed_from_u64(1);
        for _ in 0..20 {
            let v = crate::generation::values::value_for(&api, &s, &mut rng);
            let t = v.as_str().unwrap();
            assert!(
                t.len() >= 3 && t.starts_with('"') && t.ends_with('"'),
                "{t}"
            );
            assert!(t[1..t.len() - 1].bytes().all(|b| b.is_ascii_digit()), "{t}");
        }
    }
}
