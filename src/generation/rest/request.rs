//! Turning chosen input values into a concrete HTTP request.

use percent_encoding::utf8_percent_encode;
use serde_json::Value;

use crate::execution::RequestSpec;
use crate::execution::wire::{SEGMENT, as_text, encode_segment, json_text};
use crate::model::{Api, Location, Operation, Schema, SchemaType, is_json_mime};

/// The boundary of multipart bodies: fixed, so that a seed's requests are
/// the same in every run, and unlikely in any generated value.
const BOUNDARY: &str = "cartograph-7f3a9c1e5b";

/// Values chosen for one call.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// Parameters: location, name, value.
    pub params: Vec<(Location, String, Value)>,
    /// The body: media type and value.
    pub body: Option<(String, Value)>,
}

/// Builds the request for `op` (of `api`) with these inputs.
pub fn build_request(api: &Api, op: &Operation, inputs: &Inputs) -> RequestSpec {
    let mut path = op.path.clone();
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    let mut has_query = false;
    let mut headers = Vec::new();
    let mut cookies = Vec::new();
    for (location, name, value) in &inputs.params {
        // A text place cannot carry `null`: a nullable optional parameter
        // whose value is null is not sent, never sent as the word `null`
        // (Airflow refused `dag_run_start_date_gte=null` with 422 on every
        // listing).
        if value.is_null()
            && matches!(
                location,
                Location::Query | Location::Header | Location::Cookie
            )
        {
            continue;
        }
        // Looked up only for the rare object-valued query parameter.
        let deep = || {
            op.parameters
                .iter()
                .any(|p| p.location == *location && p.name == *name && p.deep_object)
        };
        match location {
            Location::Path => {
                path = path.replace(&format!("{{{name}}}"), &encode_segment(value));
            }
            Location::Query => {
                has_query = true;
                match value {
                    Value::Array(items) => {
                        for item in items.iter().filter(|i| !i.is_null()) {
                            query.append_pair(name, &as_text(item));
                        }
                    }
                    Value::Object(fields) if deep() => {
                        for (k, v) in fields {
                            query.append_pair(&format!("{name}[{k}]"), &as_text(v));
                        }
                    }
                    // Form style, exploded (OpenAPI's default): each key
                    // its own parameter.
                    Value::Object(fields) => {
                        for (k, v) in fields {
                            query.append_pair(k, &as_text(v));
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
        Some((mime, value)) => {
            let (body, ct) = encode_body(api, op, mime, value);
            (Some(body), Some(ct))
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
        breach: None,
        identity: None,
    }
}

/// A body value as the media type wants it: JSON; a form; multipart with
/// a file part (a filename and a media type) for each binary field and a
/// text part for the others; the text itself for `text/*` and binary types.
fn encode_body(api: &Api, op: &Operation, mime: &str, value: &Value) -> (String, String) {
    let media = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if is_json_mime(&media) || media.is_empty() {
        let ct = if media == "*/*" || media.is_empty() {
            "application/json"
        } else {
            mime
        };
        return (json_text(value), ct.to_string());
    }
    let fields = || -> Vec<(&String, &Value)> {
        match value {
            Value::Object(fields) => fields.iter().collect(),
            _ => Vec::new(),
        }
    };
    match media.as_str() {
        "multipart/form-data" | "multipart/mixed" => {
            let schema = op
                .request_body
                .as_ref()
                .and_then(|b| b.content.get(mime))
                .map(|s| api.resolve(s));
            let mut out = String::new();
            // An array field is one part per item, under the same name.
            let parts = fields().into_iter().flat_map(|(name, v)| match v {
                Value::Array(items) => items.iter().map(|i| (name, i)).collect::<Vec<_>>(),
                v => vec![(name, v)],
            });
            for (name, v) in parts {
                let file = schema
                    .and_then(|s| s.properties.get(name))
                    .is_some_and(|p| is_file(api.resolve(p)));
                out.push_str(&format!("--{BOUNDARY}\r\n"));
                if file {
                    out.push_str(&format!(
                        "Content-Disposition: form-data; name=\"{}\"; filename=\"{}.txt\"\r\nContent-Type: application/octet-stream\r\n\r\n",
                        quoted(name),
                        quoted(name)
                    ));
                } else {
                    out.push_str(&format!(
                        "Content-Disposition: form-data; name=\"{}\"\r\n\r\n",
                        quoted(name)
                    ));
                }
                out.push_str(&as_text(v));
                out.push_str("\r\n");
            }
            out.push_str(&format!("--{BOUNDARY}--\r\n"));
            (out, format!("{media}; boundary={BOUNDARY}"))
        }
        "application/x-www-form-urlencoded" => {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in fields() {
                form.append_pair(k, &as_text(v));
            }
            (form.finish(), media)
        }
        // Text and binary media types carry the value itself.
        _ => (as_text(value), mime.to_string()),
    }
}

/// How a negative test breaks a multipart body's structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MultipartFlaw {
    /// `Content-Type: multipart/form-data` with no `boundary` parameter.
    NoBoundary,
    /// The first part's header line has no colon and an unclosed quote.
    MalformedPart,
    /// The first part declares a `Content-Length` far past its content.
    LyingLength,
}

/// Whether a media type is sent as multipart by [`build_request`].
pub fn is_multipart(mime: &str) -> bool {
    let media = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    media == "multipart/form-data" || media == "multipart/mixed"
}

/// A multipart `body` (as [`build_request`] writes it, media type
/// `content_type`) with `flaw`: the body and the media type to send. A body
/// without parts gets one to break.
pub fn break_multipart(flaw: MultipartFlaw, body: &str, content_type: &str) -> (String, String) {
    let media = content_type.split(';').next().unwrap_or("").trim();
    let opening = format!("--{BOUNDARY}\r\n");
    let body = if body.starts_with(&opening) {
        body.to_string()
    } else {
        format!(
            "{opening}Content-Disposition: form-data; name=\"x\"\r\n\r\nx\r\n--{BOUNDARY}--\r\n"
        )
    };
    let head_end = body.find("\r\n\r\n").unwrap_or(body.len());
    let content_start = (head_end + 4).min(body.len());
    let content_len = body[content_start..]
        .find(&format!("\r\n--{BOUNDARY}"))
        .unwrap_or(body.len() - content_start);
    match flaw {
        MultipartFlaw::NoBoundary => (body, media.to_string()),
        MultipartFlaw::MalformedPart => {
            let head = body[opening.len()..head_end]
                .replacen(": ", " ", 1)
                .replacen("\"", "", 1);
            (
                format!("{opening}{head}{}", &body[head_end..]),
                content_type.to_string(),
            )
        }
        MultipartFlaw::LyingLength => (
            format!(
                "{}\r\nContent-Length: {}{}",
                &body[..head_end],
                content_len + 1024,
                &body[head_end..]
            ),
            content_type.to_string(),
        ),
    }
}

/// Whether a schema describes a file (OpenAPI 3 `format: binary` or
/// `base64`, Swagger 2 `type: file`, read as a binary string).
fn is_file(s: &Schema) -> bool {
    matches!(s.format.as_deref(), Some("binary" | "base64"))
        || (s.types.contains(&SchemaType::Array)
            && s.items
                .as_deref()
                .is_some_and(|i| matches!(i.format.as_deref(), Some("binary"))))
}

/// A name inside a quoted header parameter.
fn quoted(name: &str) -> String {
    name.replace(['"', '\r', '\n'], "_")
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
        let r = build_request(&api, &api.operations[0], &inputs);
        assert_eq!(r.path, "/a/a%20b%2Fc?q=O%27Brien&tags=x&tags=y");
        assert_eq!(r.headers, vec![("X-N".to_string(), "5".to_string())]);
        assert_eq!(r.body.as_deref(), Some(r#"{"n":1}"#));
        assert!(r.is_mutation());
    }

    #[test]
    fn a_null_in_a_text_place_is_not_sent() {
        let api = crate::load::load_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /h:\n    get:\n      operationId: h\n      responses: {'200': {description: ok}}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let inputs = Inputs {
            params: vec![
                (Location::Query, "start_gte".into(), Value::Null),
                (Location::Query, "tags".into(), json!([null, "x"])),
                (Location::Header, "X-Null".into(), Value::Null),
                (Location::Cookie, "c".into(), Value::Null),
            ],
            body: None,
        };
        let r = build_request(&api, &api.operations[0], &inputs);
        assert_eq!(r.path, "/h?tags=x");
        assert!(r.headers.is_empty(), "{:?}", r.headers);
    }

    #[test]
    fn query_objects_go_in_form_style_unless_deep_object() {
        let api = crate::load::load_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /h:\n    get:\n      operationId: h\n      parameters:\n      - {name: freeform, in: query, schema: {type: object, additionalProperties: {type: string}}}\n      - {name: filter, in: query, style: deepObject, schema: {type: object}}\n      responses: {'200': {description: ok}}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let inputs = Inputs {
            params: vec![
                (Location::Query, "freeform".into(), json!({"a": "x y"})),
                (Location::Query, "filter".into(), json!({"b": 1})),
            ],
            body: None,
        };
        let r = build_request(&api, &api.operations[0], &inputs);
        assert_eq!(r.path, "/h?a=x+y&filter%5Bb%5D=1");
    }

    #[test]
    fn uploads_go_as_multipart_with_file_parts() {
        let api = crate::load::load_text(
            "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths:\n  /up:\n    post:\n      operationId: up\n      consumes: [multipart/form-data]\n      parameters:\n      - {name: file, in: formData, type: file, required: true}\n      - {name: note, in: formData, type: string}\n      responses: {'200': {description: ok}}\n",
            std::path::Path::new("t.yaml"),
        )
        .unwrap()
        .api;
        let op = &api.operations[0];
        let mime = op
            .request_body
            .as_ref()
            .unwrap()
            .content
            .keys()
            .next()
            .unwrap()
            .clone();
        let inputs = Inputs {
            params: vec![],
            body: Some((mime, json!({"file": "hello", "note": "n"}))),
        };
        let r = build_request(&api, op, &inputs);
        let ct = r.content_type.unwrap();
        assert!(ct.starts_with("multipart/form-data; boundary="), "{ct}");
        let body = r.body.unwrap();
        assert!(body.contains("name=\"file\"; filename=\"file.txt\"\r\nContent-Type: application/octet-stream\r\n\r\nhello\r\n"), "{body}");
        assert!(body.contains("name=\"note\"\r\n\r\nn\r\n"), "{body}");
        assert!(body.ends_with(&format!("--{BOUNDARY}--\r\n")));
        assert!(is_multipart(&ct));

        let (b, t) = break_multipart(MultipartFlaw::NoBoundary, &body, &ct);
        assert_eq!(
            (b.as_str(), t.as_str()),
            (body.as_str(), "multipart/form-data")
        );
        let (b, t) = break_multipart(MultipartFlaw::MalformedPart, &body, &ct);
        assert_eq!(t, ct);
        assert!(
            b.starts_with(&format!(
                "--{BOUNDARY}\r\nContent-Disposition form-data; name=file\"; filename="
            )),
            "{b}"
        );
        let (b, _) = break_multipart(MultipartFlaw::LyingLength, &body, &ct);
        assert!(
            b.contains(
                "Content-Type: application/octet-stream\r\nContent-Length: 1029\r\n\r\nhello\r\n"
            ),
            "{b}"
        );
        // A body without parts gets one.
        let empty = format!("--{BOUNDARY}--\r\n");
        let (b, _) = break_multipart(MultipartFlaw::LyingLength, &empty, &ct);
        assert!(
            b.contains("name=\"x\"\r\nContent-Length: 1025\r\n\r\nx\r\n"),
            "{b}"
        );
    }
}
