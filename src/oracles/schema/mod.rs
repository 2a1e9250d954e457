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
//! | minItems | the array is shorter, for limits up to [`JSON_ITEMS`](crate::execution::JSON_ITEMS) | the limit exceeds [`JSON_ITEMS`](crate::execution::JSON_ITEMS): bodies arrive with arrays cut at that many items |
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
use jsonschema::{Draft, Validator};
use serde::Serialize;
use serde_json::{Map, Value, json};

mod convert;
mod origin;
#[cfg(test)]
mod tests;
mod violations;

use convert::{Converter, with_defs};
use violations::{Origin, cut, violations};

use crate::model::{Api, Schema, is_json_mime};

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
    /// For a `type` violation, the types the schema allows there
    /// (`integer`, `number`, `string`, `boolean`, `array`, `object`, `null`).
    pub expected: Vec<String>,
    /// Where the description writes the schema that says what was broken
    /// (`#/components/schemas/Book/properties/price`; for `required`, the
    /// schema whose list names the member), when it is in the description's
    /// root file.
    pub schema: Option<String>,
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
    /// Answers found to break nothing, by response schema and a hash of
    /// the body's text (and its length): most answers repeat one seen
    /// before, and are judged once ([`ResponseSchemas::check_text`]).
    valid: Mutex<std::collections::HashSet<(Key, u64, usize)>>,
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
/// Distinct valid answers remembered at most (some 40 bytes each).
const MAX_VALID: usize = 8_192;

/// A hash of an answer's text, the same in every run.
fn fingerprint(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

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
            valid: Mutex::default(),
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
        let origin = |schema_prefix: String| Origin {
            api,
            key,
            start: std::cell::OnceCell::new(),
            schema_prefix,
        };
        match self.validator(api, key) {
            Some(Compiled::Whole(v, name)) => {
                // The whole validator checks `{name: body}`; paths lose the prefix.
                let mut wrapper = Map::new();
                wrapper.insert(name.clone(), body.clone());
                let origin = origin(format!("/properties/{name}"));
                violations(
                    v,
                    &Value::Object(wrapper),
                    &format!("/{name}"),
                    body,
                    &origin,
                )
            }
            Some(Compiled::Single(v)) => violations(&v, body, "", body, &origin(String::new())),
            None => Vec::new(),
        }
    }

    /// [`ResponseSchemas::check`] of a body parsed from `text`: an answer
    /// whose text broke nothing before is not checked again.
    pub fn check_text(
        &self,
        api: &Api,
        op: usize,
        status: u16,
        content_type: Option<&str>,
        body: &Value,
        text: &str,
    ) -> Vec<Violation> {
        let Some(key) = select(api, op, status, content_type) else {
            return Vec::new();
        };
        let seen = (key, fingerprint(text), text.len());
        if self.valid.lock().is_ok_and(|set| set.contains(&seen)) {
            return Vec::new();
        }
        let found = self.check(api, op, status, content_type, body);
        if found.is_empty()
            && let Ok(mut set) = self.valid.lock()
            && set.len() < MAX_VALID
        {
            set.insert(seen);
        }
        found
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

pub(super) fn options() -> jsonschema::ValidationOptions<'static> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(false)
}

/// The (response, media type) of `op` that applies to a response, as indexes.
pub(super) fn select(api: &Api, op: usize, status: u16, content_type: Option<&str>) -> Option<Key> {
    let responses = &api.operations.get(op)?.responses;
    let mut first = status;
    while first >= 10 {
        first /= 10;
    }
    let r = responses
        .keys()
        .position(|k| crate::oracles::conformance::is_code(k, status))
        .or_else(|| {
            responses.keys().position(|k| {
                k.len() == 3
                    && k.as_bytes()[0] == b'0' + first as u8
                    && k[1..].eq_ignore_ascii_case("XX")
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

/// A JSON media type (`application/json`, `text/json`, `application/problem+json`).
pub(super) fn is_json(essence: &str) -> bool {
    essence.ends_with("/json") || essence.ends_with("+json")
}

/// Which documented media type a response's `Content-Type` answers to.
pub(super) fn media(
    content: &IndexMap<String, Schema>,
    content_type: Option<&str>,
) -> Option<usize> {
    let ct = content_type
        .map(crate::oracles::conformance::essence_of)
        .filter(|c| !c.is_empty());
    let Some(ct) = ct else {
        return content.keys().position(|k| is_json_mime(k));
    };
    if !is_json(&ct) {
        return None;
    }
    let keys: Vec<std::borrow::Cow<'_, str>> = content
        .keys()
        .map(|k| crate::oracles::conformance::essence_of(k))
        .collect();
    let family = format!("{}/*", ct.split('/').next().unwrap_or(""));
    keys.iter()
        .position(|k| *k == ct)
        .or_else(|| keys.iter().position(|k| *k == family))
        .or_else(|| keys.iter().position(|k| k == "*/*"))
        .or_else(|| keys.iter().position(|k| is_json(k)))
}
