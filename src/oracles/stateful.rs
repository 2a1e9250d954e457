//! Stateful checks, in the spirit of RESTler's checkers and Schemathesis's
//! stateful checks: they judge an answer by what earlier requests of the same
//! test did. The run adds the follow-up requests they need (a GET after a
//! DELETE, of a `Location`, of a created item; a repeated PUT or DELETE).

use super::Found;
use crate::execution::Exchange;

fn path_of(ex: &Exchange) -> &str {
    ex.request.path.split('?').next().unwrap_or("")
}

/// The id a creation answered with: the `Location`'s last segment, else the
/// body's top-level `id`.
fn created_id(ex: &Exchange) -> Option<String> {
    super::identity::given_ids(ex).into_iter().next()
}

/// Whether the answer of POST `ex` created the resource at `path` (its
/// `Location`, or its collection plus the body's `id`).
fn creates(ex: &Exchange, path: &str, location: &dyn Fn(&str) -> Option<String>) -> bool {
    let by_location = ex
        .header("location")
        .and_then(location)
        .is_some_and(|l| l.split('?').next() == Some(path));
    by_location
        || created_id(ex)
            .is_some_and(|id| format!("{}/{id}", path_of(ex).trim_end_matches('/')) == path)
}

/// One answer with the earlier answers of its test: what the stateful
/// checks judge. `location` resolves a `Location` header to a request path
/// under the target; `single` tells whether a request's operation names one
/// resource ([`super::identity::names_one_resource`]): deleting a collection
/// or calling an echo is no promise that a later read fails.
pub struct Sequence<'a> {
    /// The earlier exchanges of the test, oldest first.
    pub earlier: &'a [Exchange],
    /// The answer judged.
    pub ex: &'a Exchange,
    /// A `Location` header as a request path under the target.
    pub location: &'a dyn Fn(&str) -> Option<String>,
    /// Whether a request's operation names one resource.
    pub single: &'a dyn Fn(&Exchange) -> bool,
    /// The path parameter a request's last segment fills (`slug` for
    /// `/articles/{slug}`), when its operation's template ends in one.
    pub param: &'a dyn Fn(&Exchange) -> Option<String>,
}

/// Whether a parameter names a thing by a name rather than an id (`slug`,
/// `name`, `tenant_name`, `username`).
fn names_by_name(param: &str) -> bool {
    crate::model::names::words(param).last().is_some_and(|w| {
        matches!(
            w.as_str(),
            "name" | "slug" | "username" | "login" | "handle"
        )
    })
}

/// Whether `ex`'s last path segment holds a value of another kind than its
/// parameter: the parameter names by name (`{slug}`), and the value is what
/// an earlier answer of the test gave as an object's id, not as its name
/// (`{"id": 5, "slug": "a-5"}` then `/articles/5`). Such a request names
/// nothing, so what the server answers to it says nothing about the
/// resource the earlier request made or deleted.
fn of_another_kind(s: &Sequence<'_>, ex: &Exchange) -> bool {
    let Some(param) = (s.param)(ex).filter(|p| names_by_name(p)) else {
        return false;
    };
    let Some(last) = path_of(ex).trim_end_matches('/').rsplit('/').next() else {
        return false;
    };
    let value = percent_encoding::percent_decode_str(last)
        .decode_utf8_lossy()
        .into_owned();
    let name_word = crate::model::names::words(&param).pop().unwrap_or_default();
    let as_text = |v: &serde_json::Value| super::identity::text(v);
    s.earlier.iter().any(|e| {
        let Some(serde_json::Value::Object(fields)) = e.json() else {
            return false;
        };
        let as_id = fields
            .iter()
            .any(|(k, v)| super::identity::is_id_name(k) && as_text(v).as_deref() == Some(&value));
        let as_name = fields
            .get(&name_word)
            .or_else(|| fields.get(&param))
            .and_then(as_text)
            .as_deref()
            == Some(&value);
        as_id && !as_name
    })
}

/// All the stateful findings for `s.ex` (each check at most once), stamped
/// as the registry does.
#[cfg(test)]
fn findings(s: &Sequence<'_>) -> Vec<super::Finding> {
    use super::registry::Code;
    [
        (Code::UseAfterDelete, use_after_delete(s)),
        (Code::CreatedNotReadable, created_not_readable(s)),
        (Code::DanglingLocation, dangling_location(s)),
        (Code::NonIdempotent, non_idempotent(s)),
    ]
    .into_iter()
    .filter_map(|(code, found)| found.map(|f| f.stamped(code)))
    .collect()
}

/// Whether a 2xx body shows nothing: empty, `{}`, `[]` or `null` (a server
/// that reads any unknown name as an empty object shows no resource).
fn shows_nothing(ex: &Exchange) -> bool {
    let body = ex.body.trim();
    body.is_empty()
        || ex.json().is_some_and(|v| match v {
            serde_json::Value::Null => true,
            serde_json::Value::Object(m) => m.is_empty(),
            serde_json::Value::Array(a) => a.is_empty(),
            _ => false,
        })
}

/// `use_after_delete`: a GET answers 2xx, with a body that shows
/// something, for a path a DELETE answered 2xx for earlier, with nothing
/// recreating it in between.
pub fn use_after_delete(s: &Sequence<'_>) -> Option<Found> {
    let ex = s.ex;
    let status = ex.status?;
    if ex.request.method != "GET" || !(200..300).contains(&status) || shows_nothing(ex) {
        return None;
    }
    let path = path_of(ex);
    // Walk back to the latest request that changed this very path.
    for prev in s.earlier.iter().rev() {
        let same = path_of(prev) == path;
        if same && prev.request.method == "DELETE" && prev.is_success() {
            return ((s.single)(prev) && !of_another_kind(s, ex)).then(|| {
                Found::new(
                    &prev.request.operation,
                    format!(
                        "GET {path} answered {status} after DELETE {path} answered {}",
                        prev.status.unwrap_or(0)
                    ),
                    String::new(),
                )
            });
        }
        if same && matches!(prev.request.method.as_str(), "PUT" | "POST") && prev.is_success() {
            return None;
        }
        // A creation may reuse the deleted id (json-server hands out
        // max(id) + 1): the path names a new resource then.
        if prev.request.method == "POST" && prev.is_success() && creates(prev, path, s.location) {
            return None;
        }
    }
    None
}

/// What a GET answered 404 or 410 follows up on: the latest earlier
/// success that is not a GET, unless something done since explains the
/// absence (a deleted parent, another change to the path).
enum Missing<'a> {
    /// The `Location` `prev` gave is this path.
    Located(&'a Exchange, &'a str),
    /// A POST to the collection created this path's id.
    Created(&'a Exchange, String),
}

fn missing<'a>(s: &Sequence<'a>) -> Option<Missing<'a>> {
    let ex = s.ex;
    if ex.request.method != "GET" || !matches!(ex.status?, 404 | 410) {
        return None;
    }
    // A negative test's read carries a value chosen to be wrong or odd (a
    // 10,000-character query value, which PowerDNS answers 404 whatever the
    // path): its 404 is about that value, not about what was made.
    if ex.request.breach.is_some() {
        return None;
    }
    if of_another_kind(s, ex) {
        return None;
    }
    let path = path_of(ex);
    for prev in s.earlier.iter().rev() {
        if prev.request.method == "GET" {
            continue;
        }
        // Deleting a parent takes its children with it.
        let parent_deleted = prev.request.method == "DELETE"
            && path.starts_with(&format!("{}/", path_of(prev).trim_end_matches('/')));
        if !prev.is_success() {
            // A change to this path (or a parent's deletion) answered with a
            // server error, or never answered, may still have been done: a
            // DELETE that removes the row and then fails on what hangs off it.
            let unknown = prev.status.is_none_or(super::is_server_error);
            if unknown && (parent_deleted || path_of(prev) == path) {
                return None;
            }
            continue;
        }
        if parent_deleted {
            return None;
        }
        if let Some(loc) = prev.header("location")
            && (s.location)(loc)
                .as_deref()
                .map(|p| p.split('?').next().unwrap_or(""))
                == Some(path)
        {
            return Some(Missing::Located(prev, loc));
        }
        if prev.request.method == "POST"
            && let Some(id) = created_id(prev)
        {
            let item = format!("{}/{id}", path_of(prev).trim_end_matches('/'));
            if item == path {
                return Some(Missing::Created(prev, id));
            }
        }
        // Anything done since to this path explains the 404.
        if path_of(prev) == path {
            return None;
        }
    }
    None
}

/// `dangling_location`: a GET of the `Location` a 2xx answer gave answers
/// 404 or 410.
pub fn dangling_location(s: &Sequence<'_>) -> Option<Found> {
    let Missing::Located(prev, loc) = missing(s)? else {
        return None;
    };
    Some(Found::new(
        &prev.request.operation,
        format!(
            "the Location {loc} of {} {} ({}) answers {}",
            prev.request.method,
            path_of(prev),
            prev.status.unwrap_or(0),
            s.ex.status.unwrap_or(0)
        ),
        String::new(),
    ))
}

/// `created_not_readable`: a GET of `collection/{id}` answers 404 or 410
/// right after a POST to the collection answered 2xx with that id.
pub fn created_not_readable(s: &Sequence<'_>) -> Option<Found> {
    let Missing::Created(prev, id) = missing(s)? else {
        return None;
    };
    Some(Found::new(
        &prev.request.operation,
        format!(
            "POST {} created {id} ({}), but GET {} answers {}",
            path_of(prev),
            prev.status.unwrap_or(0),
            path_of(s.ex),
            s.ex.status.unwrap_or(0)
        ),
        String::new(),
    ))
}

/// `non_idempotent`: a PUT or DELETE repeated identically right after a
/// 2xx answers a 4xx it should not.
pub fn non_idempotent(s: &Sequence<'_>) -> Option<Found> {
    let ex = s.ex;
    let status = ex.status?;
    let method = ex.request.method.as_str();
    if !matches!(method, "PUT" | "DELETE") {
        return None;
    }
    let prev = s.earlier.last()?;
    let identical = prev.request.method == ex.request.method
        && prev.request.path == ex.request.path
        && prev.request.body == ex.request.body;
    if !identical || !prev.is_success() {
        return None;
    }
    // 412: the repeat carries a precondition (`If-Match`) that the first
    // request rightly made stale. 401/403: creating a resource can change
    // who may write it (an account made anonymously is then its owner's to
    // change).
    let changed = match method {
        "PUT" => (400..500).contains(&status) && !matches!(status, 401 | 403 | 412),
        _ => (400..500).contains(&status) && !matches!(status, 404 | 410),
    };
    changed.then(|| {
        Found::new(
            &ex.request.operation,
            format!(
                "{method} {} answered {} and then {status} when repeated",
                path_of(ex),
                prev.status.unwrap_or(0)
            ),
            String::new(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::RequestSpec;

    fn ex(method: &str, path: &str, status: u16, location: Option<&str>) -> Exchange {
        Exchange {
            request: RequestSpec {
                operation: format!("{method} {path}"),
                method: method.into(),
                path: path.into(),
                headers: vec![],
                body: None,
                content_type: None,
                graphql_query: false,
                breach: None,
                identity: None,
            },
            status: Some(status),
            headers: location
                .map(|l| vec![("location".to_string(), l.to_string())])
                .unwrap_or_default(),
            ..Default::default()
        }
    }

    fn codes(earlier: &[Exchange], last: &Exchange) -> Vec<&'static str> {
        let loc = |l: &str| Some(l.to_string());
        // Test paths are `/collection/id`: two segments name one resource.
        let single = |e: &Exchange| e.request.path.matches('/').count() == 2;
        // `/articles/…` and `/tenants/…` are named by slug and name.
        let param = |e: &Exchange| {
            let p = e.request.path.as_str();
            if p.starts_with("/articles/") {
                Some("slug".to_string())
            } else if p.starts_with("/tenants/") {
                Some("tenant_name".to_string())
            } else {
                Some("id".to_string())
            }
        };
        findings(&Sequence {
            earlier,
            ex: last,
            location: &loc,
            single: &single,
            param: &param,
        })
        .iter()
        .map(|f| f.code.as_str())
        .collect()
    }

    #[test]
    fn reads_after_delete_and_dangling_locations_fire() {
        let del = ex("DELETE", "/b/1", 204, None);
        let mut read = ex("GET", "/b/1", 200, None);
        read.body = r#"{"id":1}"#.into();
        assert_eq!(
            codes(std::slice::from_ref(&del), &read),
            ["use_after_delete"]
        );
        // An empty object shows no resource.
        let mut empty = ex("GET", "/b/1", 200, None);
        empty.body = "{}".into();
        assert!(codes(std::slice::from_ref(&del), &empty).is_empty());
        assert!(codes(&[del], &ex("GET", "/b/1", 404, None)).is_empty());
        let made = ex("POST", "/b", 201, Some("/r/7"));
        assert_eq!(
            codes(&[made], &ex("GET", "/r/7", 404, None)),
            ["dangling_location"]
        );
        let made = ex("POST", "/b", 201, Some("/b/7"));
        assert!(codes(&[made], &ex("GET", "/b/7", 200, None)).is_empty());
        // A DELETE that failed with a 500 may still have deleted: its 404
        // explains itself (json-server deletes, then fails on the comments).
        let made = ex("POST", "/b", 201, Some("/b/7"));
        let failed = ex("DELETE", "/b/7", 500, None);
        assert!(codes(&[made.clone(), failed], &ex("GET", "/b/7", 404, None)).is_empty());
        // A negative test's read (a deliberately odd query value) says
        // nothing about what was made.
        let made = ex("POST", "/b", 201, Some("/b/7"));
        let mut odd = ex("GET", "/b/7", 404, None);
        odd.request.breach = Some(crate::execution::Breach {
            input: "query q".into(),
            kind: crate::execution::BreachKind::Unusual,
            class: None,
        });
        assert!(codes(std::slice::from_ref(&made), &odd).is_empty());
        // One the server refused (4xx) did not.
        let refused = ex("DELETE", "/b/7", 403, None);
        assert_eq!(
            codes(&[made, refused], &ex("GET", "/b/7", 404, None)),
            ["dangling_location"]
        );
    }

    #[test]
    fn deleting_a_collection_promises_nothing_about_reading_it() {
        let del = ex("DELETE", "/things", 204, None);
        assert!(codes(&[del], &ex("GET", "/things", 200, None)).is_empty());
    }

    #[test]
    fn a_reused_id_is_a_new_resource() {
        let del = ex("DELETE", "/posts/7", 200, None);
        let mut again = ex("POST", "/posts", 201, None);
        again.body = r#"{"id":7,"title":"x"}"#.into();
        assert!(codes(&[del.clone(), again], &ex("GET", "/posts/7", 200, None)).is_empty());
        let again = ex("POST", "/posts", 201, Some("/posts/7"));
        assert!(codes(&[del, again], &ex("GET", "/posts/7", 200, None)).is_empty());
    }

    #[test]
    fn a_deleted_parent_explains_a_missing_child() {
        let made = ex("POST", "/p/4/t", 201, Some("/p/4/t/9"));
        let gone = ex("DELETE", "/p/4", 204, None);
        assert!(codes(&[made, gone], &ex("GET", "/p/4/t/9", 404, None)).is_empty());
    }

    #[test]
    fn a_repeated_put_that_fails_is_not_idempotent() {
        let put = ex("PUT", "/b/1", 200, None);
        assert_eq!(
            codes(std::slice::from_ref(&put), &ex("PUT", "/b/1", 409, None)),
            ["non_idempotent"]
        );
        assert!(codes(std::slice::from_ref(&put), &ex("PUT", "/b/1", 200, None)).is_empty());
        // A conditional PUT's precondition is stale once it succeeded.
        assert!(codes(std::slice::from_ref(&put), &ex("PUT", "/b/1", 412, None)).is_empty());
        assert!(codes(&[put], &ex("PUT", "/b/1", 401, None)).is_empty());
        let del = ex("DELETE", "/b/1", 204, None);
        assert!(codes(&[del], &ex("DELETE", "/b/1", 404, None)).is_empty());
    }

    #[test]
    fn an_id_where_a_name_goes_is_no_evidence() {
        let mut made = ex("POST", "/articles", 201, None);
        made.body = r#"{"id":5,"slug":"a-5"}"#.into();
        let del = ex("DELETE", "/articles/5", 204, None);
        let mut read = ex("GET", "/articles/5", 200, None);
        read.body = r#"{"id":9}"#.into();
        assert!(codes(&[made.clone(), del], &read).is_empty());
        // The slug itself is evidence.
        let del = ex("DELETE", "/articles/a-5", 204, None);
        let mut read = ex("GET", "/articles/a-5", 200, None);
        read.body = r#"{"id":5}"#.into();
        assert_eq!(codes(&[made, del], &read), ["use_after_delete"]);
        let mut tenant = ex("POST", "/tenants", 201, None);
        tenant.body = r#"{"id":724,"name":"abc"}"#.into();
        assert!(codes(&[tenant], &ex("GET", "/tenants/724", 404, None)).is_empty());
        // An id where an id goes is.
        let mut book = ex("POST", "/books", 201, None);
        book.body = r#"{"id":7,"name":"n"}"#.into();
        assert_eq!(
            codes(&[book], &ex("GET", "/books/7", 404, None)),
            ["created_not_readable"]
        );
    }
}
