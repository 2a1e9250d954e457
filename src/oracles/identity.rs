//! What names a resource, read from requests and answers: the ids an answer
//! gives, the identifying fields a creation sends, whether a path parameter
//! names one resource or is an argument. The witness ledger and the stateful
//! oracles both go by these.

use serde_json::Value;

use crate::execution::Exchange;

/// The text of a scalar as it travels in a path: `4` and `"4"` are the same id.
pub(crate) fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The ids an answer gives: its `Location`'s last segment and its body's `id`
/// (or its envelope's, `data.id`).
pub fn given_ids(ex: &Exchange) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(loc) = ex.header("location")
        && let Some(id) = crate::execution::wire::location_id(loc)
            .as_ref()
            .and_then(text)
    {
        out.push(id);
    }
    if let Some(id) = ex
        .json()
        .and_then(crate::execution::wire::body_id)
        .and_then(text)
        && !out.contains(&id)
    {
        out.push(id);
    }
    out
}

/// The names a creation's JSON body chose for its resource, besides the
/// ids its answer gives: its identifying fields (`name`, `key`…) and id
/// fields (`connection_id`), which name it where the client chooses.
pub fn sent_names(ex: &Exchange) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let given = given_ids(ex);
    let Some(Value::Object(fields)) = ex
        .request
        .body
        .as_deref()
        .and_then(|b| serde_json::from_str::<Value>(b).ok())
    else {
        return out;
    };
    for (k, v) in &fields {
        let names = crate::model::names::IDENTIFYING.contains(&k.as_str()) || is_id_name(k);
        if let Some(t) = text(v).filter(|_| names)
            && !out.contains(&t)
            && !given.contains(&t)
        {
            out.push(t);
        }
    }
    out
}

/// The identifying fields (`name`, `slug`, `id`…) of the JSON body of a
/// successful creation (POST, PUT) whose answer names no id of its own
/// (no `Location`, no body `id`): the client's choice is then the new
/// resource's identity (`POST /tenants {"name": "t1"}` answering `{}`
/// makes `/tenants/t1`).
pub fn chosen_ids(ex: &Exchange) -> Vec<(&'static str, Value)> {
    let creates = matches!(ex.request.method.as_str(), "POST" | "PUT");
    if !creates || !ex.is_success() || !given_ids(ex).is_empty() {
        return Vec::new();
    }
    identity_sent(ex)
}

/// The identifying fields (`name`, `slug`, `id`…) a request's JSON body sends.
pub fn identity_sent(ex: &Exchange) -> Vec<(&'static str, Value)> {
    let Some(body) = ex
        .request
        .body
        .as_deref()
        .and_then(|b| serde_json::from_str::<Value>(b).ok())
    else {
        return Vec::new();
    };
    crate::model::names::IDENTIFYING
        .iter()
        .filter_map(|k| {
            let v = body.get(*k)?;
            let usable = match v {
                Value::String(s) => !s.is_empty(),
                Value::Number(_) => true,
                _ => false,
            };
            usable.then(|| (*k, v.clone()))
        })
        .collect()
}

/// Whether a field or parameter name names an identifier (`id`, `bookId`).
pub(crate) fn is_id_name(name: &str) -> bool {
    crate::model::names::words(name)
        .last()
        .is_some_and(|w| crate::model::names::is_id_like(w))
}

/// Whether path parameter `name` of the path template `path` names one
/// resource (`/books/{bookId}`, `/users/{username}`, `/pets/{pet}`, a uuid)
/// rather than an argument of a computation (`/calc/{n}/{x}`,
/// `/delay/{seconds}`, an echo's `/anything/{anything}`).
pub fn identifies(path: &str, name: &str, schema: &crate::model::Schema) -> bool {
    use crate::model::names;
    if names::words(name)
        .last()
        .is_some_and(|w| names::is_identifying(w))
        || schema.format.as_deref() == Some("uuid")
    {
        return true;
    }
    // `/pets/{pet}`: the singular of the collection above it.
    let marker = format!("{{{name}}}");
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let Some(at) = segments.iter().position(|s| *s == marker) else {
        return false;
    };
    let Some(collection) = at.checked_sub(1).map(|i| segments[i].to_ascii_lowercase()) else {
        return false;
    };
    let single = names::singular(&collection);
    single != collection && names::words(name).first() == Some(&single)
}

/// Whether `op`'s path ends in a parameter that names one resource
/// (`/books/{bookId}`): a collection (`/books`) or a computation
/// (`/calc/{n}`) is no single resource.
pub fn names_one_resource(op: &crate::model::Operation) -> bool {
    let Some(last) = op.path.trim_end_matches('/').rsplit('/').next() else {
        return false;
    };
    let Some(name) = last.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
        return false;
    };
    let schema = op
        .parameters
        .iter()
        .find(|p| p.location == crate::model::Location::Path && p.name == name)
        .map(|p| p.schema.clone())
        .unwrap_or_default();
    identifies(&op.path, name, &schema)
}

/// Id-like values a request sends, each with a hint of what it names (the
/// collection path above a path segment, or the field name).
pub fn sent_ids(ex: &Exchange) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (path, query) = ex
        .request
        .path
        .split_once('?')
        .unwrap_or((&ex.request.path, ""));
    let mut prefix = String::new();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        let value = percent_encoding::percent_decode_str(seg)
            .decode_utf8_lossy()
            .into_owned();
        out.push((value, prefix.clone()));
        prefix.push('/');
        prefix.push_str(seg);
    }
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        if is_id_name(&k) && !v.is_empty() {
            out.push((v.into_owned(), k.into_owned()));
        }
    }
    if let Some(body) = ex.request.body.as_deref()
        && let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(body)
    {
        for (k, v) in fields {
            if is_id_name(&k)
                && let Some(t) = text(&v)
            {
                out.push((t, k));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Schema, SchemaType};

    #[test]
    fn identifiers_are_told_from_arguments() {
        let int = Schema::of_type(SchemaType::Integer);
        let text = Schema::of_type(SchemaType::String);
        assert!(identifies("/books/{bookId}", "bookId", &int));
        assert!(identifies("/users/{username}", "username", &text));
        assert!(identifies("/tenants/{tenant_name}", "tenant_name", &text));
        assert!(identifies("/pets/{pet}", "pet", &text));
        let uuid = Schema {
            format: Some("uuid".into()),
            ..text.clone()
        };
        assert!(identifies("/runs/{run}", "run", &uuid));
        assert!(!identifies("/calc/{n}/{x}", "n", &int));
        assert!(!identifies("/calc/{n}/{x}", "x", &int));
        assert!(!identifies("/delay/{delay}", "delay", &int));
        assert!(!identifies("/anything/{anything}", "anything", &text));
    }
}
