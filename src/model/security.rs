//! How an API takes credentials: its security schemes, and per operation
//! the combinations it accepts.

use serde::Serialize;

use super::Location;

/// One security scheme of the description (`components.securitySchemes`,
/// Swagger 2 `securityDefinitions`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SecurityScheme {
    /// Its name in the description.
    pub name: String,
    /// How the credentials travel.
    pub kind: SchemeKind,
}

/// How a scheme's credentials travel.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum SchemeKind {
    /// `Authorization: <scheme> <credentials>` (`bearer`, `basic`, …), and
    /// OAuth 2 / OpenID Connect access tokens, which go as bearer tokens.
    Http {
        /// The scheme word, lower case.
        scheme: String,
    },
    /// A key in a header, query parameter or cookie.
    ApiKey {
        /// Where it goes.
        location: Location,
        /// The header, parameter or cookie name.
        name: String,
    },
    /// A kind Cartograph does not send (mutual TLS, an unknown type).
    Other,
}

impl SecurityScheme {
    /// The header its credentials travel in, when they travel in one.
    pub fn header(&self) -> Option<&str> {
        match &self.kind {
            SchemeKind::Http { .. } => Some("Authorization"),
            SchemeKind::ApiKey {
                location: Location::Header,
                name,
            } => Some(name),
            _ => None,
        }
    }
}

/// What an operation accepts: alternatives, each a set of scheme names
/// needed together (OpenAPI's security requirement objects). An empty
/// alternative means anonymous calls are allowed; no alternative at all
/// means the operation declares no security.
pub type Security = Vec<Vec<String>>;

/// Whether `security` requires credentials: it names a scheme, and no
/// alternative lets an anonymous caller in.
pub fn requires_credentials(security: &Security) -> bool {
    !security.is_empty() && security.iter().all(|alt| !alt.is_empty())
}
