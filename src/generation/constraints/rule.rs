//! What a learnt rule is: a constraint on one input's values, written into
//! that input's schema ([`Rule::apply`]), or kept by changing the values
//! themselves ([`Affix`]) when no schema keyword says it.

use serde_json::Value;

use crate::model::{Schema, SchemaType};

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
