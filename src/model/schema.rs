//! Data shapes: one JSON-Schema-like type that OpenAPI and GraphQL both map into.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

/// A primitive JSON type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SchemaType {
    /// A JSON string.
    String,
    /// A JSON number.
    Number,
    /// A JSON number without fraction.
    Integer,
    /// true or false.
    Boolean,
    /// A JSON array.
    Array,
    /// A JSON object.
    Object,
    /// JSON null.
    Null,
}

impl SchemaType {
    /// Parses a JSON Schema type name.
    pub fn parse(name: &str) -> Option<SchemaType> {
        Some(match name {
            "string" => SchemaType::String,
            "number" => SchemaType::Number,
            "integer" => SchemaType::Integer,
            "boolean" => SchemaType::Boolean,
            "array" => SchemaType::Array,
            "object" => SchemaType::Object,
            "null" => SchemaType::Null,
            _ => return None,
        })
    }

    /// The JSON Schema name.
    pub fn as_str(self) -> &'static str {
        match self {
            SchemaType::String => "string",
            SchemaType::Number => "number",
            SchemaType::Integer => "integer",
            SchemaType::Boolean => "boolean",
            SchemaType::Array => "array",
            SchemaType::Object => "object",
            SchemaType::Null => "null",
        }
    }
}

/// A data shape with its constraints.
///
/// When `reference` is set the schema stands for the named schema of that name and
/// the other fields are empty: named schemas are never inlined, so recursion ends.
/// `allOf` is merged into one schema at load time; `oneOf`/`anyOf` become
/// `alternatives`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Schema {
    /// Name of the named schema this stands for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Allowed types; empty means any. `nullable: true` adds [`SchemaType::Null`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub types: Vec<SchemaType>,
    /// `format` (`int64`, `date-time`, `uuid`, or a GraphQL custom scalar name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Allowed values, when enumerated.
    #[serde(rename = "enum", skip_serializing_if = "Vec::is_empty")]
    pub enum_values: Vec<Value>,
    /// The default value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Example values.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Value>,
    /// Numeric lower bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// Numeric upper bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// Whether `minimum` itself is excluded.
    #[serde(skip_serializing_if = "is_false")]
    pub exclusive_minimum: bool,
    /// Whether `maximum` itself is excluded.
    #[serde(skip_serializing_if = "is_false")]
    pub exclusive_maximum: bool,
    /// Numbers must be a multiple of this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multiple_of: Option<f64>,
    /// Shortest string length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Longest string length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Regular expression strings must match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Fewest array items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most array items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// Whether array items must be distinct.
    #[serde(skip_serializing_if = "is_false")]
    pub unique_items: bool,
    /// Array item shape.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<Schema>>,
    /// Object properties, in document order.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub properties: IndexMap<String, Schema>,
    /// Names of required properties.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
    /// Shape of properties not listed (`additionalProperties` as a schema).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_properties: Option<Box<Schema>>,
    /// `oneOf`/`anyOf` members: a value matches (at least) one of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<Schema>,
    /// Whether the alternatives are exclusive (`oneOf`) rather than `anyOf`.
    #[serde(skip_serializing_if = "is_false")]
    pub exclusive_alternatives: bool,
    /// The discriminator property name, when alternatives are told apart by one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discriminator: Option<String>,
    /// Sent by the server only.
    #[serde(skip_serializing_if = "is_false")]
    pub read_only: bool,
    /// Sent by the client only.
    #[serde(skip_serializing_if = "is_false")]
    pub write_only: bool,
    /// Free text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Longest string a generated value holds: a `minLength` past it is cut
/// here (the value then breaks it).
pub const MAX_GENERATED_LENGTH: u64 = 10_000;

/// Most items a generated array holds: a `minItems` past it is cut here.
pub const MAX_GENERATED_ITEMS: u64 = 100;

fn is_false(b: &bool) -> bool {
    !*b
}

impl Schema {
    /// A reference to the named schema `name`.
    pub fn named(name: impl Into<String>) -> Schema {
        Schema {
            reference: Some(name.into()),
            ..Schema::default()
        }
    }

    /// A schema of one primitive type.
    pub fn of_type(t: SchemaType) -> Schema {
        Schema {
            types: vec![t],
            ..Schema::default()
        }
    }

    /// An array of `items`.
    pub fn array_of(items: Schema) -> Schema {
        Schema {
            types: vec![SchemaType::Array],
            items: Some(Box::new(items)),
            ..Schema::default()
        }
    }

    /// Whether values may be of type `t` (an untyped schema allows everything).
    pub fn allows(&self, t: SchemaType) -> bool {
        self.types.is_empty()
            || self.types.contains(&t)
            || (t == SchemaType::Integer && self.types.contains(&SchemaType::Number))
    }

    /// Why no value can satisfy the schema's bounds (`minimum 10 > maximum
    /// 5`), when none can: an authoring slip that generation must not trip on.
    pub fn contradiction(&self) -> Option<String> {
        let name = |exclusive: bool, base: &str, open: &str| {
            if exclusive {
                open.to_string()
            } else {
                base.to_string()
            }
        };
        if let (Some(lo), Some(hi)) = (self.minimum, self.maximum) {
            let lo_name = name(self.exclusive_minimum, "minimum", "exclusiveMinimum");
            let hi_name = name(self.exclusive_maximum, "maximum", "exclusiveMaximum");
            if lo > hi || (lo == hi && (self.exclusive_minimum || self.exclusive_maximum)) {
                return Some(format!("{lo_name} {lo} is not below {hi_name} {hi}"));
            }
            let integers_only = self.types.contains(&SchemaType::Integer)
                && !self.types.contains(&SchemaType::Number);
            let first = if self.exclusive_minimum {
                lo.floor() + 1.0
            } else {
                lo.ceil()
            };
            let last = if self.exclusive_maximum {
                hi.ceil() - 1.0
            } else {
                hi.floor()
            };
            if integers_only && first > last {
                return Some(format!(
                    "no integer lies between {lo_name} {lo} and {hi_name} {hi}"
                ));
            }
        }
        if let (Some(lo), Some(hi)) = (self.min_length, self.max_length)
            && lo > hi
        {
            return Some(format!("minLength {lo} > maxLength {hi}"));
        }
        if let (Some(lo), Some(hi)) = (self.min_items, self.max_items)
            && lo > hi
        {
            return Some(format!("minItems {lo} > maxItems {hi}"));
        }
        None
    }

    /// The schema without the bounds [`Schema::contradiction`] finds at odds.
    pub fn without_contradiction(mut self) -> Schema {
        if let (Some(lo), Some(hi)) = (self.minimum, self.maximum) {
            let mut probe = Schema::default();
            (probe.types, probe.minimum, probe.maximum) = (self.types.clone(), Some(lo), Some(hi));
            (probe.exclusive_minimum, probe.exclusive_maximum) =
                (self.exclusive_minimum, self.exclusive_maximum);
            if probe.contradiction().is_some() {
                (self.minimum, self.maximum) = (None, None);
                (self.exclusive_minimum, self.exclusive_maximum) = (false, false);
            }
        }
        if self.min_length > self.max_length && self.max_length.is_some() {
            (self.min_length, self.max_length) = (None, None);
        }
        if self.min_items > self.max_items && self.max_items.is_some() {
            (self.min_items, self.max_items) = (None, None);
        }
        self
    }

    /// Whether null is allowed.
    pub fn nullable(&self) -> bool {
        self.types.contains(&SchemaType::Null)
    }

    /// The first non-null type, used to describe the schema in one word.
    pub fn primary_type(&self) -> Option<SchemaType> {
        self.types.iter().copied().find(|t| *t != SchemaType::Null)
    }

    /// Whether the schema carries no information at all.
    pub fn is_empty(&self) -> bool {
        *self == Schema::default()
    }

    /// A short type description for people: `integer`, `Pet`, `array<Pet>`, `string|null`.
    pub fn describe(&self) -> String {
        if let Some(r) = &self.reference {
            return r.clone();
        }
        if let Some(items) = &self.items {
            return format!("array<{}>", items.describe());
        }
        if !self.alternatives.is_empty() {
            let parts: Vec<String> = self.alternatives.iter().map(Schema::describe).collect();
            return parts.join("|");
        }
        if self.types.is_empty() {
            return if self.properties.is_empty() {
                "any".into()
            } else {
                "object".into()
            };
        }
        let names: Vec<&str> = self.types.iter().map(|t| t.as_str()).collect();
        names.join("|")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounded(types: &[SchemaType], lo: f64, hi: f64, open: (bool, bool)) -> Schema {
        Schema {
            types: types.to_vec(),
            minimum: Some(lo),
            maximum: Some(hi),
            exclusive_minimum: open.0,
            exclusive_maximum: open.1,
            ..Schema::default()
        }
    }

    #[test]
    fn contradictions_are_found_and_taken_off() {
        let int = [SchemaType::Integer];
        let num = [SchemaType::Number];
        for (s, why) in [
            (
                bounded(&int, 10.0, 5.0, (false, false)),
                Some("minimum 10 is not below maximum 5"),
            ),
            (
                bounded(&int, 1.5, 1.7, (false, false)),
                Some("no integer lies between minimum 1.5 and maximum 1.7"),
            ),
            (bounded(&num, 1.5, 1.7, (false, false)), None),
            (
                bounded(&int, 1.0, 2.0, (true, true)),
                Some("no integer lies between exclusiveMinimum 1 and exclusiveMaximum 2"),
            ),
            (bounded(&int, 1.0, 3.0, (true, true)), None),
            (
                bounded(&num, 2.0, 2.0, (false, true)),
                Some("minimum 2 is not below exclusiveMaximum 2"),
            ),
            (bounded(&num, 2.0, 2.0, (false, false)), None),
        ] {
            assert_eq!(s.contradiction().as_deref(), why, "{s:?}");
            let fixed = s.clone().without_contradiction();
            assert_eq!(fixed.contradiction(), None);
            if why.is_none() {
                assert_eq!(fixed, s, "a satisfiable schema is kept as it is");
            }
        }
        let lengths = Schema {
            min_length: Some(5),
            max_length: Some(2),
            min_items: Some(1),
            max_items: Some(4),
            ..Schema::default()
        };
        assert_eq!(
            lengths.contradiction().as_deref(),
            Some("minLength 5 > maxLength 2")
        );
        let fixed = lengths.without_contradiction();
        assert_eq!((fixed.min_length, fixed.max_length), (None, None));
        assert_eq!((fixed.min_items, fixed.max_items), (Some(1), Some(4)));
    }
}
