//! Identities: the callers a run tests as besides its own credentials
//! (`--identity NAME='Header: value'`, `[identities]` in the config file, a
//! Web Fuzzing Commons auth file given to `--auth-file`). Their headers are
//! secrets like `-H` values; reproducers take them from one environment
//! variable per identity ([`env_var`]).

use serde_json::Value;

use super::auth::parse_header;

/// The name a request carries to go without any credentials.
pub const ANONYMOUS: &str = "anonymous";

/// The name of the run's own credentials (`-H`, `--auth-command`) when the
/// identities given name them no other way.
pub const MAIN: &str = "main";

/// One caller and the headers that say who it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    /// Its name, as the findings and reproducers name it.
    pub name: String,
    /// The headers it sends instead of the run's own.
    pub headers: Vec<(String, String)>,
}

/// A login request of an auth file, sent before the search; its answer
/// gives the identity's token.
#[derive(Debug, Clone, PartialEq)]
pub struct Login {
    /// The identity it logs in.
    pub name: String,
    /// `POST`, `GET`…
    pub method: String,
    /// The path on the target (`/login`).
    pub path: String,
    /// Headers the login request itself carries.
    pub headers: Vec<(String, String)>,
    /// Its body and media type, when it has one.
    pub body: Option<(String, String)>,
    /// Where the token is in the answer.
    pub extract: Extract,
    /// The header the token goes in, and its template (`Bearer {token}`).
    pub send: (String, String),
    /// What the login sends that must never be written (the password).
    pub secrets: Vec<String>,
}

/// Where a login answer holds the token.
#[derive(Debug, Clone, PartialEq)]
pub enum Extract {
    /// At a JSON pointer of the body.
    Body(String),
    /// In a header.
    Header(String),
}

/// What `--identity` and `[identities]` and an auth file give: identities
/// with fixed headers, and logins to send before the search.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Given {
    /// Identities whose headers are known now, in the order given.
    pub fixed: Vec<Identity>,
    /// Identities whose token a login request gives.
    pub logins: Vec<Login>,
    /// The name given first (the run's own identity when it has no
    /// credentials of its own).
    pub first: Option<String>,
}

impl Given {
    /// The identities of both, `self`'s first; a name given in both is an
    /// error naming it.
    pub fn and(mut self, other: Given) -> Result<Given, String> {
        for name in other.names() {
            if self.names().contains(&name) {
                return Err(format!(
                    "identity `{name}` is given both by --identity (or [identities]) and by --auth-file: give it once"
                ));
            }
        }
        self.first = self.first.or(other.first);
        self.fixed.extend(other.fixed);
        self.logins.extend(other.logins);
        Ok(self)
    }

    /// Whether any identity was given.
    pub fn is_empty(&self) -> bool {
        self.fixed.is_empty() && self.logins.is_empty()
    }

    /// The names given, in order.
    pub fn names(&self) -> Vec<&str> {
        self.fixed
            .iter()
            .map(|i| i.name.as_str())
            .chain(self.logins.iter().map(|l| l.name.as_str()))
            .collect()
    }
}

/// `text` on one line, its control characters dropped, for messages.
fn shown(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// Whether `name` may name an identity: letters, digits, `-` and `_`, and
/// neither of the reserved names.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 64
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
    {
        return Err(format!(
            "`{}` is not an identity name: use letters, digits, `-` and `_` (at most 64)",
            shown(name)
        ));
    }
    if name.eq_ignore_ascii_case(ANONYMOUS) || name.eq_ignore_ascii_case(MAIN) {
        return Err(format!(
            "`{name}` is reserved (`{ANONYMOUS}` is the caller without credentials, `{MAIN}` the run's own -H/--auth-command): choose another name"
        ));
    }
    Ok(())
}

/// Parses `--identity NAME='Header: value'`. An error never quotes the
/// header: it may hold a secret.
pub fn parse_flag(text: &str) -> Result<(String, (String, String)), String> {
    let Some((name, header)) = text.split_once('=') else {
        return Err(
            "write NAME='Header: value', e.g. --identity bob='Authorization: Bearer $BOB_TOKEN' (the text is not shown here, as it may hold a secret)"
                .to_string(),
        );
    };
    let name = name.trim();
    check_name(name)?;
    let header = parse_header(header).map_err(|e| format!("identity {name}: {e}"))?;
    Ok((name.to_string(), header))
}

/// Identities from `(name, header)` pairs: a repeated name adds a header
/// to its identity; the order is the order names first appear.
pub fn group(pairs: Vec<(String, (String, String))>) -> Vec<Identity> {
    let mut out: Vec<Identity> = Vec::new();
    for (name, header) in pairs {
        match out.iter_mut().find(|i| i.name == name) {
            Some(i) => i.headers.push(header),
            None => out.push(Identity {
                name,
                headers: vec![header],
            }),
        }
    }
    out
}

/// The environment variable a reproducer reads an identity's header from
/// (`CARTOGRAPH_IDENTITY_BOB`); a second header of the same identity goes
/// in `…_2`, and so on.
pub fn env_var(name: &str) -> String {
    let upper: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("CARTOGRAPH_IDENTITY_{upper}")
}

/// The identities of a Web Fuzzing Commons auth file, parsed (JSON or
/// YAML): each `auth` entry (with `authTemplate` filled in) gives
/// `fixedHeaders`, or a `loginEndpointAuth` whose answer gives a token.
/// Errors name the entry and never quote a value; the caller names the
/// file.
pub fn parse_auth_file(doc: &Value) -> Result<Given, String> {
    parse_auth(doc).map_err(|e| {
        format!("{e} (the Web Fuzzing Commons auth schema: https://github.com/WebFuzzing/Commons)")
    })
}

fn parse_auth(doc: &Value) -> Result<Given, String> {
    let root = doc
        .as_object()
        .ok_or("the document must be an object with an `auth` list")?;
    let entries = root
        .get("auth")
        .ok_or("no `auth` list (required)")?
        .as_array()
        .ok_or("`auth` must be a list")?;
    let template = match root.get("authTemplate") {
        None => serde_json::Map::new(),
        Some(Value::Object(t)) => t.clone(),
        Some(_) => return Err("`authTemplate` must be an object".into()),
    };
    let mut given = Given::default();
    for (i, entry) in entries.iter().enumerate() {
        let at = format!("auth[{i}]");
        let Value::Object(own) = entry else {
            return Err(format!("{at} must be an object"));
        };
        // The template's entries apply where the entry says nothing.
        let mut merged = template.clone();
        for (k, v) in own {
            merged.insert(k.clone(), v.clone());
        }
        let name = merged
            .get("name")
            .and_then(Value::as_str)
            .ok_or(format!("{at}: no `name` (required)"))?;
        check_name(name).map_err(|e| format!("{at}: {e}"))?;
        if given.names().contains(&name) {
            return Err(format!("{at}: the name `{name}` is given twice"));
        }
        given.first.get_or_insert_with(|| name.to_string());
        let at = format!("{at} ({name})");
        let fixed = match merged.get("fixedHeaders") {
            None => Vec::new(),
            Some(v) => headers(v).map_err(|e| format!("{at}.fixedHeaders: {e}"))?,
        };
        match merged.get("loginEndpointAuth") {
            Some(login) => {
                let mut login =
                    parse_login(name, login).map_err(|e| format!("{at}.loginEndpointAuth: {e}"))?;
                login.headers.extend(fixed);
                given.logins.push(login);
            }
            None if !fixed.is_empty() => given.fixed.push(Identity {
                name: name.to_string(),
                headers: fixed,
            }),
            None => {
                return Err(format!(
                    "{at}: neither `fixedHeaders` nor `loginEndpointAuth`: Cartograph cannot tell how it authenticates"
                ));
            }
        }
    }
    if given.is_empty() {
        return Err("the `auth` list is empty".into());
    }
    Ok(given)
}

fn headers(v: &Value) -> Result<Vec<(String, String)>, String> {
    let list = v.as_array().ok_or("must be a list of {name, value}")?;
    list.iter()
        .enumerate()
        .map(|(i, h)| {
            let field = |k: &str| {
                h.get(k)
                    .and_then(Value::as_str)
                    .ok_or(format!("[{i}]: no string `{k}` (required)"))
            };
            let (name, value) = (field("name")?, field("value")?);
            parse_header(&format!("{name}: {value}")).map_err(|e| format!("[{i}]: {e}"))
        })
        .collect()
}

fn parse_login(name: &str, v: &Value) -> Result<Login, String> {
    let text = |k: &str| v.get(k).and_then(Value::as_str);
    if text("externalEndpointURL").is_some() {
        return Err(
            "`externalEndpointURL` is not supported: Cartograph logs in only on the target; give `endpoint`, a path on it"
                .into(),
        );
    }
    let path = text("endpoint").ok_or("no `endpoint` (required)")?;
    if !path.starts_with('/') {
        return Err("`endpoint` must be a path on the target, starting with `/`".into());
    }
    let method = text("verb").ok_or("no `verb` (required)")?;
    if !["POST", "GET", "PATCH", "DELETE", "PUT"].contains(&method) {
        return Err(format!(
            "`verb` must be one of POST, GET, PATCH, DELETE, PUT, not `{}`",
            shown(method)
        ));
    }
    let content_type = text("contentType").unwrap_or("application/json");
    let mut secrets = Vec::new();
    let body = match (text("payloadRaw"), v.get("payloadUserPwd")) {
        (Some(raw), _) => Some((raw.to_string(), content_type.to_string())),
        (None, Some(p)) => {
            let field = |k: &str| {
                p.get(k)
                    .and_then(Value::as_str)
                    .ok_or(format!("payloadUserPwd: no string `{k}` (required)"))
            };
            let (user, user_field) = (field("username")?, field("usernameField")?);
            let (pw, pw_field) = (field("password")?, field("passwordField")?);
            secrets.push(pw.to_string());
            let body = if content_type.contains("x-www-form-urlencoded") {
                url::form_urlencoded::Serializer::new(String::new())
                    .append_pair(user_field, user)
                    .append_pair(pw_field, pw)
                    .finish()
            } else {
                serde_json::json!({ user_field: user, pw_field: pw }).to_string()
            };
            Some((body, content_type.to_string()))
        }
        (None, None) => None,
    };
    let headers = match v.get("headers") {
        None => Vec::new(),
        Some(h) => super::identities::headers(h).map_err(|e| format!("headers{e}"))?,
    };
    if v.get("expectCookies").and_then(Value::as_bool) == Some(true) && v.get("token").is_none() {
        return Err(
            "`expectCookies` without `token` is not supported: give `token` to say where the answer holds it"
                .into(),
        );
    }
    let token = v.get("token").ok_or("no `token` (required)")?;
    let field = |k: &str| {
        token
            .get(k)
            .and_then(Value::as_str)
            .ok_or(format!("token: no string `{k}` (required)"))
    };
    let selector = field("extractSelector")?;
    let extract = match field("extractFrom")? {
        "body" => Extract::Body(selector.to_string()),
        "header" => Extract::Header(selector.to_string()),
        other => {
            return Err(format!(
                "token.extractFrom must be `body` or `header`, not `{}`",
                shown(other)
            ));
        }
    };
    if field("sendIn")? != "header" {
        return Err("token.sendIn `query` is not supported: send the token in a header".into());
    }
    let send_name = field("sendName")?;
    let template = token
        .get("sendTemplate")
        .and_then(Value::as_str)
        .unwrap_or("{token}");
    parse_header(&format!("{send_name}: x")).map_err(|e| format!("token.sendName: {e}"))?;
    Ok(Login {
        name: name.to_string(),
        method: method.to_string(),
        path: path.to_string(),
        headers,
        body,
        extract,
        send: (send_name.to_string(), template.to_string()),
        secrets,
    })
}

impl Login {
    /// The request that logs in.
    pub fn request(&self) -> super::RequestSpec {
        super::RequestSpec {
            operation: format!("login of {}", self.name),
            method: self.method.clone(),
            path: self.path.clone(),
            headers: self.headers.clone(),
            content_type: self.body.as_ref().map(|(_, ct)| ct.clone()),
            body: self.body.as_ref().map(|(b, _)| b.clone()),
            identity: Some(ANONYMOUS.to_string()),
            ..Default::default()
        }
    }

    /// The identity the login's answer gives, or why it gives none (never
    /// quoting the answer, which may hold secrets).
    pub fn identity(
        &self,
        status: Option<u16>,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<Identity, String> {
        let failed = |why: String| {
            format!(
                "the login of identity {} ({} {}) {why}",
                self.name, self.method, self.path
            )
        };
        match status {
            Some(s) if (200..300).contains(&s) => {}
            Some(s) => return Err(failed(format!("was answered {s}"))),
            None => return Err(failed("got no answer".into())),
        }
        let token = match &self.extract {
            Extract::Header(name) => headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
                .ok_or_else(|| failed(format!("answered without a `{name}` header")))?,
            Extract::Body(pointer) => {
                let json: Value = serde_json::from_slice(body)
                    .map_err(|_| failed("answered a body that is not JSON".into()))?;
                match json.pointer(pointer) {
                    Some(Value::String(s)) => s.clone(),
                    Some(v @ Value::Number(_)) => v.to_string(),
                    _ => return Err(failed(format!("answered no string at `{pointer}`"))),
                }
            }
        };
        if token.is_empty() {
            return Err(failed("gave an empty token".into()));
        }
        Ok(Identity {
            name: self.name.clone(),
            headers: vec![(self.send.0.clone(), self.send.1.replace("{token}", &token))],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_group_by_name_and_never_quote_the_header() {
        let pairs = vec![
            parse_flag("bob=Authorization: Bearer b0b-t0ken").unwrap(),
            parse_flag("carol=X-Key: c").unwrap(),
            parse_flag("bob=X-Tenant: 2").unwrap(),
        ];
        let ids = group(pairs);
        assert_eq!(ids.len(), 2);
        assert_eq!(ids[0].name, "bob");
        assert_eq!(ids[0].headers.len(), 2);
        for bad in [
            "bob",
            "bob=Authorization Bearer s3cr3t",
            "b o b=X: s3cr3t",
            "anonymous=X: s3cr3t",
        ] {
            let e = parse_flag(bad).unwrap_err();
            assert!(!e.contains("s3cr3t"), "{e}");
        }
        assert_eq!(env_var("bob-2"), "CARTOGRAPH_IDENTITY_BOB_2");
    }

    #[test]
    fn a_wfc_auth_file_gives_fixed_headers_and_logins() {
        let doc = serde_json::json!({
            "schemaVersion": "0.2.0",
            "authTemplate": {"configs": {}},
            "auth": [
                {"name": "alice", "loginEndpointAuth": {"endpoint": "/login", "verb": "POST",
                    "payloadUserPwd": {"username": "alice", "password": "pw", "usernameField": "user", "passwordField": "pass"},
                    "token": {"extractFrom": "body", "extractSelector": "/token", "sendIn": "header",
                              "sendName": "Authorization", "sendTemplate": "Bearer {token}"}}},
                {"name": "admin", "fixedHeaders": [{"name": "X-Api-Key", "value": "adm1n-key"}]}
            ]
        });
        let given = parse_auth(&doc).unwrap();
        assert_eq!(given.fixed[0].name, "admin");
        let login = &given.logins[0];
        assert_eq!(
            login.body.as_ref().unwrap().0,
            r#"{"user":"alice","pass":"pw"}"#
        );
        let id = login
            .identity(Some(200), &[], br#"{"token":"t0k"}"#)
            .unwrap();
        assert_eq!(
            id.headers,
            [("Authorization".to_string(), "Bearer t0k".to_string())]
        );
        let e = login.identity(Some(401), &[], b"").unwrap_err();
        assert!(e.contains("alice") && e.contains("401"), "{e}");
    }

    #[test]
    fn a_bad_auth_file_is_told_where() {
        let err = |doc: Value| parse_auth(&doc).unwrap_err();
        assert!(err(serde_json::json!({})).contains("no `auth` list"));
        let e = err(serde_json::json!({"auth": [{"name": "a", "fixedHeaders": [{"name": "X"}]}]}));
        assert!(
            e.contains("auth[0] (a).fixedHeaders: [0]: no string `value`"),
            "{e}"
        );
        let e = err(serde_json::json!({"auth": [{"fixedHeaders": []}]}));
        assert!(e.contains("auth[0]: no `name`"), "{e}");
        let e = err(serde_json::json!({"auth": [{"name": "b"}]}));
        assert!(
            e.contains("neither `fixedHeaders` nor `loginEndpointAuth`"),
            "{e}"
        );
        let e = err(
            serde_json::json!({"auth": [{"name": "b", "loginEndpointAuth": {"endpoint": "/l", "verb": "POST", "token": {"extractFrom": "cookie", "extractSelector": "x", "sendIn": "header", "sendName": "A"}}}]}),
        );
        assert!(e.contains("token.extractFrom"), "{e}");
    }
}
