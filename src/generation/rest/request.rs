//! Turning chosen input values into a concrete HTTP request.

use percent_encoding::utf8_percent_encode;
use serde_json::Value;

use crate::execution::wire::{as_text, encode_segment, SEGMENT};
use crate::execution::RequestSpec;
use crate::model::{is_json_mime, Location, Operation};

/// Values chosen for one call.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// Parameters: location, name, value.
    pub params: Vec<(Location, String, Value)>,
    /// The body: media type and value.
    pub body: Option<(String, Value)>,
}

/// Builds the request for `op` with these inputs.
pub fn build_request(op: &Operation, inputs: &Inputs) -> RequestSpec {
    let mut path = op.path.clone();
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    let mut has_query = false;
    let mut headers = Vec::new();
    let mut cookies = Vec::new();
    for (location, name, value) in &inputs.params {
        match location {
            Location::Path => {
                path = path.replace(&format!("{{{name}}}"), &encode_segment(value));
            }
            Location::Query => {
                has_query = true;
                match value {
                    Value::Array(items) => {
                        for item in items {
                            query.append_pair(name, &as_text(item));
                        }
                    }
                    Value::Object(fields) => {
                        for (k, v) in fields {
                            query.append_pair(&format!("{name}[{k}]"), &as_text(v));
                        }
                    }
                    v => {
                        query.append_pair(name, &as_text(v));
                    }
                }
            }
            Location::Header => {
                // Header values cannot hold line breaks or most control bytes.
                let text: String = as_text(value).chars().filter(|c| !c.is_control()).collect();
                headers.push((name.clone(), text));
            }
            Location::Cookie => cookies.push(format!(
                "{name}={}",
                utf8_percent_encode(&as_text(value), SEGMENT)
            )),
            Location::Body | Location::Argument => {}
        }
    }
    if !cookies.is_empty() {
        headers.push(("Cookie".into(), cookies.join("; ")));
    }
    if has_query {
        path.push('?');
        path.push_str(&query.finish());
    }
    let (body, content_type) = match &inputs.body {
        Some((mime, value)) if is_json_mime(mime) || mime.is_empty() => {
            let ct = if mime == "*/*" || mime.is_empty() {
                "application/json"
            } else {
                mime
            };
            (Some(value.to_string()), Some(ct.to_string()))
        }
        Some((_, value)) => {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            if let Value::Object(fields) = value {
                for (k, v) in fields {
                    form.append_pair(k, &as_text(v));
                }
            }
            (
                Some(form.finish()),
                Some("application/x-www-form-urlencoded".to_string()),
            )
        }
        None => (None, None),
    };
    RequestSpec {
        operation: op.name.clone(),
        method: op.method.as_str().to_string(),
        path,
        headers,
        body,
        content_type,
        graphql_query: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn path_query_and_body_are_encoded() {
        let api = crate::load::load_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /a/{x}:\n    post:\n      operationId: op\n      parameters: [{name: x, in: path, required: true, schema: {type: string}}]\n      responses: {'200': {description: ok}}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let inputs = Inputs {
            params: vec![
                (Location::Path, "x".into(), json!("a b/c")),
                (Location::Query, "q".into(), json!("O'Brien")),
                (Location::Query, "tags".into(), json!(["x", "y"])),
                (Location::Header, "X-N".into(), json!(5)),
            ],
            body: Some(("application/json".into(), json!({"n": 1}))),
        };
        let r = build_request(&api.operations[0], &inputs);
        assert_eq!(r.path, "/a/a%20b%2Fc?q=O%27Brien&tags=x&tags=y");
        assert_eq!(r.headers, vec![("X-N".to_string(), "5".to_string())]);
        assert_eq!(r.body.as_deref(), Some(r#"{"n":1}"#));
        assert!(r.is_mutation());
    }
}
