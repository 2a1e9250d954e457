//! Security schemes and requirements: which credentials each operation
//! accepts, so that negative tests can send none or malformed ones.

use indexmap::IndexMap;
use serde_json::Value;

use super::Converter;
use crate::load::document::escape_pointer;
use crate::model::{Location, SchemeKind, Security, SecurityScheme, SpecFormat};

impl<'a> Converter<'a> {
    /// The document's security schemes, each skipped with a warning when it
    /// cannot be read.
    pub(super) fn security_schemes(&mut self) -> IndexMap<String, SecurityScheme> {
        let (pointer, defs) = if self.format == SpecFormat::Swagger2 {
            (
                "/securityDefinitions",
                self.root().get("securityDefinitions"),
            )
        } else {
            (
                "/components/securitySchemes",
                self.root()
                    .get("components")
                    .and_then(|c| c.get("securitySchemes")),
            )
        };
        let mut out = IndexMap::new();
        let Some(Value::Object(defs)) = defs else {
            return out;
        };
        for (name, def) in defs {
            let at = format!("#{pointer}/{}", escape_pointer(name));
            let Some((_, def)) = self.follow_or_warn(0, def, &at) else {
                continue;
            };
            let text = |key: &str| def.get(key).and_then(Value::as_str).unwrap_or("");
            let kind = match text("type").to_ascii_lowercase().as_str() {
                "http" => SchemeKind::Http {
                    scheme: text("scheme").to_ascii_lowercase(),
                },
                "basic" => SchemeKind::Http {
                    scheme: "basic".into(),
                },
                "oauth2" | "openidconnect" => SchemeKind::Http {
                    scheme: "bearer".into(),
                },
                "apikey" => {
                    let location = match text("in") {
                        "header" => Location::Header,
                        "query" => Location::Query,
                        "cookie" => Location::Cookie,
                        other => {
                            self.warn(
                                0,
                                at,
                                format!("apiKey `in: {other}` is not header, query or cookie; the scheme is not probed"),
                            );
                            continue;
                        }
                    };
                    if text("name").is_empty() {
                        self.warn(0, at, "apiKey scheme without a `name`; not probed");
                        continue;
                    }
                    // An API key is a credential: `Authorization` is its
                    // header to name; a framing one or a non-token is not.
                    if location == Location::Header
                        && !text("name").eq_ignore_ascii_case("authorization")
                        && let Some(why) = crate::model::headers::refused(text("name"))
                    {
                        self.warn(0, at, format!("apiKey {why}; not probed"));
                        continue;
                    }
                    SchemeKind::ApiKey {
                        location,
                        name: text("name").to_string(),
                    }
                }
                _ => SchemeKind::Other,
            };
            out.insert(
                name.clone(),
                SecurityScheme {
                    name: name.clone(),
                    kind,
                },
            );
        }
        out
    }
}

/// A list of security requirement objects (`[{bearerAuth: []}, {}]`) as
/// alternatives of scheme names; `None` when absent or not a list.
pub(super) fn requirements(value: Option<&Value>) -> Option<Security> {
    let Value::Array(items) = value? else {
        return None;
    };
    Some(
        items
            .iter()
            .filter_map(Value::as_object)
            .map(|alt| alt.keys().cloned().collect())
            .collect(),
    )
}
