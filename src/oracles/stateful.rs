//! Stateful checks, in the spirit of RESTler's checkers and Schemathesis's
//! stateful checks: they judge an answer by what earlier requests of the same
//! test did. The run adds the follow-up requests they need (a GET after a
//! DELETE, of a `Location`, of a created item; a repeated PUT or DELETE).

use super::Finding;
use crate::execution::Exchange;

fn path_of(ex: &Exchange) -> &str {
    ex.request.path.split('?').next().unwrap_or("")
}

/// The id a creation answered with: the `Location`'s last segment, else the
/// body's top-level `id`.
fn created_id(ex: &Exchange) -> Option<String> {
    super::witness::given_ids(ex).into_iter().next()
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

/// The stateful findings for `ex`, given the earlier exchanges of its test.
/// `location` resolves a `Location` header to a request path under the target;
/// `single` tells whether a request's operation names one resource
/// ([`super::witness::names_one_resource`]): deleting a collection or calling
/// an echo is no promise that a later read fails.
pub fn findings(
    earlier: &[Exchange],
    ex: &Exchange,
    location: &dyn Fn(&str) -> Option<String>,
    single: &dyn Fn(&Exchange) -> bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(status) = ex.status else { return out };
    let method = ex.request.method.as_str();
    let path = path_of(ex);
    if method == "GET" {
        // Walk back to the latest request that changed this very path.
        for prev in earlier.iter().rev() {
            let same = path_of(prev) == path;
            if same && prev.request.method == "DELETE" && prev.is_success() {
                if (200..300).contains(&status) && single(prev) {
                    out.push(Finding::new(
                        "use_after_delete",
                        &prev.request.operation,
                        format!(
                            "GET {path} answered {status} after DELETE {path} answered {}",
                            prev.status.unwrap_or(0)
                        ),
                        String::new(),
                    ));
                }
                break;
            }
            if same && matches!(prev.request.method.as_str(), "PUT" | "POST") && prev.is_success() {
                break;
            }
            // A creation may reuse the deleted id (json-server hands out
            // max(id) + 1): the path names a new resource then.
            if prev.request.method == "POST" && prev.is_success() && creates(prev, path, location) {
                break;
            }
        }
        if matches!(status, 404 | 410) {
            // Find the creation this GET follows up on, if any.
            for prev in earlier.iter().rev() {
                if !prev.is_success() || prev.request.method == "GET" {
                    continue;
                }
                // Deleting a parent takes its children with it.
                let parent_deleted = prev.request.method == "DELETE"
                    && path.starts_with(&format!("{}/", path_of(prev).trim_end_matches('/')));
                if parent_deleted {
                    break;
                }
                if let Some(loc) = prev.header("location") {
                    if location(loc)
                        .as_deref()
                        .map(|p| p.split('?').next().unwrap_or(""))
                        == Some(path)
                    {
                        out.push(Finding::new(
                            "dangling_location",
                            &prev.request.operation,
                            format!(
                                "the Location {loc} of {} {} ({}) answers {status}",
                                prev.request.method,
                                path_of(prev),
                                prev.status.unwrap_or(0)
                            ),
                            String::new(),
                        ));
                        break;
                    }
                }
                if prev.request.method == "POST" {
                    if let Some(id) = created_id(prev) {
                        let item = format!("{}/{id}", path_of(prev).trim_end_matches('/'));
                        if item == path {
                            out.push(Finding::new(
                                "created_not_readable",
                                &prev.request.operation,
                                format!(
                                    "POST {} created {id} ({}), but GET {path} answers {status}",
                                    path_of(prev),
                                    prev.status.unwrap_or(0)
                                ),
                                String::new(),
                            ));
                            break;
                        }
                    }
                }
                // Anything done since to this path explains the 404.
                if path_of(prev) == path {
                    break;
                }
            }
        }
    }
    if matches!(method, "PUT" | "DELETE") {
        if let Some(prev) = earlier.last() {
            let identical = prev.request.method == ex.request.method
                && prev.request.path == ex.request.path
                && prev.request.body == ex.request.body;
            if identical && prev.is_success() {
                // 412: the repeat carries a precondition (`If-Match`) that
                // the first request rightly made stale. 401/403: creating a
                // resource can change who may write it (an account made
                // anonymously is then its owner's to change).
                let changed = match method {
                    "PUT" => (400..500).contains(&status) && !matches!(status, 401 | 403 | 412),
                    _ => (400..500).contains(&status) && !matches!(status, 404 | 410),
                };
                if changed {
                    out.push(Finding::new(
                        "non_idempotent",
                        &ex.request.operation,
                        format!(
                            "{method} {path} answered {} and then {status} when repeated",
                            prev.status.unwrap_or(0)
                        ),
                        String::new(),
                    ));
                }
            }
        }
    }
    out
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
        findings(earlier, last, &loc, &single)
            .iter()
            .map(|f| f.code)
            .collect()
    }

    #[test]
    fn reads_after_delete_and_dangling_locations_fire() {
        let del = ex("DELETE", "/b/1", 204, None);
        assert_eq!(
            codes(std::slice::from_ref(&del), &ex("GET", "/b/1", 200, None)),
            ["use_after_delete"]
        );
        assert!(codes(&[del], &ex("GET", "/b/1", 404, None)).is_empty());
        let made = ex("POST", "/b", 201, Some("/r/7"));
        assert_eq!(
            codes(&[made], &ex("GET", "/r/7", 404, None)),
            ["dangling_location"]
        );
        let made = ex("POST", "/b", 201, Some("/b/7"));
        assert!(codes(&[made], &ex("GET", "/b/7", 200, None)).is_empty());
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
}
