//! A GraphQL schema from a live endpoint: the standard introspection query,
//! sent once, its answer read by the introspection loader.

use std::path::Path;

use serde_json::Value;

use super::{Loaded, SpecError};

/// The introspection query graphql-js and most tools send (types, fields with
/// arguments, input fields, interfaces, possible types, enum values, wrapped
/// types seven levels deep).
pub const QUERY: &str = r#"query IntrospectionQuery {
  __schema {
    queryType { name }
    mutationType { name }
    subscriptionType { name }
    types { ...FullType }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) {
    name description
    args { ...InputValue }
    type { ...TypeRef }
    isDeprecated deprecationReason
  }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name
    ofType { kind name ofType { kind name ofType { kind name } } } } } } }
}"#;

/// Why a live endpoint's schema could not be had. Each message says what
/// the server answered and what to do instead (give the schema file).
#[derive(Debug, thiserror::Error)]
pub enum IntrospectionError {
    /// The request could not be sent or got no answer.
    #[error(
        "cannot ask {endpoint} for its schema: {error}; pass the schema file (SDL or introspection JSON) instead"
    )]
    Unreachable {
        /// The endpoint asked.
        endpoint: url::Url,
        /// Why the request failed (part of the message, not a separate cause).
        error: reqwest::Error,
    },
    /// The answer is not JSON.
    #[error(
        "{endpoint} answered the introspection query with {status} and no JSON ({start}); is it a GraphQL endpoint? Pass the schema file instead"
    )]
    NotJson {
        /// The endpoint asked.
        endpoint: url::Url,
        /// The answer's status.
        status: reqwest::StatusCode,
        /// The answer's first 120 characters.
        start: String,
    },
    /// The answer holds no schema: introspection is off, or it failed.
    #[error(
        "introspection is disabled or failed on {endpoint} ({status}: {reason}); pass the schema file: cartograph run schema.graphql --target {}", crate::model::text::shell_arg(.endpoint.as_str())
    )]
    NoSchema {
        /// The endpoint asked.
        endpoint: url::Url,
        /// The answer's status.
        status: reqwest::StatusCode,
        /// The first error the answer gives, or that it has no `__schema`.
        reason: String,
    },
    /// The schema answered cannot be loaded.
    #[error(transparent)]
    Spec(#[from] SpecError),
}

/// Asks `endpoint` for its schema. Errors say what the server answered and
/// what to do (give the schema file) when introspection is off.
pub async fn fetch(
    client: &reqwest::Client,
    endpoint: &url::Url,
    headers: &[(String, String)],
) -> Result<Loaded, IntrospectionError> {
    let mut request = client
        .post(endpoint.clone())
        .header("content-type", "application/json")
        .body(
            serde_json::json!({ "query": QUERY, "operationName": "IntrospectionQuery" })
                .to_string(),
        );
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let answer = request
        .send()
        .await
        .map_err(|error| IntrospectionError::Unreachable {
            endpoint: endpoint.clone(),
            error,
        })?;
    let status = answer.status();
    // A schema that streams for ever is refused as a description would be.
    let text = match super::remote::body_within(answer, super::MAX_DESCRIPTION_BYTES).await {
        Ok(Some(body)) => String::from_utf8_lossy(&body).into_owned(),
        Ok(None) => {
            return Err(SpecError::new(
                Path::new(endpoint.as_str()),
                format!(
                    "the introspection answer is larger than {}; refused",
                    crate::model::text::size_text(super::MAX_DESCRIPTION_BYTES)
                ),
            )
            .hint("pass the schema file (SDL or introspection JSON) instead")
            .into());
        }
        Err(_) => String::new(),
    };
    let body: Value = serde_json::from_str(&text).map_err(|_| IntrospectionError::NotJson {
        endpoint: endpoint.clone(),
        status,
        start: text.chars().take(120).collect::<String>(),
    })?;
    let has_schema = body
        .get("data")
        .and_then(|d| d.get("__schema"))
        .is_some_and(|s| !s.is_null());
    if !has_schema {
        let reason = body
            .get("errors")
            .and_then(|e| e.get(0))
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("no __schema in the answer");
        return Err(IntrospectionError::NoSchema {
            endpoint: endpoint.clone(),
            status,
            reason: reason.to_string(),
        });
    }
    Ok(super::graphql::load_introspection(
        &body,
        Path::new(&format!("{endpoint} (introspection)")),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_demo_endpoint_describes_itself() {
        let server = crate::demo::DemoServer::start(0).await.unwrap();
        let endpoint = url::Url::parse(&format!("{}/graphql", server.base_url())).unwrap();
        let loaded = fetch(&reqwest::Client::new(), &endpoint, &[])
            .await
            .unwrap();
        let ts = loaded.api.graphql.as_ref().expect("a type system");
        assert!(ts.get("Book").is_some() && ts.get("Author").is_some());
        assert!(loaded.api.operation("Query.book").is_some());
        assert!(loaded.api.operation("Mutation.createAuthor").is_some());
        // The same schema as the shipped SDL: the same root fields.
        let sdl = crate::load::load_text(crate::demo::GRAPHQL_SDL, Path::new("s.graphql")).unwrap();
        let names = |a: &crate::model::Api| {
            let mut n: Vec<String> = a.operations.iter().map(|o| o.name.clone()).collect();
            n.sort();
            n
        };
        assert_eq!(names(&loaded.api), names(&sdl.api));
        server.shutdown().await;
    }

    #[tokio::test]
    async fn a_non_graphql_endpoint_gets_a_clear_error() {
        let server = crate::demo::DemoServer::start(0).await.unwrap();
        let endpoint = url::Url::parse(&format!("{}/authors", server.base_url())).unwrap();
        let err = fetch(&reqwest::Client::new(), &endpoint, &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("schema file"), "{err}");
        server.shutdown().await;
    }
}
