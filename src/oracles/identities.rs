//! The identity checks: what one caller may do to what another created,
//! judged over a test whose requests go as several identities
//! ([`crate::execution::RequestSpec::identity`]). A resource's owner is the
//! caller whose creation (a 2xx POST or PUT) gave its id (or sent the name
//! it goes by); a request names it when the id is a segment of its path.
//! Only requests that carry an identity are judged, so a run with one
//! identity is judged as before.

use super::Found;
use super::identity::{given_ids, sent_names};
use crate::execution::Exchange;
use crate::execution::identities::ANONYMOUS;

/// Who sent a request: its identity, or the run's own (`main`, named as
/// given).
fn caller<'a>(ex: &'a Exchange, main: &'a str) -> &'a str {
    ex.request.identity.as_deref().unwrap_or(main)
}

fn path_only(ex: &Exchange) -> &str {
    ex.request
        .path
        .split_once('?')
        .map_or(ex.request.path.as_str(), |(p, _)| p)
}

/// The earlier creation by another caller whose id `ex`'s path names:
/// that exchange and the id.
fn owned_by_other<'a>(
    ex: &Exchange,
    earlier: &'a [Exchange],
    main: &str,
) -> Option<(&'a Exchange, String)> {
    let segments: Vec<String> = path_only(ex)
        .split('/')
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect();
    earlier.iter().rev().find_map(|e| {
        let creates = matches!(e.request.method.as_str(), "POST" | "PUT") && e.is_success();
        if !creates || caller(e, main) == caller(ex, main) || caller(e, main) == ANONYMOUS {
            return None;
        }
        // A name the body chose names a resource below the collection it
        // was created in, not any segment that happens to read the same.
        let below = path_only(e).trim_end_matches('/').split('/').count();
        given_ids(e)
            .into_iter()
            .find(|id| segments.iter().any(|s| s == id))
            .or_else(|| {
                sent_names(e)
                    .into_iter()
                    .find(|n| segments.iter().skip(below).any(|s| s == n))
            })
            .map(|id| (e, id))
    })
}

/// Whether `who` was shown the resource `id` that `created` made in a
/// listing of the collection it was made in, earlier in the test: the
/// API shares such resources between its users (a workspace), rather than
/// keeping them private to whoever made them.
fn listed_to(
    who: &str,
    created: &Exchange,
    id: &str,
    earlier: &[Exchange],
    main: &str,
) -> Option<String> {
    fn holds(v: &serde_json::Value, id: &str, depth: usize) -> bool {
        match v {
            serde_json::Value::Object(m) => {
                depth > 0 && m.values().any(|x| holds(x, id, depth - 1))
            }
            serde_json::Value::Array(a) => depth > 0 && a.iter().any(|x| holds(x, id, depth - 1)),
            other => super::identity::text(other).as_deref() == Some(id),
        }
    }
    earlier
        .iter()
        .find(|e| {
            caller(e, main) == who
                && e.request.method == "GET"
                && e.is_success()
                && path_only(e) == path_only(created)
                && e.json().is_some_and(|b| holds(b, id, 4))
        })
        .map(|e| format!("GET {}", path_only(e)))
}

fn is_write(ex: &Exchange) -> bool {
    matches!(ex.request.method.as_str(), "PUT" | "PATCH" | "DELETE")
}

/// `other_identity_write` (WFC 306): an identity other than the owner
/// modified or deleted the owner's resource, answered 2xx. Stronger when
/// the same identity was refused another method on it.
pub fn other_identity_write(ex: &Exchange, earlier: &[Exchange], main: &str) -> Option<Found> {
    let who = ex.request.identity.as_deref()?;
    if who == ANONYMOUS || !is_write(ex) || !ex.is_success() {
        return None;
    }
    let (created, id) = owned_by_other(ex, earlier, main)?;
    let refused = earlier.iter().find(|e| {
        caller(e, main) == who
            && path_only(e) == path_only(ex)
            && e.request.method != ex.request.method
            && matches!(e.status, Some(401 | 403))
    });
    let mut stronger = refused.map_or(String::new(), |r| {
        format!(
            "; {who} was refused {} on it ({}), so the server does guard it",
            r.request.method,
            r.status.unwrap_or(0)
        )
    });
    if let Some(listing) = listed_to(who, created, &id, earlier, main) {
        stronger.push_str(&format!(
            "; {who} also sees it listed ({listing}): the API shares these resources between its users rather than keeping them to their creator, and in a shared workspace where every member may change them this is by design (then --skip-check other_identity_write)"
        ));
    }
    Some(Found::new(
        &ex.request.operation,
        format!(
            "identity {who} was answered {} to {} {} on the resource {id} that identity {} created ({} {}){stronger}",
            ex.status.unwrap_or(0),
            ex.request.method,
            path_only(ex),
            caller(created, main),
            created.request.method,
            path_only(created)
        ),
        format!(
            "{who} on {}'s {}",
            caller(created, main),
            created.request.operation
        ),
    ))
}

/// `other_identity_read`: an identity refused (401, 403) a change of
/// another's resource reads that same resource, answered 2xx with a body:
/// the server guards it against that identity, but not its reading.
pub fn other_identity_read(ex: &Exchange, earlier: &[Exchange], main: &str) -> Option<Found> {
    let who = ex.request.identity.as_deref()?;
    if who == ANONYMOUS || ex.request.method != "GET" || !ex.is_success() {
        return None;
    }
    let body = ex.body.trim();
    if body.is_empty() || matches!(body, "{}" | "[]" | "null") {
        return None;
    }
    let refused = earlier.iter().find(|e| {
        caller(e, main) == who
            && path_only(e) == path_only(ex)
            && is_write(e)
            && matches!(e.status, Some(401 | 403))
    })?;
    let (created, id) = owned_by_other(ex, earlier, main)?;
    // Shown it in the collection's listing, the identity reads it by the
    // API's design: the refusal is only of the change.
    if listed_to(who, created, &id, earlier, main).is_some() {
        return None;
    }
    Some(Found::new(
        &ex.request.operation,
        format!(
            "identity {who} was refused {} on the resource {id} that identity {} created ({} {}), but GET {} answered {} with its content",
            refused.request.method,
            caller(created, main),
            created.request.method,
            path_only(created),
            path_only(ex),
            ex.status.unwrap_or(0)
        ),
        format!(
            "{who} on {}'s {}",
            caller(created, main),
            created.request.operation
        ),
    ))
}

/// `existence_leak` (WFC 304): an identity is refused another's existing
/// resource with 403 and told 404 for a missing one by the same operation:
/// the status tells which resources exist.
pub fn existence_leak(ex: &Exchange, earlier: &[Exchange], main: &str) -> Option<Found> {
    let who = ex.request.identity.as_deref()?;
    if ex.status != Some(404) {
        return None;
    }
    let refused = earlier.iter().rev().find(|e| {
        caller(e, main) == who
            && e.request.operation == ex.request.operation
            && e.request.method == ex.request.method
            && e.status == Some(403)
            && path_only(e) != path_only(ex)
    })?;
    let (created, id) = owned_by_other(refused, earlier, main)?;
    // The 404 is for something no one in the test created.
    if owned_by_other(ex, earlier, main).is_some() {
        return None;
    }
    Some(Found::new(
        &ex.request.operation,
        format!(
            "identity {who} is refused the resource {id} that identity {} created ({} {}) with 403, but told 404 for a missing one ({} {}): the status tells which resources exist",
            caller(created, main),
            refused.request.method,
            path_only(refused),
            ex.request.method,
            path_only(ex)
        ),
        format!(
            "{who} on {}'s {}",
            caller(created, main),
            created.request.operation
        ),
    ))
}

/// `valid_credentials_told_401` (WFC 305): an identity whose credentials
/// were accepted (2xx) earlier in the test is answered 401 here: it is
/// known, and should be told 403 if it may not.
pub fn valid_credentials_told_401(
    ex: &Exchange,
    earlier: &[Exchange],
    main: &str,
) -> Option<Found> {
    let who = ex.request.identity.as_deref()?;
    if who == ANONYMOUS || ex.status != Some(401) {
        return None;
    }
    let accepted = earlier.iter().find(|e| {
        caller(e, main) == who && e.is_success() && e.request.operation != ex.request.operation
    })?;
    Some(Found::new(
        &ex.request.operation,
        format!(
            "identity {who}, whose credentials {} {} accepted ({}), was answered 401 to {} {}: a known caller refused should be told 403",
            accepted.request.method,
            path_only(accepted),
            accepted.status.unwrap_or(0),
            ex.request.method,
            path_only(ex)
        ),
        who.to_string(),
    ))
}

/// `anonymous_modification` (WFC 308): a PUT, PATCH or DELETE sent with
/// no credentials to an operation whose description requires them was
/// answered 2xx.
pub fn anonymous_modification(op: &crate::model::Operation, ex: &Exchange) -> Option<Found> {
    if ex.request.identity.as_deref() != Some(ANONYMOUS)
        || !is_write(ex)
        || !ex.is_success()
        || !crate::model::security::requires_credentials(&op.security)
    {
        return None;
    }
    Some(Found {
        check: Some(super::FaultCheck::Success),
        ..Found::new(
            &op.name,
            format!(
                "{} {} without any credentials was answered {}, although the description requires them ({})",
                ex.request.method,
                path_only(ex),
                ex.status.unwrap_or(0),
                op.security
                    .iter()
                    .map(|alt| alt.join(" + "))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
            String::new(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::RequestSpec;
    use crate::execution::identities::MAIN;

    fn ex(who: Option<&str>, method: &str, path: &str, status: u16, body: &str) -> Exchange {
        Exchange {
            request: RequestSpec {
                operation: format!("{method} {path}"),
                method: method.into(),
                path: path.into(),
                identity: who.map(str::to_string),
                ..Default::default()
            },
            status: Some(status),
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
            ..Default::default()
        }
    }

    #[test]
    fn another_identitys_write_on_the_owners_resource_fires() {
        let made = ex(None, "POST", "/notes", 201, r#"{"id":7}"#);
        let del = ex(Some("bob"), "DELETE", "/notes/7", 204, "");
        assert!(other_identity_write(&del, std::slice::from_ref(&made), MAIN).is_some());
        // Refused, or the owner's own, or another resource: silent.
        let refused = ex(Some("bob"), "DELETE", "/notes/7", 403, "");
        assert!(other_identity_write(&refused, std::slice::from_ref(&made), MAIN).is_none());
        let own = ex(None, "DELETE", "/notes/7", 204, "");
        assert!(other_identity_write(&own, std::slice::from_ref(&made), MAIN).is_none());
        let other = ex(Some("bob"), "DELETE", "/notes/8", 204, "");
        assert!(other_identity_write(&other, std::slice::from_ref(&made), MAIN).is_none());
        // Stronger when bob was refused another method on it.
        let put = ex(Some("bob"), "PUT", "/notes/7", 403, "");
        let f = other_identity_write(&del, &[made, put], MAIN).unwrap();
        assert!(
            f.message.contains("was refused PUT on it (403)"),
            "{}",
            f.message
        );
    }

    #[test]
    fn a_read_after_a_refused_change_of_the_same_resource_fires() {
        let made = ex(None, "POST", "/albums", 201, r#"{"id":7}"#);
        let del = ex(Some("bob"), "DELETE", "/albums/7", 403, "");
        let read = ex(Some("bob"), "GET", "/albums/7", 200, r#"{"id":7}"#);
        assert!(other_identity_read(&read, &[made.clone(), del.clone()], MAIN).is_some());
        // Not refused anything: a public resource is read by anyone.
        assert!(other_identity_read(&read, std::slice::from_ref(&made), MAIN).is_none());
        // Read as not found: nothing shown.
        let hidden = ex(Some("bob"), "GET", "/albums/7", 404, "");
        assert!(other_identity_read(&hidden, &[made.clone(), del.clone()], MAIN).is_none());
        // Listed to bob in the collection: a shared workspace, read by design.
        let listed = ex(Some("bob"), "GET", "/albums", 200, r#"[{"id":3},{"id":7}]"#);
        assert!(other_identity_read(&read, &[made.clone(), listed, del.clone()], MAIN).is_none());
        // A listing of bob's own that leaves it out says nothing.
        let own = ex(Some("bob"), "GET", "/albums", 200, r#"[{"id":3}]"#);
        assert!(other_identity_read(&read, &[made, own, del], MAIN).is_some());
    }

    #[test]
    fn a_write_on_what_the_identity_sees_listed_says_the_workspace_is_shared() {
        let made = ex(None, "POST", "/pools", 201, r#"{"name":"p1"}"#);
        let mut made_named = made.clone();
        made_named.request.body = Some(r#"{"name":"p1","slots":2}"#.into());
        let listed = ex(Some("bob"), "GET", "/pools", 200, r#"[{"name":"p1"}]"#);
        let patch = ex(Some("bob"), "PATCH", "/pools/p1", 200, r#"{"name":"p1"}"#);
        // The name the body chose is the resource's id.
        let f = other_identity_write(&patch, &[made_named.clone(), listed], MAIN).unwrap();
        assert!(f.message.contains("on the resource p1"), "{}", f.message);
        assert!(
            f.message.contains("bob also sees it listed (GET /pools)"),
            "{}",
            f.message
        );
        let f = other_identity_write(&patch, std::slice::from_ref(&made_named), MAIN).unwrap();
        assert!(!f.message.contains("listed"), "{}", f.message);
        // A name matches only below the collection it was made in.
        let elsewhere = ex(Some("bob"), "DELETE", "/p1/things", 204, "");
        assert!(other_identity_write(&elsewhere, &[made_named], MAIN).is_none());
    }

    #[test]
    fn a_403_for_existing_and_404_for_missing_is_a_leak() {
        let made = ex(None, "POST", "/notes", 201, r#"{"id":7}"#);
        let mut got = ex(Some("bob"), "GET", "/notes/7", 403, "");
        let mut missing = ex(Some("bob"), "GET", "/notes/987654321", 404, "");
        got.request.operation = "getNote".into();
        missing.request.operation = "getNote".into();
        assert!(existence_leak(&missing, &[made.clone(), got.clone()], MAIN).is_some());
        // 404 for both: nothing told.
        got.status = Some(404);
        assert!(existence_leak(&missing, &[made, got], MAIN).is_none());
    }

    #[test]
    fn a_401_after_the_same_credentials_were_accepted_fires() {
        let ok = ex(Some("bob"), "GET", "/notes", 200, "[]");
        let told = ex(Some("bob"), "GET", "/admin/users", 401, "");
        assert!(valid_credentials_told_401(&told, std::slice::from_ref(&ok), MAIN).is_some());
        assert!(valid_credentials_told_401(&told, &[], MAIN).is_none());
        let forbidden = ex(Some("bob"), "GET", "/admin/users", 403, "");
        assert!(valid_credentials_told_401(&forbidden, &[ok], MAIN).is_none());
    }
}
