//! The fixes of schemas, one per broken keyword: a member no longer
//! required, a type widened or made nullable, enum values, bounds moved to
//! what was seen, an `anyOf` member added.

use serde_json::{Map, Value, json};

use super::{Fix, answers};
use crate::faults::Fault;
use crate::model::{SpecFormat, source};
use crate::oracles::json_type;

/// Where a schema was broken: the schema's pointer, the keyword, and for
/// `required` the member.
type Place = (String, String, Option<String>);

impl Fix<'_, '_> {
    pub(super) fn schemas(&mut self, faults: &[&Fault]) {
        let mut places: Vec<(Place, Vec<Option<Value>>)> = Vec::new();
        for f in faults {
            for ex in answers(self.seen, &[f]) {
                let Some(v) = self
                    .seen
                    .checker
                    .violations(self.seen.api, ex)
                    .into_iter()
                    .find(|v| {
                        f.signature
                            .ends_with(&format!(":{} {}", v.location, v.keyword))
                    })
                else {
                    continue;
                };
                let Some(schema) = v.schema.clone() else {
                    self.note("the schema is written in another file than the description's root");
                    continue;
                };
                let member = (v.keyword == "required").then(|| {
                    let last = v.pointer.rsplit('/').next().unwrap_or("");
                    last.replace("~1", "/").replace("~0", "~")
                });
                let value = ex.json().and_then(|b| b.pointer(&v.pointer)).cloned();
                let key = (schema, v.keyword.clone(), member);
                match places.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, values)) => values.push(value),
                    None => places.push((key, vec![value])),
                }
            }
        }
        if places.is_empty() && self.notes.is_empty() {
            self.note("the answers that showed it were not kept");
        }
        for ((schema, keyword, member), values) in places {
            let at = source::tokens(&schema);
            if self.editor.get(&at).is_none() {
                self.note(format!("{schema} was changed by an earlier action"));
                continue;
            }
            let values: Vec<Value> = values.into_iter().flatten().collect();
            match keyword.as_str() {
                "required" => self.not_required(&at, member.as_deref().unwrap_or_default()),
                "type" => self.types(&at, &values),
                "enum" => self.enum_values(&at, &values),
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    self.bound(&at, &keyword, &values)
                }
                "minLength" | "maxLength" | "minItems" | "maxItems" => {
                    self.size(&at, &keyword, &values)
                }
                "pattern" | "multipleOf" | "uniqueItems" => {
                    self.doing(format_args!(
                        "drop `{keyword}`, which the server's values break"
                    ));
                    self.editor.remove_keys(&at, &[keyword.as_str()], &self.why);
                }
                "anyOf" => self.alternative(&at, &values),
                other => self.note(format!("no change is written for `{other}`")),
            }
        }
    }

    fn not_required(&mut self, at: &[String], member: &str) {
        let mut list = at.to_vec();
        list.push("required".into());
        let names = self
            .editor
            .get(&list)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        self.doing(format_args!("{member:?} is not required"));
        if names.iter().all(|n| n.as_str() == Some(member)) {
            // OpenAPI 3.0 and Swagger 2 forbid an empty list.
            self.editor.remove_keys(at, &["required"], &self.why);
        } else {
            self.editor.remove_item(&list, member, &self.why);
        }
    }

    fn types(&mut self, at: &[String], values: &[Value]) {
        let seen: Vec<&str> = {
            let mut seen: Vec<&str> = values
                .iter()
                .filter(|v| !v.is_null())
                .map(|v| match v {
                    Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
                    v => json_type(v),
                })
                .collect();
            seen.sort_unstable();
            seen.dedup();
            // An integer among numbers is a number.
            if seen.contains(&"number") {
                seen.retain(|t| *t != "integer");
            }
            seen
        };
        if values.iter().any(Value::is_null) {
            self.nullable(at);
        }
        if !seen.is_empty() {
            self.widen(at, &seen);
        }
    }

    fn enum_values(&mut self, at: &[String], values: &[Value]) {
        if values.iter().any(Value::is_null) {
            self.nullable(at);
        }
        let node = self.editor.get(at).cloned().unwrap_or_default();
        let mut add: Vec<Value> = Vec::new();
        let listed = node.get("enum").and_then(Value::as_array).cloned();
        for v in values.iter().filter(|v| !v.is_null()) {
            let known =
                listed.as_ref().is_some_and(|l| l.contains(v)) || node.get("const") == Some(v);
            if !known && !add.contains(v) {
                add.push(v.clone());
            }
        }
        if add.is_empty() {
            return;
        }
        let listed: Vec<String> = add.iter().map(Value::to_string).collect();
        self.doing(format_args!("allow {}", listed.join(", ")));
        if let Some(c) = node.get("const").cloned() {
            self.editor.remove_keys(at, &["const"], &self.why);
            add.insert(0, c);
        }
        self.update(at, json!({ "enum": add }));
    }

    /// Null allowed at `at`, in the description's dialect.
    fn nullable(&mut self, at: &[String]) {
        let Some(node) = self.editor.get(at).cloned() else {
            return;
        };
        let format = self.format();
        self.doing("allow null");
        if let Some(r) = node.get("$ref").cloned() {
            // A `$ref`'s siblings are ignored: wrap it.
            self.editor.remove_keys(at, &["$ref"], &self.why);
            let wrapped = match format {
                SpecFormat::OpenApi31 => json!({ "anyOf": [{ "$ref": r }, { "type": "null" }] }),
                SpecFormat::Swagger2 => json!({ "allOf": [{ "$ref": r }], "x-nullable": true }),
                _ => json!({ "allOf": [{ "$ref": r }], "nullable": true }),
            };
            self.update(at, wrapped);
            return;
        }
        match format {
            SpecFormat::Swagger2 => {
                self.update(at, json!({ "x-nullable": true }));
            }
            SpecFormat::OpenApi31 => self.nullable_31(at, &node),
            _ => {
                self.update(at, json!({ "nullable": true }));
            }
        }
    }

    fn nullable_31(&mut self, at: &[String], node: &Value) {
        match node.get("type") {
            Some(Value::String(t)) => {
                let t = t.clone();
                self.editor.remove_keys(at, &["type"], &self.why);
                self.update(at, json!({ "type": [t, "null"] }));
            }
            Some(Value::Array(ts)) => {
                if !ts.iter().any(|t| t == "null") {
                    self.update(at, json!({ "type": ["null"] }));
                }
            }
            _ => {
                let choice = ["anyOf", "oneOf"]
                    .into_iter()
                    .find(|k| node.get(*k).is_some());
                if let Some(key) = choice {
                    self.update(at, json!({ key: [{ "type": "null" }] }));
                } else if node.get("allOf").is_some() {
                    // A type beside `allOf` meets the members' types: wrap.
                    let parts = node.get("allOf").cloned().unwrap_or_default();
                    self.editor.remove_keys(at, &["allOf"], &self.why);
                    self.update(
                        at,
                        json!({ "anyOf": [{ "allOf": parts }, { "type": "null" }] }),
                    );
                } else if node.get("properties").is_some()
                    || node.get("additionalProperties").is_some()
                {
                    self.update(at, json!({ "type": ["object", "null"] }));
                } else if node.get("items").is_some() {
                    self.update(at, json!({ "type": ["array", "null"] }));
                }
            }
        }
    }

    /// The types `seen` allowed at `at` besides the documented ones.
    fn widen(&mut self, at: &[String], seen: &[&str]) {
        let Some(node) = self.editor.get(at).cloned() else {
            return;
        };
        let declared: Vec<String> = match node.get("type") {
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        let allows = |t: &str| {
            declared
                .iter()
                .any(|d| d == t || (d == "number" && t == "integer"))
        };
        let new: Vec<&str> = seen.iter().copied().filter(|t| !allows(t)).collect();
        if new.is_empty() {
            return;
        }
        let format = self.format();
        self.doing(format_args!("allow {}", new.join(", ")));
        // An integer documented, a fraction seen: a number.
        if declared == ["integer"] && new == ["number"] && node.get("$ref").is_none() {
            match node.get("type") {
                Some(Value::String(_)) => {
                    self.update(at, json!({ "type": "number" }));
                }
                _ => {
                    self.editor.remove_keys(at, &["type"], &self.why);
                    self.update(at, json!({ "type": ["number"] }));
                }
            }
            return;
        }
        let composite = [
            "$ref",
            "properties",
            "items",
            "additionalProperties",
            "allOf",
        ]
        .iter()
        .any(|k| node.get(*k).is_some());
        match format {
            SpecFormat::OpenApi31 if node.get("$ref").is_none() && !declared.is_empty() => {
                let mut all: Vec<String> = declared.clone();
                all.extend(new.iter().map(|t| t.to_string()));
                if matches!(node.get("type"), Some(Value::Array(_))) {
                    let add: Vec<&str> = new.clone();
                    self.update(at, json!({ "type": add }));
                } else {
                    self.editor.remove_keys(at, &["type"], &self.why);
                    self.update(at, json!({ "type": all }));
                }
            }
            SpecFormat::Swagger2 if composite => self.note(format!(
                "Swagger 2 cannot say \"{} or {}\" of an object or array schema",
                declared.join("/"),
                new.join("/")
            )),
            SpecFormat::Swagger2 => {
                // No alternatives in Swagger 2: the type is left open.
                self.editor.remove_keys(at, &["type"], &self.why);
            }
            _ => self.either(at, &node, &new),
        }
    }

    /// OpenAPI 3: the schema at `at` becomes "the schema as it was, or one
    /// of `new`" (`anyOf`), its annotations kept outside.
    fn either(&mut self, at: &[String], node: &Value, new: &[&str]) {
        if node.get("anyOf").is_some() || node.get("oneOf").is_some() {
            self.note("the schema is already a choice of alternatives: which one should take the value is a judgment");
            return;
        }
        const KEEP: [&str; 11] = [
            "description",
            "title",
            "nullable",
            "example",
            "examples",
            "default",
            "readOnly",
            "writeOnly",
            "deprecated",
            "externalDocs",
            "xml",
        ];
        let Some(map) = node.as_object() else { return };
        let moved: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| !KEEP.contains(&k.as_str()) && !k.starts_with("x-"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let keys: Vec<&str> = moved.keys().map(String::as_str).collect();
        self.editor.remove_keys(at, &keys, &self.why);
        let mut members = vec![Value::Object(moved)];
        members.extend(new.iter().map(|t| json!({ "type": t })));
        self.update(at, json!({ "anyOf": members }));
    }

    fn bound(&mut self, at: &[String], keyword: &str, values: &[Value]) {
        let numbers: Vec<f64> = values.iter().filter_map(Value::as_f64).collect();
        let lower = keyword.ends_with("inimum");
        let Some(seen) = numbers
            .iter()
            .copied()
            .reduce(if lower { f64::min } else { f64::max })
        else {
            return;
        };
        let node = self.editor.get(at).cloned().unwrap_or_default();
        let inclusive = if lower { "minimum" } else { "maximum" };
        self.doing(format_args!("move the {inclusive} to {}", number(seen)));
        let exclusive = if lower {
            "exclusiveMinimum"
        } else {
            "exclusiveMaximum"
        };
        let beyond = |a: f64, b: f64| if lower { a.min(b) } else { a.max(b) };
        match node.get(exclusive) {
            Some(Value::Bool(true)) => {
                let bound = node
                    .get(inclusive)
                    .and_then(Value::as_f64)
                    .map_or(seen, |b| beyond(b, seen));
                self.update(at, json!({ exclusive: false, inclusive: number(bound) }));
            }
            Some(Value::Number(b)) => {
                let bound = b.as_f64().map_or(seen, |b| beyond(b, seen));
                self.editor.remove_keys(at, &[exclusive], &self.why);
                self.update(at, json!({ inclusive: number(bound) }));
            }
            _ => {
                let bound = node
                    .get(inclusive)
                    .and_then(Value::as_f64)
                    .map_or(seen, |b| beyond(b, seen));
                self.update(at, json!({ inclusive: number(bound) }));
            }
        }
    }

    fn size(&mut self, at: &[String], keyword: &str, values: &[Value]) {
        let sizes = values.iter().filter_map(|v| match v {
            Value::String(s) => Some(s.chars().count() as u64),
            Value::Array(items) => Some(items.len() as u64),
            _ => None,
        });
        let seen = if keyword.starts_with("min") {
            sizes.min()
        } else {
            sizes.max()
        };
        if let Some(n) = seen {
            self.doing(format_args!("set {keyword} to {n}"));
            self.update(at, json!({ keyword: n }));
        }
    }

    /// A member of the type seen, when no member of the choice has it.
    fn alternative(&mut self, at: &[String], values: &[Value]) {
        let node = self.editor.get(at).cloned().unwrap_or_default();
        let Some(key) = ["anyOf", "oneOf"]
            .into_iter()
            .find(|k| node.get(*k).is_some())
        else {
            return;
        };
        let members = node
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut types: Vec<String> = Vec::new();
        for (i, _) in members.iter().enumerate() {
            let member = at
                .iter()
                .cloned()
                .chain([key.to_string(), i.to_string()])
                .collect::<Vec<_>>();
            let resolved = source::follow(&self.editor.doc, &member)
                .and_then(|m| self.editor.get(&m).cloned())
                .unwrap_or_default();
            match resolved.get("type") {
                Some(Value::String(t)) => types.push(t.clone()),
                Some(Value::Array(ts)) => {
                    types.extend(ts.iter().filter_map(Value::as_str).map(str::to_string))
                }
                _ => {
                    self.note("a member of the choice takes any type: the value breaks something deeper, which member it should match is a judgment");
                    return;
                }
            }
        }
        let mut add: Vec<Value> = Vec::new();
        for v in values {
            let t = match v {
                Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
                Value::Null if self.format() != SpecFormat::OpenApi31 => continue,
                v => json_type(v),
            };
            let allowed = types
                .iter()
                .any(|d| d == t || (d == "number" && t == "integer"));
            let member = json!({ "type": t });
            if !allowed && !add.contains(&member) {
                add.push(member);
            }
        }
        if add.is_empty() {
            self.note(
                "the value has a type a member allows: which member it should match is a judgment",
            );
            return;
        }
        self.doing(format_args!("add a member to `{key}`"));
        self.update(at, json!({ key: add }));
    }
}

/// A bound as JSON, an integer when it is one.
fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        json!(f as i64)
    } else {
        json!(f)
    }
}
