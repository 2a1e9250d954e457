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
use serde_json::{Value, json};

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
    /// A string starting with this text.
    StartsWith(String),
    /// A string ending with this text (a canonical DNS name ends with `.`).
    EndsWith(String),
    /// A string of this format (`email`, `uri`, `date`, `ipv4`…).
    Format(String),
    /// A value no other resource holds yet (a name "already exists").
    Unique,
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
            Rule::StartsWith(t) => format!("starts with {t:?}"),
            Rule::EndsWith(t) => format!("ends with {t:?}"),
            Rule::Format(f) => format!(
                "a{} {f}",
                if f.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "n"
                } else {
                    ""
                }
            ),
            Rule::Unique => "unique (not taken yet)".into(),
        }
    }

    /// Whether the rule is kept by changing a value rather than by writing
    /// it into the input's schema (see [`Affix`]).
    pub fn is_affix(&self) -> bool {
        matches!(self, Rule::StartsWith(_) | Rule::EndsWith(_) | Rule::Unique)
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
            Rule::Format(f) => {
                schema.types = vec![SchemaType::String];
                schema.format = Some(f.clone());
            }
            Rule::StartsWith(_) | Rule::EndsWith(_) | Rule::Unique => {}
        }
        *schema != before
    }
}

/// Rules kept by changing a string value rather than by a schema: a text
/// it must start or end with, and a fresh tail for a value that must not be
/// taken yet. Generated values keep their other constraints (a name's
/// characters) and gain the affix.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Affix {
    /// Text the value must start with.
    pub prefix: Option<String>,
    /// Text the value must end with.
    pub suffix: Option<String>,
    /// The value must be new: a random tail is added.
    pub unique: bool,
}

impl Affix {
    /// Adds `rule` to the affix; whether that changed it.
    pub fn add(&mut self, rule: &Rule) -> bool {
        let before = self.clone();
        match rule {
            Rule::StartsWith(t) => self.prefix = Some(t.clone()),
            Rule::EndsWith(t) => self.suffix = Some(t.clone()),
            Rule::Unique => self.unique = true,
            _ => {}
        }
        *self != before
    }

    /// `value` made to keep the affix (a non-string value is left alone).
    pub fn keep(&self, value: &mut Value, rng: &mut crate::generation::values::Rng64) {
        use rand::Rng;
        let Value::String(text) = value else { return };
        if self.unique {
            let tail: String = (0..6)
                .map(|_| {
                    char::from(b"abcdefghijklmnopqrstuvwxyz0123456789"[rng.random_range(0..36)])
                })
                .collect();
            let cut = text
                .strip_suffix(self.suffix.as_deref().unwrap_or(""))
                .unwrap_or(text);
            *text = format!("{cut}{tail}");
        }
        if let Some(p) = &self.prefix
            && !text.starts_with(p.as_str())
        {
            text.insert_str(0, p);
        }
        if let Some(sfx) = &self.suffix
            && !text.ends_with(sfx.as_str())
        {
            text.push_str(sfx);
        }
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
    /// The words it was read from (a description's sentence, the server's
    /// message), cut at 200 characters.
    pub message: String,
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
    out.extend(affixes_in(text));
    if let Some(f) = format_in(text)
        && !out.contains(&Rule::Uuid)
    {
        out.push(f);
    }
    if let Some(list) = one_of_in(text) {
        out.push(Rule::OneOf(list));
    }
    if unique_in(text) {
        out.push(Rule::Unique);
    }
    if let Some(c) = regex(&PATTERN, r#"(?i)(?:match(?:es)?|matching) (?:the )?(?:required )?(?:pattern|regex|regular expression)[:\s]*['"`/]([^'"`]+?)['"`/](?:\s|$|[.,;)])"#).captures(text)
        && super::pattern::pattern_matches(&c[1], "").is_some() {
            out.push(Rule::Pattern(c[1].to_string()));
        }
    out
}

/// What a text a value must start or end with is called in words.
const AFFIX_WORDS: [(&str, &str); 10] = [
    ("dot", "."),
    ("period", "."),
    ("full stop", "."),
    ("slash", "/"),
    ("forward slash", "/"),
    ("hyphen", "-"),
    ("dash", "-"),
    ("underscore", "_"),
    ("colon", ":"),
    ("at sign", "@"),
];

/// "must end with a dot", "should start with '/'", "must begin with
/// `ab`", and PowerDNS's "is not canonical" (a canonical DNS name ends with
/// a dot).
fn affixes_in(text: &str) -> Vec<Rule> {
    static AFFIX: OnceLock<Regex> = OnceLock::new();
    static CANONICAL: OnceLock<Regex> = OnceLock::new();
    let re = regex(
        &AFFIX,
        r#"(?i)\b(?:must|should|has to|have to|needs? to|is required to|expected to)\s+(start|begin|end)\s+with\s+(?:an?\s+|the\s+)?(?:['"`]([^'"`]{1,16})['"`]|(full stop|forward slash|at sign|dot|period|slash|hyphen|dash|underscore|colon))"#,
    );
    let mut out = Vec::new();
    for c in re.captures_iter(text) {
        let affix = match (c.get(2), c.get(3)) {
            (Some(q), _) => q.as_str().to_string(),
            (None, Some(w)) => {
                let w = w.as_str().to_ascii_lowercase();
                match AFFIX_WORDS.iter().find(|(name, _)| *name == w) {
                    Some((_, t)) => t.to_string(),
                    None => continue,
                }
            }
            _ => continue,
        };
        let rule = if c[1].eq_ignore_ascii_case("end") {
            Rule::EndsWith(affix)
        } else {
            Rule::StartsWith(affix)
        };
        if !out.contains(&rule) {
            out.push(rule);
        }
    }
    if out.is_empty()
        && regex(
            &CANONICAL,
            r"(?i)\b(?:not (?:a )?canonical|must be (?:a )?canonical|non-canonical)\b",
        )
        .is_match(text)
    {
        out.push(Rule::EndsWith(".".into()));
    }
    out
}

/// "Enter a valid email address." (Django), "must be a valid URL", "is not
/// a valid date", "value is not a valid email address" (pydantic).
fn format_in(text: &str) -> Option<Rule> {
    static FORMAT: OnceLock<Regex> = OnceLock::new();
    let c = regex(
        &FORMAT,
        r"(?i)\b(?:valid|well-formed|proper|must be an?|should be an?|is not an?)\s+(e-?mail|url|uri|date-?time|datetime|date|time|ipv4|ipv6|ip address|ip|hostname|host name)\b",
    )
    .captures(text)?;
    let format = match c[1].to_ascii_lowercase().replace('-', "").as_str() {
        "email" => "email",
        "url" | "uri" => "uri",
        "datetime" => "date-time",
        "date" => "date",
        "time" => "time",
        "ipv6" => "ipv6",
        "ipv4" | "ip address" | "ip" => "ipv4",
        _ => "hostname",
    };
    Some(Rule::Format(format.into()))
}

/// "must be one of: a, b, c", "must be one of [a, b]" (Joi), "Input
/// should be 'a', 'b' or 'c'" (pydantic), "must be either 'a' or 'b'".
fn one_of_in(text: &str) -> Option<Vec<Value>> {
    static LISTED: OnceLock<Regex> = OnceLock::new();
    static QUOTED: OnceLock<Regex> = OnceLock::new();
    let list = if let Some(c) = regex(
        &LISTED,
        r#"(?i)\bone of(?: the following)?(?: values)?\s*[:\[(]?\s*([^\])
]{1,200})"#,
    )
    .captures(text)
    {
        c[1].to_string()
    } else {
        let c = regex(
            &QUOTED,
            r#"(?i)\b(?:must|should|has to) be (?:either )?((?:['"][^'"]{1,40}['"],?\s*)+(?:or|and)\s+['"][^'"]{1,40}['"])"#,
        )
        .captures(text)?;
        c[1].to_string()
    };
    let items: Vec<Value> = list
        .split(',')
        .flat_map(|part| part.split(" or "))
        .flat_map(|part| part.split(" and "))
        .flat_map(|part| part.split('|'))
        .map(|w| {
            w.trim()
                .trim_end_matches(['.', ';'])
                .trim_matches(|c: char| c == '\'' || c == '"' || c == '`' || c == '[' || c == ']')
                .trim()
        })
        .filter(|w| !w.is_empty() && w.len() <= 40 && !w.contains(' '))
        .map(|w| Value::String(w.to_string()))
        .collect();
    (items.len() >= 2).then_some(items)
}

/// "already exists" (Django's "zone with this name already exists."),
/// "must be unique", "is already taken", "already in use".
fn unique_in(text: &str) -> bool {
    static UNIQUE: OnceLock<Regex> = OnceLock::new();
    regex(
        &UNIQUE,
        r"(?i)\b(?:already exists?|already (?:taken|in use|registered|used)|must be unique|is not unique|should be unique|duplicate (?:key|value|entry|name))\b",
    )
    .is_match(text)
}

/// The rules an answer to a request of `op` states, each with its input.
pub fn from_answer(
    api: &Api,
    op: &Operation,
    body: Option<&Value>,
    text: &str,
) -> Vec<(Input, Rule, String)> {
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
            let msg = e.get("msg").and_then(Value::as_str).unwrap_or("");
            for rule in pydantic_rules(e) {
                out.push((input.clone(), rule, cut(msg)));
            }
        }
        return out;
    }
    // Cornice (Kinto), express-validator and alike: {"details": [{"location":
    // "header", "name": "If-Match", "description": …}]}, {"errors": [{"type":
    // "field", "path": "name", "location": "body", "msg": …}]}
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
                .or_else(|| e.get("path"))
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
                    out.push((input.clone(), rule, cut(description)));
                }
            }
        }
        if any {
            return out;
        }
    }
    // Django REST framework: {"name": ["Ensure this field has at least 3
    // characters."]}: the keys name the fields.
    if let Some(Value::Object(fields)) = body {
        for (key, messages) in fields {
            let Some(input) = input_at(api, op, std::slice::from_ref(key)) else {
                continue;
            };
            let texts: Vec<&str> = match messages {
                Value::String(m) => vec![m.as_str()],
                Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            for m in texts {
                for rule in rules_in(m) {
                    out.push((input.clone(), rule, cut(m)));
                }
            }
        }
        if !out.is_empty() {
            return out;
        }
    }
    // Free text: a sentence that names one input and states a rule
    // (`{"error": "DNS Name 'x' is not canonical"}`, "name must end with a dot").
    let message = message_text(body, text);
    for sentence in sentences(&message) {
        let rules = rules_in(sentence);
        if rules.is_empty() {
            continue;
        }
        if let Some(input) = named_in(api, op, sentence) {
            for rule in rules {
                out.push((input.clone(), rule, cut(sentence)));
            }
        }
    }
    out
}

/// The sentences of a message: split at line ends, semicolons and full
/// stops that end a word (not the dot of "end with '.'" or of `1.5`).
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split(['\n', ';'])
        .flat_map(|line| line.split(". "))
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// A message as reports quote it: at most 200 characters.
fn cut(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The text of an answer's message: every string of a JSON body (and the
/// keys of its top two levels, where Django REST framework names the
/// fields), else the body itself.
pub fn message_text(body: Option<&Value>, text: &str) -> String {
    fn walk(v: &Value, out: &mut String, depth: usize) {
        if depth > 6 {
            return;
        }
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out, depth + 1)),
            Value::Object(map) => {
                for (k, v) in map {
                    if depth < 2 {
                        out.push_str(k);
                        out.push('\n');
                    }
                    walk(v, out, depth + 1);
                }
            }
            _ => {}
        }
    }
    match body {
        Some(b) => {
            let mut out = String::new();
            walk(b, &mut out, 0);
            out
        }
        None => text.to_string(),
    }
}

/// Whether a message's `words` ([`names::words`](crate::model::names::words)
/// of its text) name the input `name`: its words appear in a row
/// (`server_id` in "unknown server id", `X-API-Version` in "bad API
/// version": a leading `x` dropped).
pub fn names_input(words: &[String], name: &str) -> bool {
    let mut own = crate::model::names::words(name);
    if own.len() > 1 && own[0] == "x" {
        own.remove(0);
    }
    !own.is_empty() && words.windows(own.len()).any(|w| w == own.as_slice())
}

/// The parameters and top-level body fields of `op` an answer's message
/// names.
pub fn named_inputs(
    api: &Api,
    op: &Operation,
    body: Option<&Value>,
    text: &str,
) -> Vec<(Location, String)> {
    let words = crate::model::names::words(&message_text(body, text));
    let mut out: Vec<(Location, String)> = op
        .parameters
        .iter()
        .filter(|p| names_input(&words, &p.name))
        .map(|p| (p.location, p.name.clone()))
        .collect();
    if let Some((_, schema)) = op.request_body.as_ref().and_then(|b| b.primary_schema()) {
        for name in api.resolve(schema).properties.keys() {
            if names_input(&words, name) {
                out.push((Location::Body, name.clone()));
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

    fn pairs(found: Vec<(Input, Rule, String)>) -> Vec<(Input, Rule)> {
        found.into_iter().map(|(i, r, _)| (i, r)).collect()
    }

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
            pairs(from_answer(&api, op, Some(&kinto), &kinto.to_string())),
            vec![(Input::Param(1), Rule::QuotedInteger)]
        );
        let fastapi = json!({"detail": [
            {"loc": ["query", "limit"], "type": "int_parsing", "msg": "Input should be a valid integer"},
            {"loc": ["body", "user", "age"], "type": "greater_than_equal", "msg": "…", "ctx": {"ge": 18}},
            {"loc": ["body", "password"], "type": "string_pattern_mismatch", "msg": "…", "ctx": {"pattern": "^[a-z]+[0-9]$"}}
        ]});
        assert_eq!(
            pairs(from_answer(&api, op, Some(&fastapi), "")),
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
            pairs(from_answer(&api, op, None, text)),
            vec![
                (Input::Field(vec!["password".into()]), Rule::MinLength(8)),
                (Input::Field(vec!["password".into()]), Rule::MaxLength(64)),
            ]
        );
        // A sentence naming no input, or two, teaches nothing.
        assert!(from_answer(&api, op, None, "must be an integer").is_empty());
    }

    fn zones() -> Api {
        crate::load::load_text(
            r#"openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /servers/{server_id}/zones:
    post:
      operationId: createZone
      parameters:
      - {name: server_id, in: path, required: true, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                name: {type: string}
                kind: {type: string}
                email: {type: string}
                url: {type: string}
                code: {type: string}
                password: {type: string}
      responses: {'201': {description: made}}
"#,
            std::path::Path::new("z.yaml"),
        )
        .unwrap()
        .api
    }

    fn field(name: &str) -> Input {
        Input::Field(vec![name.into()])
    }

    /// Messages as the frameworks write them by default (captured from
    /// Django REST framework 3.16, pydantic 2.13 under FastAPI's `detail`,
    /// express-validator 7), and as PowerDNS and others word theirs.
    #[test]
    fn real_frameworks_messages_name_an_input_and_a_rule() {
        let api = zones();
        let op = &api.operations[0];
        let read = |body: Value| pairs(from_answer(&api, op, Some(&body), &body.to_string()));
        let drf = json!({"name": ["Ensure this field has at least 3 characters."],
            "kind": ["\"x\" is not a valid choice."], "email": ["Enter a valid email address."],
            "url": ["Enter a valid URL."], "code": ["This value does not match the required pattern."]});
        assert_eq!(
            read(drf),
            vec![
                (field("name"), Rule::MinLength(3)),
                (field("email"), Rule::Format("email".into())),
                (field("url"), Rule::Format("uri".into())),
            ]
        );
        assert_eq!(
            read(json!({"name": ["Ensure this field has no more than 10 characters."]})),
            vec![(field("name"), Rule::MaxLength(10))]
        );
        assert_eq!(
            read(json!({"name": ["This field must be unique."]})),
            vec![(field("name"), Rule::Unique)]
        );
        assert_eq!(
            read(json!({"name": ["zone with this name already exists."]})),
            vec![(field("name"), Rule::Unique)]
        );
        let fastapi = json!({"detail": [
            {"type": "string_too_short", "loc": ["body", "name"], "msg": "String should have at least 3 characters", "input": "ab", "ctx": {"min_length": 3}},
            {"type": "literal_error", "loc": ["body", "kind"], "msg": "Input should be 'Native' or 'Master'", "input": "x", "ctx": {"expected": "'Native' or 'Master'"}},
            {"type": "value_error", "loc": ["body", "email"], "msg": "value is not a valid email address: An email address must have an @-sign.", "input": "no", "ctx": {"reason": "An email address must have an @-sign."}},
            {"type": "url_parsing", "loc": ["body", "url"], "msg": "Input should be a valid URL, relative URL without a base", "input": "nope", "ctx": {"error": "relative URL without a base"}},
            {"type": "string_pattern_mismatch", "loc": ["body", "code"], "msg": "String should match pattern '^[a-z]+\\.$'", "input": "abcd", "ctx": {"pattern": "^[a-z]+\\.$"}}
        ]});
        assert_eq!(
            read(fastapi),
            vec![
                (field("name"), Rule::MinLength(3)),
                (
                    field("kind"),
                    Rule::OneOf(vec![json!("Native"), json!("Master")])
                ),
                (field("email"), Rule::Format("email".into())),
                (field("url"), Rule::Format("uri".into())),
                (field("code"), Rule::Pattern("^[a-z]+\\.$".into())),
            ]
        );
        let express = json!({"errors": [
            {"type": "field", "value": "ab", "msg": "must be at least 3 chars long", "path": "name", "location": "body"},
            {"type": "field", "value": "x", "msg": "must be one of: Native, Master", "path": "kind", "location": "body"},
            {"type": "field", "value": "no", "msg": "Invalid value", "path": "email", "location": "body"}
        ]});
        assert_eq!(
            read(express),
            vec![
                (field("name"), Rule::MinLength(3)),
                (
                    field("kind"),
                    Rule::OneOf(vec![json!("Native"), json!("Master")])
                ),
            ]
        );
        // Free text naming one input: PowerDNS, and what other services say.
        for (text, input, rule) in [
            (
                json!({"error": "DNS Name 'dtE' is not canonical"}),
                "name",
                Rule::EndsWith(".".into()),
            ),
            (
                json!({"error": "name must end with a dot"}),
                "name",
                Rule::EndsWith(".".into()),
            ),
            (
                json!({"message": "The name should start with 'zz-'."}),
                "name",
                Rule::StartsWith("zz-".into()),
            ),
            (
                json!({"error": "database name must be at least 3 characters"}),
                "name",
                Rule::MinLength(3),
            ),
            (
                json!({"error": "\"kind\" must be one of [Native, Master]"}),
                "kind",
                Rule::OneOf(vec![json!("Native"), json!("Master")]),
            ),
        ] {
            assert_eq!(read(text.clone()), vec![(field(input), rule)], "{text}");
        }
        // Default messages that state no rule teach nothing.
        assert!(
            read(
                json!({"errors": [{"msg": "Invalid value", "path": "email", "location": "body"}]})
            )
            .is_empty()
        );
        assert!(read(json!({"error": "Conflict"})).is_empty());
    }

    #[test]
    fn affixes_change_values_to_keep_them() {
        let mut rng = <crate::generation::values::Rng64 as rand::SeedableRng>::seed_from_u64(3);
        let mut affix = Affix::default();
        assert!(affix.add(&Rule::EndsWith(".".into())));
        assert!(!affix.add(&Rule::EndsWith(".".into())));
        let mut v = json!("example");
        affix.keep(&mut v, &mut rng);
        assert_eq!(v, json!("example."));
        affix.add(&Rule::Unique);
        let (mut a, mut b) = (json!("zone."), json!("zone."));
        affix.keep(&mut a, &mut rng);
        affix.keep(&mut b, &mut rng);
        assert_ne!(a, b, "a unique value is new every time");
        assert!(a.as_str().unwrap().starts_with("zone") && a.as_str().unwrap().ends_with('.'));
        let mut n = json!(5);
        affix.keep(&mut n, &mut rng);
        assert_eq!(n, json!(5));
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
