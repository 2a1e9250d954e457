//! Response-body conformance, the `schema_violation` oracle: does a JSON body
//! match the schema the description documents for its status and media type?
//!
//! The model's [`Schema`]s are converted once per API into JSON Schema 2020-12
//! (named schemas into `$defs`) and checked with the `jsonschema` crate. Every rule
//! leans towards silence: a report the user has to dismiss as the tool's mistake
//! costs more than a missed one, which is the main complaint about peer tools.
//!
//! | constraint | fires when | does not fire when |
//! |---|---|---|
//! | type | the value's JSON type is not listed | the list is empty (any); it lists `null` (nullable) and the value is null; `integer` and the value is `3.0` |
//! | enum | the value is not listed | the listed values are not of the schema's types (spec mistake: the enum is dropped); the schema is nullable and the value is null |
//! | minimum, maximum | the number is out of bounds (exclusive flags become 2020-12 `exclusiveMinimum`/`exclusiveMaximum`) | — |
//! | multipleOf | the number, as written, is not a multiple (`12.345` of `0.01`) | the division is exact in decimal (`12.34` of `0.01`, where binary floats would say no) |
//! | minLength, maxLength | the string is too short or too long (in code points) | — |
//! | pattern | the string does not match | the pattern does not compile for the Rust regex engines (ECMA-262 syntax in specs): it is dropped; matching gives up (backtracking limit) |
//! | format | never | always: formats are asserted by no one consistently (`int64` on strings, custom names) |
//! | minItems | the array is shorter, for limits up to [`JSON_ITEMS`] | the limit exceeds [`JSON_ITEMS`]: bodies arrive with arrays cut at that many items |
//! | maxItems, uniqueItems, items | the array is too long, repeats an item, or an item is wrong | — |
//! | properties | a listed property's value is wrong | — |
//! | required | a required property is absent (the pointer names it) | the property is `writeOnly` (a server never sends it) |
//! | additionalProperties | an unlisted property does not match its schema | the description says `false`: the model cannot express it, so extra properties are never a violation |
//! | oneOf, anyOf | the value matches none of the members (always checked as `anyOf`) | it matches several: `oneOf` members overlap in real descriptions and exclusive matching reports conforming bodies; the schema is nullable and the value is null |
//! | discriminator | never on its own | always: only the members' own constraints are checked |
//! | readOnly, writeOnly | never | always: both are about requests |
//!
//! Which schema applies: the response for the exact status, else its range (`2XX`),
//! else `default`; within it the media type of the response's `Content-Type`
//! (parameters ignored): exact, then `type/*`, then `*/*`, then any JSON media type
//! (`application/problem+json` answers for `application/json`). Without a
//! `Content-Type`, the first JSON media type. Only JSON responses are checked; a
//! documented body without a schema checks nothing.
//!
//! Reported: at most [`MAX_VIOLATIONS`] per body, deepest first, one per
//! (location, keyword), so sixteen items with the same wrong field are one.
//!
//! Compiling: on the first check, every response schema of the API becomes a
//! property of one root sharing one `$defs`, and one validator is compiled for
//! all of them (a body is checked as `{"<op>.<response>.<media>": body}`). The
//! validator compiles each named schema once per validator, so one validator per
//! response recompiled the shared ones each time: Stripe's 767 response schemas
//! took 48 s that way and take 0.1 s together. Should the whole set fail to
//! compile, each schema is compiled alone when first needed (patterns stripped on
//! a second try), and the ones that still fail are skipped with a warning.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use indexmap::IndexMap;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, ValidationError, Validator};
use serde::Serialize;
use serde_json::{json, Map, Number, Value};

use crate::execution::JSON_ITEMS;
use crate::model::{is_json_mime, Api, Schema, SchemaType};

/// Violations reported per body at most.
pub const MAX_VIOLATIONS: usize = 5;

/// One way a response body breaks its documented schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// JSON pointer into the body (`/0/price`); for `required`, the missing member.
    pub pointer: String,
    /// The pointer with array indexes replaced by `*` (`/*/price`), for fault signatures.
    pub location: String,
    /// The JSON Schema keyword that failed (`type`, `required`, `enum`, …).
    pub keyword: String,
    /// A short sentence for people: `/price: "12.50" is not of type number`.
    pub message: String,
}

/// (operation index, response index, media type index) in the model's maps.
type Key = (usize, usize, usize);

/// The compiled response-body validators of one API, built on first use.
pub struct ResponseSchemas {
    /// One validator for all response schemas, compiled on the first check.
    whole: OnceLock<Option<Validator>>,
    /// Named schemas converted, with and without patterns (index 0 keeps them).
    defs: [OnceLock<Defs>; 2],
    /// One validator per response schema, used only when the whole set did not
    /// compile; `None` when that schema could not be compiled either.
    single: Mutex<HashMap<Key, Option<Arc<Validator>>>>,
    /// Whether each pattern seen compiles on its own.
    patterns: Mutex<HashMap<String, bool>>,
    warnings: Mutex<Vec<String>>,
}

/// The named schemas as JSON Schema, in `api.schemas` order.
struct Defs {
    values: Vec<Value>,
    /// The named schemas each one refers to directly.
    refs: Vec<Vec<usize>>,
}

impl std::fmt::Debug for ResponseSchemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseSchemas")
            .field("compiled", &self.whole.get().is_some())
            .finish_non_exhaustive()
    }
}

/// The root property under which the whole validator holds a response schema.
fn property(&(o, r, m): &Key) -> String {
    format!("{o}.{r}.{m}")
}

/// Where the violations of one body come from.
enum Compiled<'a> {
    /// The whole validator, with the property the body goes under.
    Whole(&'a Validator, String),
    /// A validator for this response schema alone.
    Single(Arc<Validator>),
}

impl ResponseSchemas {
    /// Validators for `api`'s responses; nothing is converted or compiled until used.
    pub fn new(_api: &Api) -> ResponseSchemas {
        ResponseSchemas {
            whole: OnceLock::new(),
            defs: [OnceLock::new(), OnceLock::new()],
            single: Mutex::new(HashMap::new()),
            patterns: Mutex::new(HashMap::new()),
            warnings: Mutex::new(Vec::new()),
        }
    }

    /// The ways `body`, answered with `status` and `content_type` by operation `op`
    /// (its index in `api.operations`), breaks the documented schema: at most
    /// [`MAX_VIOLATIONS`], deepest first, one per location and keyword.
    pub fn check(
        &self,
        api: &Api,
        op: usize,
        status: u16,
        content_type: Option<&str>,
        body: &Value,
    ) -> Vec<Violation> {
        let Some(key) = select(api, op, status, content_type) else {
            return Vec::new();
        };
        match self.validator(api, key) {
            Some(Compiled::Whole(v, name)) => {
                // The whole validator checks `{name: body}`; paths lose the prefix.
                let mut wrapper = Map::new();
                wrapper.insert(name.clone(), body.clone());
                violations(v, &Value::Object(wrapper), &format!("/{name}"), body)
            }
            Some(Compiled::Single(v)) => violations(&v, body, "", body),
            None => Vec::new(),
        }
    }

    /// What is not checked: response schemas that did not compile, and patterns
    /// the regex engine rejects (dropped, the rest of their schema still checked).
    pub fn warnings(&self) -> Vec<String> {
        let mut out = self.warnings.lock().map(|w| w.clone()).unwrap_or_default();
        if let Ok(patterns) = self.patterns.lock() {
            let mut bad: Vec<&String> = patterns
                .iter()
                .filter(|(_, ok)| !**ok)
                .map(|(p, _)| p)
                .collect();
            bad.sort();
            out.extend(bad.into_iter().map(|p| {
                format!(
                    "pattern {} is not checked: the regex engine rejects it",
                    cut(&json!(p).to_string(), 80)
                )
            }));
        }
        out
    }

    /// Compiles every response schema of `api` now; returns (compiled, not compiled),
    /// not counting bodies without a schema or not in JSON.
    pub fn compile_all(&self, api: &Api) -> (usize, usize) {
        let (mut ok, mut failed) = (0, 0);
        for (o, op) in api.operations.iter().enumerate() {
            for (r, response) in op.responses.values().enumerate() {
                for (m, (mime, schema)) in response.content.iter().enumerate() {
                    if schema.is_empty() || !is_json_mime(mime) {
                        continue;
                    }
                    match self.validator(api, (o, r, m)) {
                        Some(_) => ok += 1,
                        None => failed += 1,
                    }
                }
            }
        }
        (ok, failed)
    }

    /// The validator for one response schema, compiled on first use.
    fn validator(&self, api: &Api, key: Key) -> Option<Compiled<'_>> {
        let (o, r, m) = key;
        let schema = api
            .operations
            .get(o)?
            .responses
            .get_index(r)?
            .1
            .content
            .get_index(m)?
            .1;
        if schema.is_empty() {
            return None;
        }
        if let Some(whole) = self.whole.get_or_init(|| self.compile_whole(api)) {
            return Some(Compiled::Whole(whole, property(&key)));
        }
        // Held while compiling: runs are single-threaded, and a second caller
        // should wait for the result rather than compile the same schema again.
        let mut single = self.single.lock().ok()?;
        if let Some(v) = single.get(&key) {
            return v.clone().map(Compiled::Single);
        }
        let v = self.compile(api, key).map(Arc::new);
        single.insert(key, v.clone());
        v.map(Compiled::Single)
    }

    /// Every response schema as a property of one root, sharing `$defs`: jsonschema
    /// compiles each named schema once per validator, so one validator per response
    /// recompiled the shared ones every time (Stripe: 48 s against 0.1 s).
    fn compile_whole(&self, api: &Api) -> Option<Validator> {
        let defs = self.defs[0].get_or_init(|| self.convert_defs(api, true));
        let mut props = Map::new();
        let mut refs = Vec::new();
        {
            let mut cache = self.patterns.lock().ok()?;
            for (o, op) in api.operations.iter().enumerate() {
                for (r, response) in op.responses.values().enumerate() {
                    for (m, schema) in response.content.values().enumerate() {
                        if schema.is_empty() {
                            continue;
                        }
                        let mut conv = Converter::new(api, Some(&mut *cache));
                        props.insert(property(&(o, r, m)), conv.convert(schema));
                        refs.extend(conv.refs);
                    }
                }
            }
        }
        if props.is_empty() {
            return None;
        }
        let root = with_defs(api, json!({ "properties": props }), &refs, defs);
        // On failure each schema is compiled alone, to find and skip the bad ones.
        options().build(&root).ok()
    }

    fn compile(&self, api: &Api, (o, r, m): Key) -> Option<Validator> {
        let op = api.operations.get(o)?;
        let (status_key, response) = op.responses.get_index(r)?;
        let (mime, schema) = response.content.get_index(m)?;
        let mut error = String::new();
        for (i, keep_patterns) in [true, false].into_iter().enumerate() {
            let defs = self.defs[i].get_or_init(|| self.convert_defs(api, keep_patterns));
            let (root, had_patterns) = {
                let mut cache = self.patterns.lock().ok()?;
                let mut conv = Converter::new(api, keep_patterns.then_some(&mut *cache));
                let root = conv.convert(schema);
                (with_defs(api, root, &conv.refs, defs), conv.had_patterns)
            };
            match options().build(&root) {
                Ok(v) => return Some(v),
                Err(e) => error = e.to_string(),
            }
            if !had_patterns {
                // Stripping patterns from a schema without any cannot help.
                break;
            }
        }
        if let Ok(mut w) = self.warnings.lock() {
            w.push(format!(
                "{} {status_key} {mime}: response schema not checked: {}",
                op.name,
                error.lines().next().unwrap_or("")
            ));
        }
        None
    }

    fn convert_defs(&self, api: &Api, keep_patterns: bool) -> Defs {
        let mut cache = self.patterns.lock().unwrap_or_else(|e| e.into_inner());
        let mut values = Vec::with_capacity(api.schemas.len());
        let mut refs = Vec::with_capacity(api.schemas.len());
        for schema in api.schemas.values() {
            let mut conv = Converter::new(api, keep_patterns.then_some(&mut *cache));
            values.push(conv.convert(schema));
            refs.push(conv.refs);
        }
        Defs { values, refs }
    }
}

fn options() -> jsonschema::ValidationOptions<'static> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(false)
}

/// `root` with the named schemas it reaches (and only those) under `$defs`: a
/// schema compiled alone then carries only what it needs.
fn with_defs(api: &Api, root: Value, direct: &[usize], defs: &Defs) -> Value {
    let Value::Object(mut root) = root else {
        return root;
    };
    let mut seen = vec![false; defs.values.len()];
    let mut stack: Vec<usize> = direct.to_vec();
    let mut reached = Vec::new();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        reached.push(i);
        stack.extend(defs.refs[i].iter().copied());
    }
    if reached.is_empty() {
        return Value::Object(root);
    }
    reached.sort_unstable();
    let mut map = Map::new();
    for i in reached {
        let (name, _) = api.schemas.get_index(i).expect("index of a named schema");
        map.insert(name.clone(), defs.values[i].clone());
    }
    root.insert("$defs".into(), Value::Object(map));
    Value::Object(root)
}

/// `#/$defs/<name>` as a URI fragment: JSON-pointer escaped, then percent-encoded
/// (names such as `Page«Pet»` or `My Schema` are not valid in a URI as they are).
fn def_ref(name: &str) -> String {
    let token = name.replace('~', "~0").replace('/', "~1");
    let mut out = String::from("#/$defs/");
    for b in token.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Model schema → JSON Schema 2020-12, collecting the named schemas referred to.
struct Converter<'a> {
    api: &'a Api,
    /// Pattern → compiles; `None` strips every pattern.
    patterns: Option<&'a mut HashMap<String, bool>>,
    refs: Vec<usize>,
    had_patterns: bool,
}

impl<'a> Converter<'a> {
    fn new(api: &'a Api, patterns: Option<&'a mut HashMap<String, bool>>) -> Converter<'a> {
        Converter {
            api,
            patterns,
            refs: Vec::new(),
            had_patterns: false,
        }
    }

    fn convert(&mut self, s: &Schema) -> Value {
        if let Some(name) = &s.reference {
            // References carry nothing else (see `Schema`); an unknown name is `any`.
            return match self.api.schemas.get_index_of(name) {
                Some(i) => {
                    self.refs.push(i);
                    json!({ "$ref": def_ref(name) })
                }
                None => json!({}),
            };
        }
        let mut out = Map::new();
        let nullable = s.nullable();
        // `[null]` beside alternatives is "nullable, else one of these": the null
        // member added to `anyOf` below says it, and a `type` would forbid the rest.
        let null_and_alternatives = s.types == [SchemaType::Null] && !s.alternatives.is_empty();
        if !s.types.is_empty() && !null_and_alternatives {
            let mut types: Vec<Value> = Vec::new();
            for t in &s.types {
                let v = json!(t.as_str());
                if !types.contains(&v) {
                    types.push(v);
                }
            }
            out.insert("type".into(), Value::Array(types));
        }
        let mut values: Vec<Value> = s
            .enum_values
            .iter()
            .filter(|v| value_allowed(s, v))
            .cloned()
            .collect();
        if !values.is_empty() {
            // A nullable enum without `null` listed still allows null (OpenAPI 3.0
            // users write it that way and servers send null).
            if nullable && !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
            out.insert("enum".into(), Value::Array(values));
        }
        if let Some(n) = s.minimum.and_then(number) {
            let k = if s.exclusive_minimum {
                "exclusiveMinimum"
            } else {
                "minimum"
            };
            out.insert(k.into(), n);
        }
        if let Some(n) = s.maximum.and_then(number) {
            let k = if s.exclusive_maximum {
                "exclusiveMaximum"
            } else {
                "maximum"
            };
            out.insert(k.into(), n);
        }
        // The validator divides decimals exactly (`12.34` is a multiple of `0.01`).
        if let Some(m) = s.multiple_of.filter(|m| *m > 0.0).and_then(number) {
            out.insert("multipleOf".into(), m);
        }
        if let Some(n) = s.min_length {
            out.insert("minLength".into(), json!(n));
        }
        if let Some(n) = s.max_length {
            out.insert("maxLength".into(), json!(n));
        }
        if let Some(p) = &s.pattern {
            if self.pattern_compiles(p) {
                out.insert("pattern".into(), json!(p));
            }
        }
        if let Some(n) = s.min_items.filter(|n| *n <= JSON_ITEMS as u64) {
            out.insert("minItems".into(), json!(n));
        }
        if let Some(n) = s.max_items {
            out.insert("maxItems".into(), json!(n));
        }
        if s.unique_items {
            out.insert("uniqueItems".into(), json!(true));
        }
        if let Some(items) = s.items.as_deref().filter(|i| !i.is_empty()) {
            out.insert("items".into(), self.convert(items));
        }
        if !s.properties.is_empty() {
            let mut props = Map::new();
            for (name, p) in &s.properties {
                props.insert(name.clone(), self.convert(p));
            }
            out.insert("properties".into(), Value::Object(props));
        }
        // Deduplicated: descriptions repeat names (allOf parts listing the same
        // field), and the meta-schema rejects a `required` with repeats.
        let mut required: Vec<Value> = Vec::new();
        for name in &s.required {
            let v = json!(name);
            if !self.write_only(&s.properties, name) && !required.contains(&v) {
                required.push(v);
            }
        }
        if !required.is_empty() {
            out.insert("required".into(), Value::Array(required));
        }
        if let Some(ap) = s.additional_properties.as_deref().filter(|a| !a.is_empty()) {
            out.insert("additionalProperties".into(), self.convert(ap));
        }
        if !s.alternatives.is_empty() {
            // `anyOf` even for `oneOf`: see the module table.
            let mut alts: Vec<Value> = s.alternatives.iter().map(|a| self.convert(a)).collect();
            if nullable {
                alts.push(json!({ "type": "null" }));
            }
            out.insert("anyOf".into(), Value::Array(alts));
        }
        Value::Object(out)
    }

    /// Whether property `name` is write-only, directly or through its named schema.
    fn write_only(&self, props: &IndexMap<String, Schema>, name: &str) -> bool {
        props
            .get(name)
            .is_some_and(|p| p.write_only || self.api.resolve(p).write_only)
    }

    fn pattern_compiles(&mut self, pattern: &str) -> bool {
        let Some(cache) = self.patterns.as_deref_mut() else {
            return false;
        };
        self.had_patterns = true;
        if let Some(ok) = cache.get(pattern) {
            return *ok;
        }
        let ok = options().build(&json!({ "pattern": pattern })).is_ok();
        cache.insert(pattern.to_string(), ok);
        ok
    }
}

/// Whether an enumerated value is of one of the schema's types.
fn value_allowed(s: &Schema, v: &Value) -> bool {
    let t = match v {
        Value::Null => return true,
        Value::Bool(_) => SchemaType::Boolean,
        Value::String(_) => SchemaType::String,
        Value::Array(_) => SchemaType::Array,
        Value::Object(_) => SchemaType::Object,
        Value::Number(n) => {
            if s.allows(SchemaType::Number) {
                return true;
            }
            let integral = n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0);
            return integral && s.allows(SchemaType::Integer);
        }
    };
    s.allows(t)
}

/// A JSON number for a bound, written as an integer when it is one (clearer messages).
fn number(f: f64) -> Option<Value> {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        return Some(json!(f as i64));
    }
    Number::from_f64(f).map(Value::Number)
}

/// The (response, media type) of `op` that applies to a response, as indexes.
fn select(api: &Api, op: usize, status: u16, content_type: Option<&str>) -> Option<Key> {
    let responses = &api.operations.get(op)?.responses;
    let code = status.to_string();
    let r = responses
        .get_index_of(&code)
        .or_else(|| {
            responses.keys().position(|k| {
                k.len() == 3 && k[1..].eq_ignore_ascii_case("XX") && k[..1] == code[..1]
            })
        })
        .or_else(|| {
            responses
                .keys()
                .position(|k| k.eq_ignore_ascii_case("default"))
        })?;
    let content = &responses[r].content;
    let m = media(content, content_type)?;
    Some((op, r, m))
}

/// The media type without parameters, lower-case.
fn essence(mime: &str) -> String {
    mime.split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// A JSON media type (`application/json`, `text/json`, `application/problem+json`).
fn is_json(essence: &str) -> bool {
    essence.ends_with("/json") || essence.ends_with("+json")
}

/// Which documented media type a response's `Content-Type` answers to.
fn media(content: &IndexMap<String, Schema>, content_type: Option<&str>) -> Option<usize> {
    let ct = content_type.map(essence).filter(|c| !c.is_empty());
    let Some(ct) = ct else {
        return content.keys().position(|k| is_json_mime(k));
    };
    if !is_json(&ct) {
        return None;
    }
    let keys: Vec<String> = content.keys().map(|k| essence(k)).collect();
    let family = format!("{}/*", ct.split('/').next().unwrap_or(""));
    keys.iter()
        .position(|k| *k == ct)
        .or_else(|| keys.iter().position(|k| *k == family))
        .or_else(|| keys.iter().position(|k| k == "*/*"))
        .or_else(|| keys.iter().position(|k| is_json(k)))
}

/// The violations of `instance` (which holds `body` at `prefix`), deepest first,
/// one per (location, keyword), at most [`MAX_VIOLATIONS`].
fn violations(
    validator: &Validator,
    instance: &Value,
    prefix: &str,
    body: &Value,
) -> Vec<Violation> {
    let mut all: Vec<Violation> = validator
        .iter_errors(instance)
        .filter(|e| !tool_failure(e))
        .map(|e| violation(&e, prefix, body))
        .collect();
    all.sort_by_cached_key(|v| {
        (
            std::cmp::Reverse(depth(&v.pointer)),
            order_key(&v.pointer),
            v.keyword.clone(),
            v.message.clone(),
        )
    });
    let mut seen = std::collections::HashSet::new();
    all.retain(|v| seen.insert((v.location.clone(), v.keyword.clone())));
    all.truncate(MAX_VIOLATIONS);
    all
}

/// Errors that say the check itself could not be done (a pattern that backtracks
/// too long, a reference that did not resolve): not the server's fault.
fn tool_failure(e: &ValidationError<'_>) -> bool {
    matches!(
        e.kind(),
        ValidationErrorKind::BacktrackLimitExceeded { .. }
            | ValidationErrorKind::RegexEngineFailure { .. }
            | ValidationErrorKind::Referencing(_)
    )
}

fn depth(pointer: &str) -> usize {
    pointer.matches('/').count()
}

/// Sorts `/2` before `/10`: numeric tokens by value, others by text after them.
fn order_key(pointer: &str) -> Vec<(u8, u64, String)> {
    pointer
        .split('/')
        .skip(1)
        .map(|t| match t.parse::<u64>() {
            Ok(n) => (0, n, String::new()),
            Err(_) => (1, 0, t.to_string()),
        })
        .collect()
}

fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn unescape_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// `pointer` with the tokens that index arrays of `body` replaced by `*`.
fn location(pointer: &str, body: &Value) -> String {
    let mut out = String::new();
    let mut at = Some(body);
    for token in pointer.split('/').skip(1) {
        out.push('/');
        match at {
            Some(Value::Array(items)) => {
                out.push('*');
                at = token.parse::<usize>().ok().and_then(|i| items.get(i));
            }
            Some(Value::Object(map)) => {
                out.push_str(token);
                at = map.get(&unescape_token(token));
            }
            _ => {
                out.push_str(token);
                at = None;
            }
        }
    }
    out
}

/// The error's instance path within the body (without the wrapper's `prefix`).
fn body_path<'e>(e: &'e ValidationError<'_>, prefix: &str) -> &'e str {
    let path = e.instance_path().as_str();
    path.strip_prefix(prefix).unwrap_or(path)
}

fn violation(e: &ValidationError<'_>, prefix: &str, body: &Value) -> Violation {
    let path = body_path(e, prefix).to_string();
    let pointer = match e.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            format!("{path}/{}", escape_token(&name))
        }
        _ => path,
    };
    Violation {
        location: location(&pointer, body),
        pointer,
        keyword: e.kind().keyword().to_string(),
        message: message(e, prefix, true),
    }
}

/// `value` as compact JSON, cut to a readable length.
fn short(value: &Value) -> String {
    cut(&value.to_string(), 60)
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max).collect();
    s.push('…');
    s
}

/// A short sentence: where, what was found, what was expected.
fn message(e: &ValidationError<'_>, prefix: &str, closest: bool) -> String {
    let path = body_path(e, prefix);
    let at = if path.is_empty() { "body" } else { path };
    let v = short(e.instance());
    let len = |v: &Value| v.as_array().map_or(0, Vec::len);
    let text = match e.kind() {
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            format!("{v} is not of type {expected}")
        }
        ValidationErrorKind::Required { property } => {
            format!("required property {property} is missing")
        }
        ValidationErrorKind::Enum { options } => {
            format!("{v} is not one of {}", cut(&options.to_string(), 80))
        }
        ValidationErrorKind::Minimum { limit } => format!("{v} is less than the minimum {limit}"),
        ValidationErrorKind::Maximum { limit } => {
            format!("{v} is greater than the maximum {limit}")
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("{v} is not greater than the exclusive minimum {limit}")
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!("{v} is not less than the exclusive maximum {limit}")
        }
        ValidationErrorKind::MinLength { limit } => {
            format!("{v} is shorter than {limit} characters")
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("{v} is longer than {limit} characters")
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!("{v} does not match the pattern {}", cut(pattern, 80))
        }
        ValidationErrorKind::MinItems { limit } => format!(
            "the array has {} items, fewer than {limit}",
            len(e.instance())
        ),
        ValidationErrorKind::MaxItems { limit } => format!(
            "the array has {} items, more than {limit}",
            len(e.instance())
        ),
        ValidationErrorKind::UniqueItems => "the array repeats an item".to_string(),
        ValidationErrorKind::AnyOf { context } => {
            let mut text = format!("{v} matches none of the {} alternatives", context.len());
            if closest {
                if let Some(best) = closest_error(context, e.instance_path().as_str()) {
                    text.push_str(&format!(" (closest: {})", message(best, prefix, false)));
                }
            }
            text
        }
        _ => cut(&e.to_string(), 120),
    };
    format!("{at}: {text}")
}

/// The most telling error of the alternative that came closest: one whose own
/// type matched, with the fewest errors.
fn closest_error<'e>(
    context: &'e [Vec<ValidationError<'static>>],
    path: &str,
) -> Option<&'e ValidationError<'static>> {
    let wrong_type = |errors: &[ValidationError<'static>]| {
        errors.iter().any(|e| {
            matches!(e.kind(), ValidationErrorKind::Type { .. })
                && e.instance_path().as_str() == path
        })
    };
    let best = context
        .iter()
        .filter(|errors| !errors.is_empty())
        .min_by_key(|errors| (wrong_type(errors), errors.len()))?;
    best.iter()
        .max_by_key(|e| depth(e.instance_path().as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn demo() -> Api {
        crate::spec::load_text(crate::demo::OPENAPI_YAML, Path::new("d.yaml"))
            .unwrap()
            .api
    }

    fn load(text: &str, name: &str) -> Api {
        let loaded = crate::spec::load_text(text, Path::new(name)).unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        loaded.api
    }

    fn op(api: &Api, name: &str) -> usize {
        api.operations.iter().position(|o| o.name == name).unwrap()
    }

    fn book(price: Value) -> Value {
        json!({"id": 1, "authorId": 1, "title": "T", "price": price, "stock": 3,
               "tags": ["a"], "status": "available"})
    }

    const JSON: Option<&str> = Some("application/json; charset=utf-8");

    #[test]
    fn a_text_price_is_a_type_violation_at_price() {
        let api = demo();
        let rs = ResponseSchemas::new(&api);
        let get = op(&api, "getBook");
        let v = rs.check(&api, get, 200, JSON, &book(json!("12.50")));
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].pointer, "/price");
        assert_eq!(v[0].location, "/price");
        assert_eq!(v[0].keyword, "type");
        assert_eq!(v[0].message, "/price: \"12.50\" is not of type number");
        assert!(rs
            .check(&api, get, 200, JSON, &book(json!(12.5)))
            .is_empty());
        assert!(rs.check(&api, get, 200, None, &book(json!(12))).is_empty());
        assert!(rs.warnings().is_empty());
    }

    #[test]
    fn array_indexes_become_stars_in_the_location() {
        let api = demo();
        let rs = ResponseSchemas::new(&api);
        let list = op(&api, "listBooks");
        let mut books: Vec<Value> = (0..6).map(|_| book(json!(3.5))).collect();
        books[3]["price"] = json!("3.50");
        let v = rs.check(&api, list, 200, JSON, &Value::Array(books.clone()));
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].pointer, "/3/price");
        assert_eq!(v[0].location, "/*/price");
        // The same fault on several items is one violation; different faults are more.
        books[4]["price"] = json!("1");
        books[5].as_object_mut().unwrap().remove("title");
        books[1]["status"] = json!("lost");
        let v = rs.check(&api, list, 200, JSON, &Value::Array(books));
        let found: Vec<(&str, &str)> = v
            .iter()
            .map(|v| (v.location.as_str(), v.keyword.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("/*/status", "enum"),
                ("/*/price", "type"),
                ("/*/title", "required")
            ]
        );
        assert_eq!(v[2].pointer, "/5/title");
        assert_eq!(v[2].message, "/5: required property \"title\" is missing");
    }

    #[test]
    fn status_and_media_type_choose_the_schema() {
        let api = demo();
        let rs = ResponseSchemas::new(&api);
        let get = op(&api, "getBook");
        let error_body = json!({"message": "no such book"});
        // 404 documents Error: a book-shaped error body breaks it, a message does not.
        assert!(rs.check(&api, get, 404, JSON, &error_body).is_empty());
        let v = rs.check(&api, get, 404, JSON, &json!({"msg": 1}));
        assert_eq!(v[0].keyword, "required");
        // A problem+json answer is held to the JSON schema.
        let v = rs.check(&api, get, 404, Some("application/problem+json"), &json!({}));
        assert_eq!(v.len(), 1);
        // Undocumented statuses and non-JSON bodies check nothing.
        assert!(rs.check(&api, get, 418, JSON, &json!(1)).is_empty());
        assert!(rs
            .check(&api, get, 200, Some("text/plain"), &json!(1))
            .is_empty());
        assert!(rs.check(&api, 999, 200, JSON, &json!(1)).is_empty());
    }

    #[test]
    fn ranges_default_and_wildcards() {
        let api = load(
            r##"
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a:
    get:
      responses:
        "200":
          description: ok
          content:
            application/*: {schema: {type: integer}}
            text/plain: {schema: {type: string}}
        "2xx":
          description: ok
          content:
            "*/*": {schema: {type: boolean}}
        default:
          description: err
          content:
            application/vnd.api+json: {schema: {type: object, required: [errors]}}
"##,
            "r.yaml",
        );
        let rs = ResponseSchemas::new(&api);
        assert!(rs.check(&api, 0, 200, JSON, &json!(3)).is_empty());
        assert_eq!(rs.check(&api, 0, 200, JSON, &json!("3"))[0].keyword, "type");
        assert!(rs.check(&api, 0, 201, JSON, &json!(true)).is_empty());
        assert_eq!(rs.check(&api, 0, 201, JSON, &json!(1)).len(), 1);
        assert!(rs
            .check(&api, 0, 500, JSON, &json!({"errors": []}))
            .is_empty());
        assert_eq!(
            rs.check(&api, 0, 500, JSON, &json!({}))[0].keyword,
            "required"
        );
        assert_eq!(
            rs.check(&api, 0, 500, None, &json!({}))[0].message,
            "body: required property \"errors\" is missing"
        );
    }

    #[test]
    fn openapi_30_nullable_write_only_and_overlapping_one_of() {
        let api = load(
            r##"
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /users/{id}:
    get:
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/User"}
components:
  schemas:
    Secret: {type: string, writeOnly: true}
    User:
      type: object
      required: [id, name, password, token, pet, kind]
      properties:
        id: {type: integer, format: int64, multipleOf: 1}
        name: {type: string, nullable: true, maxLength: 5}
        password: {type: string, writeOnly: true}
        token: {$ref: "#/components/schemas/Secret"}
        kind: {type: string, enum: [a, b], nullable: true}
        score: {type: number, multipleOf: 0.01, minimum: 0, exclusiveMinimum: true}
        pet:
          nullable: true
          type: object
          oneOf:
            - {type: object, properties: {name: {type: string}}}
            - {type: object, properties: {age: {type: integer}}}
        code: {type: string, pattern: "^(?<year>\\d{4})$"}
        list: {type: array, minItems: 20, maxItems: 30, items: {type: integer}}
"##,
            "n.yaml",
        );
        let rs = ResponseSchemas::new(&api);
        let ok = [
            json!({"id": 1, "name": null, "pet": null, "kind": null}),
            json!({"id": 3.0, "name": "bob", "pet": {"name": "x", "age": 2}, "kind": "a",
                   "score": 12.34, "list": [1, 2, 3], "code": "2024"}),
            json!({"id": 1, "name": "x", "pet": {}, "kind": "b", "password": "p", "extra": 1}),
        ];
        for body in &ok {
            assert_eq!(rs.check(&api, 0, 200, JSON, body), [], "{body}");
        }
        let cents = json!({"id": 1, "name": null, "pet": null, "kind": null, "score": 12.345});
        assert_eq!(
            rs.check(&api, 0, 200, JSON, &cents)[0].keyword,
            "multipleOf"
        );
        let v = rs.check(
            &api,
            0,
            200,
            JSON,
            &json!({"id": "1", "name": "toolong", "pet": 3, "kind": "c", "score": 0}),
        );
        let found: Vec<(&str, &str)> = v
            .iter()
            .map(|v| (v.pointer.as_str(), v.keyword.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("/id", "type"),
                ("/kind", "enum"),
                ("/name", "maxLength"),
                ("/pet", "anyOf"),
                ("/pet", "type"),
            ]
        );
        assert!(rs.warnings().is_empty(), "{:?}", rs.warnings());
    }

    #[test]
    fn swagger_2_and_openapi_31() {
        let api = load(
            r##"
swagger: "2.0"
info: {title: t, version: "1"}
produces: [application/json, application/xml]
paths:
  /pets:
    get:
      responses:
        "200":
          description: ok
          schema:
            type: array
            items: {$ref: "#/definitions/Pet~1Thing"}
definitions:
  Pet/Thing:
    type: object
    required: [id]
    properties:
      id: {type: integer, x-nullable: true}
      tag: {type: string, format: uuid}
      kids: {type: array, items: {$ref: "#/definitions/Pet~1Thing"}}
"##,
            "s.yaml",
        );
        let rs = ResponseSchemas::new(&api);
        let body = json!([{"id": null, "tag": "not-a-uuid", "kids": [{"id": 2}]}]);
        assert!(rs.check(&api, 0, 200, JSON, &body).is_empty());
        let v = rs.check(
            &api,
            0,
            200,
            JSON,
            &json!([{"id": 1, "kids": [{"id": "2"}]}]),
        );
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].location, "/*/kids/*/id");
        assert!(rs
            .check(&api, 0, 200, Some("application/xml"), &json!(1))
            .is_empty());

        let api = load(
            r##"
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                required: [name, n]
                properties:
                  name: {type: [string, "null"]}
                  n: {oneOf: [{type: integer, exclusiveMaximum: 10}, {type: "null"}]}
                  c: {const: x}
                  w: {$ref: "#/components/schemas/Page«Pet»"}
components:
  schemas:
    Page«Pet»: {type: object, properties: {size: {type: integer}}}
"##,
            "t.yaml",
        );
        let rs = ResponseSchemas::new(&api);
        for body in [
            json!({"name": null, "n": null}),
            json!({"name": "x", "n": 9, "c": "x", "w": {"size": 1}}),
        ] {
            assert_eq!(rs.check(&api, 0, 200, JSON, &body), [], "{body}");
        }
        let v = rs.check(
            &api,
            0,
            200,
            JSON,
            &json!({"name": 1, "n": 10, "c": "y", "w": {"size": "1"}}),
        );
        let found: Vec<(&str, &str)> = v
            .iter()
            .map(|v| (v.pointer.as_str(), v.keyword.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("/w/size", "type"),
                ("/c", "enum"),
                ("/n", "anyOf"),
                ("/name", "type")
            ]
        );
        assert!(
            v[2].message.contains("closest: /n: 10 is not less than"),
            "{}",
            v[2].message
        );
    }

    #[test]
    fn bad_patterns_are_dropped_and_the_rest_still_checked() {
        let api = load(
            r##"
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  a: {type: string, pattern: "^[a-z]+$"}
                  b: {type: string, pattern: "(unclosed"}
                  c: {type: integer}
"##,
            "p.yaml",
        );
        let rs = ResponseSchemas::new(&api);
        assert!(rs
            .check(&api, 0, 200, JSON, &json!({"a": "abc", "b": "x"}))
            .is_empty());
        let v = rs.check(&api, 0, 200, JSON, &json!({"a": "ABC", "c": "1"}));
        let kw: Vec<&str> = v.iter().map(|v| v.keyword.as_str()).collect();
        assert_eq!(kw, ["pattern", "type"]);
        assert_eq!(rs.compile_all(&api), (1, 0));
        assert_eq!(
            rs.warnings(),
            ["pattern \"(unclosed\" is not checked: the regex engine rejects it"]
        );
    }

    #[test]
    fn at_most_five_violations_in_a_stable_order() {
        let api = demo();
        let rs = ResponseSchemas::new(&api);
        let get = op(&api, "getBook");
        let bad = json!({"id": "x", "authorId": "x", "title": 1, "price": "x", "stock": "x",
                         "tags": "x", "status": 1});
        let v = rs.check(&api, get, 200, JSON, &bad);
        assert_eq!(v.len(), MAX_VIOLATIONS);
        assert_eq!(v, rs.check(&api, get, 200, JSON, &bad));
        let pointers: Vec<&str> = v.iter().map(|v| v.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            ["/authorId", "/id", "/price", "/status", "/status"]
        );
    }

    #[test]
    fn one_validator_per_response_when_the_whole_set_does_not_compile() {
        let api = demo();
        let rs = ResponseSchemas::new(&api);
        rs.whole.set(None).unwrap();
        let (get, list) = (op(&api, "getBook"), op(&api, "listBooks"));
        let v = rs.check(&api, get, 200, JSON, &book(json!("12.50")));
        assert_eq!(v[0].message, "/price: \"12.50\" is not of type number");
        let v = rs.check(&api, list, 200, JSON, &json!([book(json!(1)), {"id": 2}]));
        assert_eq!(v[0].location, "/*/authorId");
        let counts = rs.compile_all(&api);
        assert_eq!(counts, ResponseSchemas::new(&api).compile_all(&api));
        assert_eq!(counts.1, 0);
    }

    #[test]
    fn a_pattern_the_engine_gives_up_on_is_no_violation() {
        let v = options()
            .with_pattern_options(jsonschema::PatternOptions::fancy_regex().backtrack_limit(1))
            .build(&json!({"properties": {"a": {"pattern": "(?<=ab)c"}, "b": {"type": "string"}}}))
            .unwrap();
        let body = json!({"a": "abc", "b": 1});
        let found: Vec<String> = violations(&v, &body, "", &body)
            .into_iter()
            .map(|v| v.pointer)
            .collect();
        assert_eq!(found, ["/b"]);
    }

    #[test]
    fn null_beside_alternatives_means_nullable() {
        let mut api = demo();
        let s = Schema {
            types: vec![SchemaType::Null],
            alternatives: vec![Schema::of_type(SchemaType::Integer), Schema::named("Error")],
            ..Schema::default()
        };
        let get = op(&api, "getBook");
        api.operations[get].responses["200"].content[0] = s;
        let rs = ResponseSchemas::new(&api);
        for ok in [json!(null), json!(3), json!({"message": "m"})] {
            assert_eq!(rs.check(&api, get, 200, JSON, &ok), [], "{ok}");
        }
        assert_eq!(
            rs.check(&api, get, 200, JSON, &json!("x"))[0].keyword,
            "anyOf"
        );
    }

    #[test]
    fn def_refs_are_valid_uri_fragments() {
        assert_eq!(def_ref("a/b~c d"), "#/$defs/a~1b~0c%20d");
        assert_eq!(def_ref("Page«Pet»"), "#/$defs/Page%C2%ABPet%C2%BB");
    }

    #[test]
    fn response_schemas_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<ResponseSchemas>();
    }
}
