//! The protocol-neutral API model every loader produces and every later stage reads.
//!
//! A REST operation and a GraphQL root field are both an [`Operation`]; an OpenAPI
//! component schema and a GraphQL object type are both a named [`Schema`]. Named
//! schemas are referenced by name ([`Schema::reference`]) rather than inlined, which
//! keeps recursive types finite and lets the graph point at them.

pub mod graphql;
pub mod headers;
pub mod names;
mod schema;
pub mod security;
pub mod select;
pub mod source;
pub mod text;

pub use schema::{MAX_GENERATED_ITEMS, MAX_GENERATED_LENGTH, Schema, SchemaType};
pub use security::{SchemeKind, Security, SecurityScheme};
pub use source::SourceDocument;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// Which description format a model was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecFormat {
    /// Swagger 2.0.
    #[serde(rename = "swagger_2")]
    Swagger2,
    /// OpenAPI 3.0.x.
    #[serde(rename = "openapi_3_0")]
    OpenApi30,
    /// OpenAPI 3.1.x.
    #[serde(rename = "openapi_3_1")]
    OpenApi31,
    /// GraphQL schema definition language.
    GraphqlSdl,
    /// A GraphQL introspection query result.
    GraphqlIntrospection,
}

impl SpecFormat {
    /// Whether operations are GraphQL root fields rather than HTTP method + path.
    pub fn is_graphql(self) -> bool {
        matches!(
            self,
            SpecFormat::GraphqlSdl | SpecFormat::GraphqlIntrospection
        )
    }

    /// Human-readable name, as users write it.
    pub fn label(self) -> &'static str {
        match self {
            SpecFormat::Swagger2 => "Swagger 2.0",
            SpecFormat::OpenApi30 => "OpenAPI 3.0",
            SpecFormat::OpenApi31 => "OpenAPI 3.1",
            SpecFormat::GraphqlSdl => "GraphQL SDL",
            SpecFormat::GraphqlIntrospection => "GraphQL introspection",
        }
    }
}

/// A whole API description, loaded.
#[derive(Debug, Clone, Serialize)]
pub struct Api {
    /// `info.title`, or the file name when absent.
    pub title: String,
    /// `info.version`, when given.
    pub version: Option<String>,
    /// The format it was read from.
    pub format: SpecFormat,
    /// Base URLs, in the order the description lists them.
    pub servers: Vec<String>,
    /// Every operation that loaded, in document order.
    pub operations: Vec<Operation>,
    /// Named schemas (OpenAPI components/definitions, GraphQL named types).
    pub schemas: IndexMap<String, Schema>,
    /// OpenAPI 3.1 webhooks: listed so users can see them, never called.
    pub webhooks: Vec<Webhook>,
    /// Security schemes by name.
    pub security_schemes: IndexMap<String, SecurityScheme>,
    /// The full GraphQL type system, for GraphQL descriptions.
    #[serde(skip)]
    pub graphql: Option<graphql::TypeSystem>,
    /// Operations `--include`/`--exclude` left out: never called, listed in reports.
    #[serde(skip)]
    pub left_out: Vec<Operation>,
    /// Schemas named by Cartograph for inline objects of bodies (named after
    /// their place: `createThing.body`, `listThings.200[]`), with the words
    /// of the resource their path names (`tenant`), which inputs name them by.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub inline: IndexMap<String, Vec<String>>,
    /// The root document of an OpenAPI description, as parsed: findings
    /// point back into it and the spec fixes change it (none for GraphQL).
    #[serde(skip)]
    pub document: Option<SourceDocument>,
}

impl Api {
    /// Looks an operation up by its graph name.
    pub fn operation(&self, name: &str) -> Option<&Operation> {
        self.operations.iter().find(|o| o.name == name)
    }

    /// Operation name → position in [`Api::operations`], for lookups on hot paths.
    pub fn operation_positions(&self) -> std::collections::HashMap<String, usize> {
        self.operations
            .iter()
            .enumerate()
            .map(|(i, o)| (o.name.clone(), i))
            .collect()
    }

    /// The path every operation's path is relative to: Swagger 2's
    /// `basePath`, or the path of the first server URL (`/api/v3` of
    /// `https://h/api/v3` or of a relative `/api/v3`); None when it is `/`.
    pub fn base_path(&self) -> Option<String> {
        let first = self.servers.first()?;
        let path = match url::Url::parse(first) {
            Ok(u) => u.path().to_string(),
            // A relative server URL is a path (`/api`, or `api` meaning `/api`).
            Err(_) => format!("/{}", first.trim_start_matches('/')),
        };
        let path = path
            .split(['?', '#'])
            .next()
            .unwrap_or("")
            .trim_end_matches('/');
        (!path.is_empty() && !self.format.is_graphql()).then(|| path.to_string())
    }

    /// Follows a chain of references to the named schema it ends at, if any.
    pub fn resolve<'a>(&'a self, schema: &'a Schema) -> &'a Schema {
        let mut current = schema;
        // Bounded so that a reference cycle (A -> B -> A with no structure) ends.
        for _ in 0..16 {
            match current
                .reference
                .as_deref()
                .and_then(|n| self.schemas.get(n))
            {
                Some(next) => current = next,
                None => break,
            }
        }
        current
    }
}

/// The HTTP method of a REST operation, or the root type of a GraphQL field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    /// HTTP GET.
    Get,
    /// HTTP PUT.
    Put,
    /// HTTP POST.
    Post,
    /// HTTP DELETE.
    Delete,
    /// HTTP OPTIONS.
    Options,
    /// HTTP HEAD.
    Head,
    /// HTTP PATCH.
    Patch,
    /// HTTP TRACE.
    Trace,
    /// A field of the GraphQL `Query` root type.
    #[serde(rename = "QUERY")]
    GraphqlQuery,
    /// A field of the GraphQL `Mutation` root type.
    #[serde(rename = "MUTATION")]
    GraphqlMutation,
    /// A field of the GraphQL `Subscription` root type (listed, not tested).
    #[serde(rename = "SUBSCRIPTION")]
    GraphqlSubscription,
}

impl Method {
    /// The HTTP methods, in the order OpenAPI path items list them.
    pub const HTTP: [Method; 8] = [
        Method::Get,
        Method::Put,
        Method::Post,
        Method::Delete,
        Method::Options,
        Method::Head,
        Method::Patch,
        Method::Trace,
    ];

    /// Upper-case name (`GET`, or `QUERY` for GraphQL queries).
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Put => "PUT",
            Method::Post => "POST",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
            Method::Head => "HEAD",
            Method::Patch => "PATCH",
            Method::Trace => "TRACE",
            Method::GraphqlQuery => "QUERY",
            Method::GraphqlMutation => "MUTATION",
            Method::GraphqlSubscription => "SUBSCRIPTION",
        }
    }

    /// Parses a lower- or upper-case HTTP method name as used for path-item keys.
    pub fn from_http(name: &str) -> Option<Method> {
        Method::HTTP
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(name))
    }

    /// True for methods that never change server state (read-only mode may send them).
    pub fn is_safe(self) -> bool {
        matches!(
            self,
            Method::Get | Method::Head | Method::Options | Method::GraphqlQuery
        )
    }
}

/// One callable operation: a REST method on a path, or a GraphQL root field.
#[derive(Debug, Clone, Serialize)]
pub struct Operation {
    /// The name the graph and the reports use: operationId, else `METHOD /path`
    /// (GraphQL: `Query.field`). Unique within an [`Api`].
    pub name: String,
    /// The declared operationId, when there is one.
    pub operation_id: Option<String>,
    /// HTTP method, or GraphQL root type.
    pub method: Method,
    /// The path template (`/pets/{petId}`); for GraphQL, the root field name.
    pub path: String,
    /// One-line summary from the description.
    pub summary: Option<String>,
    /// Tags, for grouping in reports.
    pub tags: Vec<String>,
    /// Whether the description marks it deprecated.
    pub deprecated: bool,
    /// Path, query, header and cookie parameters, or GraphQL arguments.
    pub parameters: Vec<Parameter>,
    /// The request body, when the operation takes one.
    pub request_body: Option<RequestBody>,
    /// Responses by status code as written (`200`, `2XX`, `default`).
    pub responses: IndexMap<String, Response>,
    /// Where in the source document this operation is (a JSON pointer).
    pub pointer: String,
    /// The credentials it accepts (its own `security`, else the document's).
    pub security: Security,
}

impl Operation {
    /// The required parameters (every path parameter is required).
    pub fn required_parameters(&self) -> impl Iterator<Item = &Parameter> {
        self.parameters.iter().filter(|p| p.required)
    }

    /// Whether a redirect is one of its documented answers (`301`, `3XX`):
    /// its first answer, not where it leads, is what to judge.
    pub fn documents_redirect(&self) -> bool {
        self.responses.keys().any(|code| code.starts_with('3'))
    }

    /// Responses whose status is a success (2xx, `2XX`).
    pub fn success_responses(&self) -> impl Iterator<Item = (&String, &Response)> {
        self.responses
            .iter()
            .filter(|(code, _)| code.starts_with('2'))
    }
}

/// Where a parameter travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Location {
    /// A `{name}` segment of the path.
    Path,
    /// The query string.
    Query,
    /// A request header.
    Header,
    /// A cookie.
    Cookie,
    /// A field of the request body (used when binding values to body fields).
    Body,
    /// A GraphQL field argument.
    Argument,
}

impl Location {
    /// Lower-case name, as in OpenAPI's `in`.
    pub fn as_str(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Header => "header",
            Location::Cookie => "cookie",
            Location::Body => "body",
            Location::Argument => "argument",
        }
    }
}

/// One input of an operation.
#[derive(Debug, Clone, Serialize)]
pub struct Parameter {
    /// Its name.
    pub name: String,
    /// Where it travels.
    pub location: Location,
    /// Whether the operation needs it.
    pub required: bool,
    /// Its type and constraints.
    pub schema: Schema,
    /// A query object sent as `name[key]=value` (`style: deepObject`);
    /// otherwise OpenAPI's default form style, each key a parameter of its own.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deep_object: bool,
    /// Its description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Example values given by the description (`example`, `examples`, `x-example`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<serde_json::Value>,
}

/// A request body with its media types.
#[derive(Debug, Clone, Serialize)]
pub struct RequestBody {
    /// Whether a body must be sent.
    pub required: bool,
    /// Schema per media type (`application/json` → schema).
    pub content: IndexMap<String, Schema>,
    /// Example bodies given by the description.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<serde_json::Value>,
}

impl RequestBody {
    /// The schema of the JSON media type if any, else of the first one.
    pub fn primary_schema(&self) -> Option<(&str, &Schema)> {
        primary_content(&self.content)
    }
}

/// One documented response.
#[derive(Debug, Clone, Serialize)]
pub struct Response {
    /// Its description.
    pub description: String,
    /// Body schema per media type; empty when no body is documented.
    pub content: IndexMap<String, Schema>,
    /// Documented response headers.
    pub headers: IndexMap<String, Schema>,
    /// OpenAPI 3 links: how this response's values feed other operations.
    pub links: Vec<Link>,
}

impl Response {
    /// The schema of the JSON media type if any, else of the first one.
    pub fn primary_schema(&self) -> Option<(&str, &Schema)> {
        primary_content(&self.content)
    }
}

fn primary_content(content: &IndexMap<String, Schema>) -> Option<(&str, &Schema)> {
    content
        .iter()
        .find(|(mime, _)| is_json_mime(mime))
        .or_else(|| content.first())
        .map(|(m, s)| (m.as_str(), s))
}

/// True for `application/json`, `application/*+json`, `*/*` and similar.
pub fn is_json_mime(mime: &str) -> bool {
    let m = mime.split(';').next().unwrap_or("").trim();
    m == "*/*" || m.ends_with("/json") || m.ends_with("+json")
}

/// An OpenAPI 3 link: a statement, in the description, that a value of one response
/// feeds a parameter of another operation.
#[derive(Debug, Clone, Serialize)]
pub struct Link {
    /// The link's name in the description.
    pub name: String,
    /// The target operation's operationId (an `operationRef` is resolved to it).
    pub operation_id: String,
    /// Target parameter name → runtime expression (`$response.body#/id`).
    pub parameters: IndexMap<String, String>,
}

/// A webhook (OpenAPI 3.1): an operation the API calls, not one it serves.
#[derive(Debug, Clone, Serialize)]
pub struct Webhook {
    /// The webhook's key.
    pub name: String,
    /// Its method.
    pub method: Method,
    /// Its operationId, if any.
    pub operation_id: Option<String>,
}
