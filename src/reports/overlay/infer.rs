//! A schema for answers the description does not document, inferred from
//! the bodies seen: their types, properties and items, and nothing the next
//! body of the same kind could break (no `required`, no bounds, no enum, no
//! format, extra properties allowed). Written in the description's own
//! dialect: Swagger 2 and OpenAPI 3.0 say null with `x-nullable` and
//! `nullable`, 3.1 with a `type` list.

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use crate::model::SpecFormat;

/// Nesting depth below which values are described as anything.
const MAX_DEPTH: usize = 8;
/// Properties of one object described at most (the rest are allowed anyway).
const MAX_PROPERTIES: usize = 64;

/// A schema every one of `bodies` matches, in `format`'s dialect.
pub(super) fn schema(bodies: &[&Value], format: SpecFormat) -> Value {
    let mut shape = Shape::default();
    for b in bodies {
        shape.add(b, 0);
    }
    shape.schema(format, 0)
}

/// What the values seen at one place were.
#[derive(Default)]
struct Shape {
    null: bool,
    boolean: bool,
    integer: bool,
    number: bool,
    string: bool,
    /// The items of the arrays seen, when arrays were.
    array: Option<Box<Shape>>,
    /// The members of the objects seen, when objects were.
    object: Option<IndexMap<String, Shape>>,
}

impl Shape {
    fn add(&mut self, v: &Value, depth: usize) {
        match v {
            Value::Null => self.null = true,
            Value::Bool(_) => self.boolean = true,
            Value::Number(n) if n.is_i64() || n.is_u64() => self.integer = true,
            Value::Number(_) => self.number = true,
            Value::String(_) => self.string = true,
            Value::Array(items) => {
                let inner = self.array.get_or_insert_with(Box::default);
                if depth < MAX_DEPTH {
                    for item in items {
                        inner.add(item, depth + 1);
                    }
                }
            }
            Value::Object(map) => {
                let members = self.object.get_or_insert_with(IndexMap::new);
                if depth < MAX_DEPTH {
                    for (k, val) in map {
                        if members.len() >= MAX_PROPERTIES && !members.contains_key(k) {
                            continue;
                        }
                        members.entry(k.clone()).or_default().add(val, depth + 1);
                    }
                }
            }
        }
    }

    /// The JSON types seen, null aside (an integer among numbers is a number).
    fn types(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.boolean {
            out.push("boolean");
        }
        if self.number {
            out.push("number");
        } else if self.integer {
            out.push("integer");
        }
        if self.string {
            out.push("string");
        }
        if self.array.is_some() {
            out.push("array");
        }
        if self.object.is_some() {
            out.push("object");
        }
        out
    }

    fn schema(&self, format: SpecFormat, depth: usize) -> Value {
        let types = self.types();
        let mut out = Map::new();
        match (types.as_slice(), format) {
            ([], SpecFormat::OpenApi31) if self.null => {
                out.insert("type".into(), json!("null"));
            }
            // Only nulls, or nothing: anything (older dialects have no null type).
            ([], _) => {}
            ([one], _) => {
                if self.null && format == SpecFormat::OpenApi31 {
                    out.insert("type".into(), json!([one, "null"]));
                } else {
                    out.insert("type".into(), json!(one));
                }
                if self.null && format == SpecFormat::OpenApi30 {
                    out.insert("nullable".into(), json!(true));
                }
                if self.null && format == SpecFormat::Swagger2 {
                    out.insert("x-nullable".into(), json!(true));
                }
            }
            (many, SpecFormat::OpenApi31) => {
                let mut list: Vec<&str> = many.to_vec();
                if self.null {
                    list.push("null");
                }
                out.insert("type".into(), json!(list));
            }
            // Several types: anything, where a `type` cannot list them.
            _ => return Value::Object(out),
        }
        if let Some(items) = &self.array {
            // Swagger 2 and OpenAPI 3.0 require `items` beside `type: array`.
            let items = if depth < MAX_DEPTH {
                items.schema(format, depth + 1)
            } else {
                json!({})
            };
            out.insert("items".into(), items);
        }
        if let Some(members) = &self.object
            && !members.is_empty()
            && depth < MAX_DEPTH
        {
            let props: Map<String, Value> = members
                .iter()
                .map(|(k, s)| (k.clone(), s.schema(format, depth + 1)))
                .collect();
            out.insert("properties".into(), Value::Object(props));
        }
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_merge_into_one_loose_schema_per_dialect() {
        let a =
            json!({"error": "not found", "code": 404, "details": [{"field": "id"}], "hint": null});
        let b = json!({"error": "gone", "code": 404.5, "details": [], "hint": "x"});
        assert_eq!(
            schema(&[&a, &b], SpecFormat::OpenApi30),
            json!({"type": "object", "properties": {
                "error": {"type": "string"},
                "code": {"type": "number"},
                "details": {"type": "array", "items": {"type": "object", "properties": {"field": {"type": "string"}}}},
                "hint": {"type": "string", "nullable": true}
            }})
        );
        let s31 = schema(&[&a, &b], SpecFormat::OpenApi31);
        assert_eq!(
            s31["properties"]["hint"],
            json!({"type": ["string", "null"]})
        );
        let s2 = schema(&[&a, &b], SpecFormat::Swagger2);
        assert_eq!(
            s2["properties"]["hint"],
            json!({"type": "string", "x-nullable": true})
        );
        // Only nulls, and mixed types.
        let c = json!({"hint": null, "v": 1});
        let d = json!({"v": "one"});
        let s = schema(&[&c, &d], SpecFormat::OpenApi30);
        assert_eq!(s["properties"]["hint"], json!({}));
        assert_eq!(s["properties"]["v"], json!({}));
        let s = schema(&[&c, &d], SpecFormat::OpenApi31);
        assert_eq!(s["properties"]["hint"], json!({"type": "null"}));
        assert_eq!(s["properties"]["v"], json!({"type": ["integer", "string"]}));
        assert_eq!(
            schema(&[&json!([])], SpecFormat::Swagger2),
            json!({"type": "array", "items": {}})
        );
    }
}
