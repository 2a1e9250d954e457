//! Which header names a description may make a run send: an HTTP token
//! (RFC 9110 §5.6.2), and none of the headers that frame the message or
//! route it, which the HTTP client sets itself.

/// Header names a description never sets: two OpenAPI says a header
/// parameter cannot be (`Content-Type`, `Authorization`: the body's media
/// type and the credentials are given elsewhere), and those that frame or
/// route the message. A `Host` taken from a description would send the
/// run's credentials to another virtual host; `Content-Length` or
/// `Transfer-Encoding` would make the server read another message.
///
/// OpenAPI ignores an `Accept` parameter too, but it neither frames nor
/// routes a request, and a documented `Accept` is how content negotiation
/// is tested (a stack trace for `Accept: text/csv`, tests/false_alarms.rs):
/// it is kept.
pub const IGNORED: [&str; 11] = [
    "content-type",
    "authorization",
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "content-length",
];

/// Whether `name` is an HTTP token: one or more of the visible ASCII
/// letters, digits and ``!#$%&'*+-.^_`|~``; nothing else may stand in a
/// header line's name (a CR LF there would start another header).
pub fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether OpenAPI itself says a header parameter named `name` is ignored
/// (`Content-Type` and `Authorization`: the body's media type and the
/// security schemes say them): it is left out without a warning, since the
/// description is not at fault (Spotify's declares `Authorization` on
/// every operation).
pub fn ignored_by_openapi(name: &str) -> bool {
    ["content-type", "authorization"]
        .iter()
        .any(|h| h.eq_ignore_ascii_case(name))
}

/// Why a description's header named `name` is not sent, or `None` when it may be.
pub fn refused(name: &str) -> Option<String> {
    if !is_token(name) {
        return Some(format!(
            "header name {} is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~ only)",
            crate::model::text::one_line(&format!("{name:?}"))
        ));
    }
    IGNORED
        .iter()
        .any(|h| h.eq_ignore_ascii_case(name))
        .then(|| {
            format!("header {name} is set by the client or the credentials, never by a description")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_tokens_outside_the_framing_headers_are_sent() {
        assert_eq!(refused("X-Request-Id"), None);
        assert_eq!(refused("x_a.b~c"), None);
        for bad in ["X-A\r\nX-Injected", "a b", "", "x:y", "é", "X\0"] {
            assert!(
                refused(bad).unwrap().contains("not an HTTP token"),
                "{bad:?}"
            );
        }
        assert!(!refused("X-A\r\nB").unwrap().contains('\n'));
        for framing in [
            "Host",
            "CONNECTION",
            "Upgrade",
            "Transfer-Encoding",
            "te",
            "Authorization",
        ] {
            assert!(refused(framing).unwrap().contains("never by a description"));
        }
        assert_eq!(refused("Accept"), None);
    }
}
