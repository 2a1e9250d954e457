//! What a failed validation says: the violations of one body, deepest first,
//! one per (location, keyword), each with a location in the body and a
//! message a person can act on.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

use super::{Key, MAX_VIOLATIONS, Violation, origin};
use crate::model::{Api, SourceDocument};

/// Where the checked schema is written in the description: found only when
/// a body breaks it.
pub(super) struct Origin<'a> {
    /// The API, whose document is searched.
    pub api: &'a Api,
    /// The response schema checked.
    pub key: Key,
    /// The description's document and the response schema's place in it,
    /// once looked up.
    pub start: std::cell::OnceCell<Option<(&'a SourceDocument, Vec<String>)>>,
    /// What the validator's evaluation paths start with before the response
    /// schema (`/properties/4.0.0` in the whole validator).
    pub schema_prefix: String,
}

impl Origin<'_> {
    /// The description's pointer of the schema an error broke.
    fn schema(&self, e: &ValidationError<'_>, property: Option<&str>) -> Option<String> {
        let (doc, start) = self
            .start
            .get_or_init(|| {
                let doc = self.api.document.as_ref()?;
                Some((doc, origin::response_schema(doc, self.api, self.key)?))
            })
            .as_ref()?;
        let path = e.evaluation_path().as_str();
        let path = path.strip_prefix(self.schema_prefix.as_str())?;
        origin::locate(doc, start, path, e.kind().keyword(), property)
    }
}

/// The violations of `instance` (which holds `body` at `prefix`), deepest first,
/// one per (location, keyword), at most [`MAX_VIOLATIONS`].
pub(super) fn violations(
    validator: &Validator,
    instance: &Value,
    prefix: &str,
    body: &Value,
    origin: &Origin<'_>,
) -> Vec<Violation> {
    let mut all: Vec<Violation> = validator
        .iter_errors(instance)
        .filter(|e| !tool_failure(e))
        .map(|e| violation(&e, prefix, body, origin))
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
pub(super) fn tool_failure(e: &ValidationError<'_>) -> bool {
    matches!(
        e.kind(),
        ValidationErrorKind::BacktrackLimitExceeded { .. }
            | ValidationErrorKind::RegexEngineFailure { .. }
            | ValidationErrorKind::Referencing(_)
    )
}

pub(super) fn depth(pointer: &str) -> usize {
    pointer.matches('/').count()
}

/// Sorts `/2` before `/10`: numeric tokens by value, others by text after them.
pub(super) fn order_key(pointer: &str) -> Vec<(u8, u64, String)> {
    pointer
        .split('/')
        .skip(1)
        .map(|t| match t.parse::<u64>() {
            Ok(n) => (0, n, String::new()),
            Err(_) => (1, 0, t.to_string()),
        })
        .collect()
}

pub(super) use crate::model::text::pointer_token as escape_token;

pub(super) fn unescape_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// `pointer` with the tokens that index arrays of `body` replaced by `*`.
pub(super) fn location(pointer: &str, body: &Value) -> String {
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
pub(super) fn body_path<'e>(e: &'e ValidationError<'_>, prefix: &str) -> &'e str {
    let path = e.instance_path().as_str();
    path.strip_prefix(prefix).unwrap_or(path)
}

pub(super) fn violation(
    e: &ValidationError<'_>,
    prefix: &str,
    body: &Value,
    origin: &Origin<'_>,
) -> Violation {
    let path = body_path(e, prefix).to_string();
    let (pointer, property) = match e.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            (format!("{path}/{}", escape_token(&name)), Some(name))
        }
        _ => (path, None),
    };
    let expected = match e.kind() {
        ValidationErrorKind::Type {
            kind: TypeKind::Single(t),
        } => vec![t.to_string()],
        ValidationErrorKind::Type {
            kind: TypeKind::Multiple(set),
        } => set.iter().map(|t| t.to_string()).collect(),
        _ => Vec::new(),
    };
    Violation {
        location: location(&pointer, body),
        pointer,
        keyword: e.kind().keyword().to_string(),
        message: message(e, prefix, true),
        expected,
        schema: origin.schema(e, property.as_deref()),
    }
}

/// `value` as compact JSON, cut to a readable length.
pub(super) fn short(value: &Value) -> String {
    cut(&value.to_string(), 60)
}

pub(super) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max).collect();
    s.push('…');
    s
}

/// A short sentence: where, what was found, what was expected.
pub(super) fn message(e: &ValidationError<'_>, prefix: &str, closest: bool) -> String {
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
            if closest && let Some(best) = closest_error(context, e.instance_path().as_str()) {
                text.push_str(&format!(" (closest: {})", message(best, prefix, false)));
            }
            text
        }
        _ => cut(&e.to_string(), 120),
    };
    format!("{at}: {text}")
}

/// The most telling error of the alternative that came closest: one whose own
/// type matched, with the fewest errors.
pub(super) fn closest_error<'e>(
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
