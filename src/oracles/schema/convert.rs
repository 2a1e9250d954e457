//! The model's schemas as JSON Schema 2020-12: named schemas under `$defs`,
//! nullable and write-only handled, `oneOf` read as `anyOf`, patterns that do
//! not compile dropped, enums the schema's own types contradict dropped.

use std::collections::HashMap;

use serde_json::{Map, Number, Value, json};

use indexmap::IndexMap;

use super::{Defs, options};
use crate::execution::JSON_ITEMS;
use crate::model::{Api, Schema, SchemaType};

/// `root` with the named schemas it reaches (and only those) under `$defs`: a
/// schema compiled alone then carries only what it needs.
pub(super) fn with_defs(api: &Api, root: Value, direct: &[usize], defs: &Defs) -> Value {
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
pub(super) fn def_ref(name: &str) -> String {
    let token = crate::model::text::pointer_token(name);
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
pub(super) struct Converter<'a> {
    pub(super) api: &'a Api,
    /// Pattern → compiles; `None` strips every pattern.
    pub(super) patterns: Option<&'a mut HashMap<String, bool>>,
    pub(super) refs: Vec<usize>,
    pub(super) had_patterns: bool,
}

impl<'a> Converter<'a> {
    pub(super) fn new(
        api: &'a Api,
        patterns: Option<&'a mut HashMap<String, bool>>,
    ) -> Converter<'a> {
        Converter {
            api,
            patterns,
            refs: Vec::new(),
            had_patterns: false,
        }
    }

    pub(super) fn convert(&mut self, s: &Schema) -> Value {
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
        if let Some(p) = &s.pattern
            && self.pattern_compiles(p)
        {
            out.insert("pattern".into(), json!(p));
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
    pub(super) fn write_only(&self, props: &IndexMap<String, Schema>, name: &str) -> bool {
        props
            .get(name)
            .is_some_and(|p| p.write_only || self.api.resolve(p).write_only)
    }

    pub(super) fn pattern_compiles(&mut self, pattern: &str) -> bool {
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
pub(super) fn value_allowed(s: &Schema, v: &Value) -> bool {
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
pub(super) fn number(f: f64) -> Option<Value> {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        return Some(json!(f as i64));
    }
    Number::from_f64(f).map(Value::Number)
}
