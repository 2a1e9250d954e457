//! What a request deliberately gets wrong: the note a negative or boundary
//! test puts on the request it sends, so that the oracles can judge the
//! answer (a 2xx to an input the description forbids) and the reports can
//! say what was tried.

use serde::{Deserialize, Serialize};

/// The kind of input a negative or boundary test sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreachKind {
    /// A value of another type than the schema's (a word for an integer).
    WrongType,
    /// `null` where the schema does not allow it.
    Null,
    /// A required parameter or field left out.
    Missing,
    /// A required parameter or field that has a `default`, left out: the
    /// server may rightly fill in the default, so it is not judged.
    MissingWithDefault,
    /// A value outside the enum.
    NotInEnum,
    /// A number below `minimum`.
    BelowMinimum,
    /// A number above `maximum`.
    AboveMaximum,
    /// A string shorter than `minLength`.
    TooShort,
    /// A string longer than `maxLength`.
    TooLong,
    /// An array with fewer items than `minItems`.
    TooFewItems,
    /// An array with more items than `maxItems`.
    TooManyItems,
    /// A string that does not match the schema's `pattern`.
    PatternMismatch,
    /// A string that is not of its `format` (uuid, date, email…): formats
    /// are annotations many validators skip, so not counted as forbidden.
    MalformedFormat,
    /// A body that is not JSON at all.
    MalformedBody,
    /// A body sent with another media type than the documented ones.
    WrongContentType,
    /// A multipart body broken in its structure: no boundary in its media
    /// type, a part with malformed headers, or a part whose declared length
    /// lies. Not judged: parsers skip parts they cannot read, and most
    /// ignore a part's length.
    MalformedMultipart,
    /// A value the schema allows but servers often mishandle: empty
    /// strings, format specifiers and metacharacters, unicode, control
    /// characters, very long strings, extreme numbers.
    Unusual,
    /// No credentials, on an operation that declares security.
    NoCredentials,
    /// Credentials of the declared scheme, malformed (wrong scheme word,
    /// empty token, garbage).
    MalformedCredentials,
}

impl BreachKind {
    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            BreachKind::WrongType => "wrong_type",
            BreachKind::Null => "null",
            BreachKind::Missing => "missing",
            BreachKind::MissingWithDefault => "missing_with_default",
            BreachKind::NotInEnum => "not_in_enum",
            BreachKind::BelowMinimum => "below_minimum",
            BreachKind::AboveMaximum => "above_maximum",
            BreachKind::TooShort => "too_short",
            BreachKind::TooLong => "too_long",
            BreachKind::TooFewItems => "too_few_items",
            BreachKind::TooManyItems => "too_many_items",
            BreachKind::PatternMismatch => "pattern_mismatch",
            BreachKind::MalformedFormat => "malformed_format",
            BreachKind::MalformedBody => "malformed_body",
            BreachKind::WrongContentType => "wrong_content_type",
            BreachKind::MalformedMultipart => "malformed_multipart",
            BreachKind::Unusual => "unusual",
            BreachKind::NoCredentials => "no_credentials",
            BreachKind::MalformedCredentials => "malformed_credentials",
        }
    }

    /// Whether the description forbids the input, so that a server must
    /// refuse it: type, null, required, enum, bounds and lengths. Patterns
    /// are left out (their regex dialects differ between validators), and
    /// so are formats, unusual values and credentials (judged by their own
    /// oracle).
    pub fn forbidden(self) -> bool {
        matches!(
            self,
            BreachKind::WrongType
                | BreachKind::Null
                | BreachKind::Missing
                | BreachKind::NotInEnum
                | BreachKind::BelowMinimum
                | BreachKind::AboveMaximum
                | BreachKind::TooShort
                | BreachKind::TooLong
                | BreachKind::TooFewItems
                | BreachKind::TooManyItems
                | BreachKind::MalformedBody
        )
    }

    /// Whether the request goes without the run's own credentials (`-H`,
    /// the auth command): they would mask what is being tried.
    pub fn drops_credentials(self) -> bool {
        matches!(
            self,
            BreachKind::NoCredentials | BreachKind::MalformedCredentials
        )
    }
}

/// A class of values that break servers for one reason: the edge pass
/// tries one value of each class per input, the most productive classes
/// first, and learns each class's yield as the run goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeClass {
    /// Integers past 64 bits and numbers past the double range, as exact
    /// number text (a conversion to a machine or database integer overflows).
    Huge,
    /// A value of another JSON shape where an object or array is due (a
    /// body `[null, null]`, `null`, a scalar).
    WrongShape,
    /// An object or array where a scalar (string, number, enum) is due.
    StructureInScalar,
    /// `null` where it is not allowed.
    Null,
    /// A scalar of another type (a word for a number, a number for a
    /// string or a string enum).
    WrongType,
    /// A required input left out.
    Missing,
    /// A body that is not JSON, or in another media type, or a broken
    /// multipart body.
    Malformed,
    /// The empty string.
    Empty,
    /// A string past `maxLength`, or very long.
    Long,
    /// A number just outside its bounds, or at a machine integer's edge.
    Bounds,
    /// A value outside the enum.
    NotInEnum,
    /// A near miss of the pattern, or a malformed format.
    Pattern,
    /// Format specifiers, metacharacters, unicode and control characters.
    Metacharacters,
    /// Missing or malformed credentials.
    Credentials,
    /// Each value the description lists as an input's example, and bodies
    /// built from every example it lists, optional fields included (a
    /// full-text filter crashed on the fourth of its own examples).
    Examples,
    /// A well-formed id that names no resource, in an input that takes ids
    /// (format `uuid`, a name `id` or ending in `_id`/`Id`): the real id
    /// with its letters and digits changed, its shape kept (a handler that
    /// asserts what it looks up exists crashes).
    Dangling,
}

impl EdgeClass {
    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeClass::Huge => "huge",
            EdgeClass::WrongShape => "wrong_shape",
            EdgeClass::StructureInScalar => "structure_in_scalar",
            EdgeClass::Null => "null",
            EdgeClass::WrongType => "wrong_type",
            EdgeClass::Missing => "missing",
            EdgeClass::Malformed => "malformed",
            EdgeClass::Empty => "empty",
            EdgeClass::Long => "long",
            EdgeClass::Bounds => "bounds",
            EdgeClass::NotInEnum => "not_in_enum",
            EdgeClass::Pattern => "pattern",
            EdgeClass::Metacharacters => "metacharacters",
            EdgeClass::Credentials => "credentials",
            EdgeClass::Examples => "examples",
            EdgeClass::Dangling => "dangling_id",
        }
    }
}

/// What one request deliberately gets wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Breach {
    /// The input, as a reader finds it: `query offset`, `header If-Match`,
    /// `body /stock`, `body`, `credentials bearerAuth`.
    pub input: String,
    /// What was done to it.
    pub kind: BreachKind,
    /// The class of value sent, when an edge probe sent it: with the input,
    /// what triggered a failure (`query limit`, `huge`), so that one
    /// trigger on several operations is one cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<EdgeClass>,
}

impl Breach {
    /// Whether `request` carries what the breach names: the wrong value is
    /// there (or, for a left-out input, the input is not). A negative
    /// change lands only where its parent is (`body /permissions/read`
    /// needs a `permissions` object), and shrinking may cut an input: a
    /// request without its wrong input proves nothing about refusing it.
    pub fn carried_by(&self, request: &super::RequestSpec) -> bool {
        let absent = matches!(
            self.kind,
            BreachKind::Missing | BreachKind::MissingWithDefault
        );
        let (place, name) = self
            .input
            .split_once(' ')
            .unwrap_or((self.input.as_str(), ""));
        let present = match place {
            "query" => {
                let query = request.path.split_once('?').map_or("", |(_, q)| q);
                url::form_urlencoded::parse(query.as_bytes()).any(|(k, _)| k == name)
            }
            "header" => request
                .headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(name)),
            "cookie" => request.headers.iter().any(|(n, v)| {
                n.eq_ignore_ascii_case("cookie")
                    && v.split(';')
                        .any(|c| c.trim().split('=').next() == Some(name))
            }),
            // The whole body (`body`, or one of the bodies built from the
            // description's examples, `body (examples 2)`).
            "body" if name.is_empty() || name.starts_with('(') => request.body.is_some(),
            "body" => {
                let Some(body) = request.body.as_deref() else {
                    return absent;
                };
                let field = name.trim_start_matches('/');
                match serde_json::from_str::<serde_json::Value>(body) {
                    Ok(value) => self
                        .body_pointer()
                        .is_some_and(|pointer| value.pointer(&pointer).is_some()),
                    // A form or a text body: its field by name.
                    Err(_) => body.contains(field.rsplit('/').next().unwrap_or(field)),
                }
            }
            // A path segment is always sent; credentials are the request's
            // own headers, judged by their own oracle.
            _ => return true,
        };
        present != absent
    }

    /// The JSON pointer of a body member the breach names (`body /a/b` is
    /// `/a/b`, a `~` escaped); none for the whole body or another input.
    pub fn body_pointer(&self) -> Option<String> {
        let field = self.input.strip_prefix("body ")?.trim_start_matches('/');
        (!field.is_empty() && !field.starts_with('(')).then(|| {
            field
                .split('/')
                .map(|t| format!("/{}", t.replace('~', "~0")))
                .collect()
        })
    }
}

impl std::fmt::Display for Breach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}",
            self.input,
            self.kind.as_str().replace('_', " ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::RequestSpec;

    fn breach(input: &str, kind: BreachKind) -> Breach {
        Breach {
            input: input.into(),
            kind,
            class: None,
        }
    }

    fn request(path: &str, body: Option<&str>) -> RequestSpec {
        RequestSpec {
            path: path.into(),
            body: body.map(str::to_string),
            headers: vec![("X-Trace".into(), "1".into())],
            ..Default::default()
        }
    }

    #[test]
    fn a_breach_is_carried_only_when_its_input_is_sent() {
        let wrong = BreachKind::WrongType;
        let nested = breach("body /permissions/read", BreachKind::Null);
        assert!(!nested.carried_by(&request("/r", Some("{}"))));
        assert!(nested.carried_by(&request("/r", Some(r#"{"permissions":{"read":null}}"#))));
        let index = breach("body /index", wrong);
        assert!(index.carried_by(&request("/e", Some(r#"{"index":"abc"}"#))));
        assert!(!index.carried_by(&request("/e", Some("{}"))));
        assert!(!index.carried_by(&request("/e", None)));
        let limit = breach("query limit", wrong);
        assert!(limit.carried_by(&request("/items?limit=abc", None)));
        assert!(!limit.carried_by(&request("/items", None)));
        // A left-out input is carried by its absence.
        let left_out = breach("query limit", BreachKind::Missing);
        assert!(left_out.carried_by(&request("/items", None)));
        assert!(!left_out.carried_by(&request("/items?limit=1", None)));
        assert!(breach("header x-trace", wrong).carried_by(&request("/", None)));
        assert!(!breach("header If-Match", wrong).carried_by(&request("/", None)));
        assert!(breach("path id", wrong).carried_by(&request("/", None)));
    }
}
