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

/// What one request deliberately gets wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Breach {
    /// The input, as a reader finds it: `query offset`, `header If-Match`,
    /// `body /stock`, `body`, `credentials bearerAuth`.
    pub input: String,
    /// What was done to it.
    pub kind: BreachKind,
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
