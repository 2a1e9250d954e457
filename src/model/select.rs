//! Which operations a run may touch: `--include` and `--exclude` patterns
//! matched against operationIds, `METHOD /path`, tags and GraphQL root fields.

use super::{Api, Method, Operation};

/// One pattern as the user wrote it, and what it is matched against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// The text as given (for messages and the report).
    pub text: String,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// `tag:NAME`: any of the operation's tags.
    Tag(String),
    /// `METHOD /path` (method `*` for any) or a bare `/path`.
    Route(Option<String>, String),
    /// An operationId, an operation's name, or a GraphQL root field
    /// (`Mutation.shutdown*`).
    Name(String),
}

impl Pattern {
    /// Reads a pattern; an empty one is an error.
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err("an empty pattern matches nothing: write an operationId, `METHOD /path`, `tag:NAME` or `Mutation.field`".into());
        }
        let kind = if let Some(tag) = t.strip_prefix("tag:") {
            Kind::Tag(tag.trim().to_string())
        } else if t.starts_with('/') {
            Kind::Route(None, t.to_string())
        } else if let Some((method, path)) = t.split_once(char::is_whitespace) {
            let path = path.trim();
            let method_ok = method == "*" || Method::from_http(method).is_some();
            // `DELETE *` is every DELETE, as people write it.
            if !method_ok || !(path.starts_with('/') || path.starts_with('*')) {
                return Err(format!(
                    "`{t}`: a route pattern is `METHOD /path` (GET, POST, … or *), e.g. `DELETE /users/*` or `DELETE *`"
                ));
            }
            let method = (method != "*").then(|| method.to_ascii_uppercase());
            Kind::Route(method, path.to_string())
        } else {
            Kind::Name(t.to_string())
        };
        Ok(Pattern {
            text: t.to_string(),
            kind,
        })
    }

    /// Whether `op` is one this pattern names.
    pub fn matches(&self, op: &Operation) -> bool {
        match &self.kind {
            Kind::Tag(tag) => op.tags.iter().any(|t| glob(tag, t, true)),
            Kind::Route(method, path) => {
                let http = Method::HTTP.contains(&op.method);
                http && method.as_deref().is_none_or(|m| m == op.method.as_str())
                    && glob(path, &op.path, false)
            }
            Kind::Name(name) => {
                glob(name, &op.name, false)
                    || op
                        .operation_id
                        .as_deref()
                        .is_some_and(|id| glob(name, id, false))
                    || graphql_name(op).is_some_and(|n| glob(name, &n, false))
            }
        }
    }
}

/// A GraphQL root field as users write it (`Mutation.shutdown`), whatever
/// the root type is called.
fn graphql_name(op: &Operation) -> Option<String> {
    let root = match op.method {
        Method::GraphqlQuery => "Query",
        Method::GraphqlMutation => "Mutation",
        Method::GraphqlSubscription => "Subscription",
        _ => return None,
    };
    Some(format!("{root}.{}", op.path))
}

/// Shell-style matching: `*` is any run of characters (`/` included) and `?`
/// one character; everything else is literal. Hand-written because glob
/// crates read `{a,b}` as alternatives, and path templates are full of braces
/// (`/pets/{petId}`).
fn glob(pattern: &str, text: &str, fold_case: bool) -> bool {
    let norm = |s: &str| -> Vec<char> {
        if fold_case {
            s.to_lowercase().chars().collect()
        } else {
            s.chars().collect()
        }
    };
    let (p, t) = (norm(pattern), norm(text));
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Whether `op` ends the session its credentials belong to (`logout`,
/// `signout`, `logoff`, revoking a token or a session), by its
/// operationId, its name or its path's literal segments: after one,
/// every request with the same credentials is refused.
pub fn ends_session(op: &Operation) -> bool {
    let named = |text: &str| {
        let w = super::names::words(text);
        let has = |a: &str| w.iter().any(|x| x == a);
        let pair = |a: &str, b: &str| w.windows(2).any(|p| p[0] == a && p[1] == b);
        has("logout")
            || has("signout")
            || has("logoff")
            || pair("log", "out")
            || pair("sign", "out")
            || pair("log", "off")
            || (has("revoke")
                && ["token", "tokens", "session", "sessions"]
                    .iter()
                    .any(|t| has(t)))
    };
    let literal: String = op
        .path
        .split('/')
        .filter(|s| !s.starts_with('{'))
        .collect::<Vec<_>>()
        .join("/");
    Method::HTTP.contains(&op.method)
        && (named(&op.name) || op.operation_id.as_deref().is_some_and(named) || named(&literal))
}

/// The `--include` and `--exclude` patterns of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// When any: only operations one of these names are kept.
    pub include: Vec<Pattern>,
    /// Operations any of these names are dropped (even when included).
    pub exclude: Vec<Pattern>,
}

impl Selection {
    /// Reads the patterns of `--include` and `--exclude`.
    pub fn parse(include: &[String], exclude: &[String]) -> Result<Selection, String> {
        let read = |list: &[String], flag: &str| {
            list.iter()
                .map(|p| Pattern::parse(p).map_err(|e| format!("--{flag} {e}")))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Selection {
            include: read(include, "include")?,
            exclude: read(exclude, "exclude")?,
        })
    }

    /// Whether no pattern was given.
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    /// Whether `op` is kept.
    pub fn keeps(&self, op: &Operation) -> bool {
        (self.include.is_empty() || self.include.iter().any(|p| p.matches(op)))
            && !self.exclude.iter().any(|p| p.matches(op))
    }

    /// The patterns that name none of `ops`.
    pub fn unmatched<'a>(&self, ops: impl Iterator<Item = &'a Operation> + Clone) -> Vec<String> {
        self.include
            .iter()
            .chain(&self.exclude)
            .filter(|p| !ops.clone().any(|op| p.matches(op)))
            .map(|p| p.text.clone())
            .collect()
    }

    /// Moves the operations this selection leaves out of `api` to its
    /// `left_out`.
    pub fn apply(&self, api: &mut Api) {
        leave_out(api, |op| !self.keeps(op));
    }

    /// Leaves out of `api` the operations that end the session
    /// ([`ends_session`]) but those an `--include` pattern names (the user
    /// asked for them); how many.
    pub fn leave_out_session_enders(&self, api: &mut Api) -> usize {
        leave_out(api, |op| {
            ends_session(op) && !self.include.iter().any(|p| p.matches(op))
        })
    }
}

/// Moves the operations of `api` that `out` says to its `left_out`; how many.
fn leave_out(api: &mut Api, out: impl Fn(&Operation) -> bool) -> usize {
    let (left, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut api.operations)
        .into_iter()
        .partition(|op| out(op));
    api.operations = kept;
    let n = left.len();
    api.left_out.extend(left);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, id: Option<&str>, method: Method, path: &str, tags: &[&str]) -> Operation {
        Operation {
            name: name.into(),
            operation_id: id.map(str::to_string),
            method,
            path: path.into(),
            summary: None,
            tags: tags.iter().map(|t| t.to_string()).collect(),
            deprecated: false,
            parameters: vec![],
            request_body: None,
            responses: Default::default(),
            pointer: String::new(),
            security: Vec::new(),
        }
    }

    #[test]
    fn operations_that_end_the_session_are_told_by_name_or_path() {
        let ends = |id: Option<&str>, m: Method, path: &str| {
            ends_session(&op(id.unwrap_or(path), id, m, path, &[]))
        };
        assert!(ends(Some("logout"), Method::Get, "/api/v2/auth/logout"));
        assert!(ends(None, Method::Post, "/auth/sign-out"));
        assert!(ends(Some("userLogOut"), Method::Post, "/session"));
        assert!(ends(None, Method::Delete, "/oauth/revoke_token"));
        assert!(ends(
            Some("revokeSession"),
            Method::Delete,
            "/sessions/{id}"
        ));
        assert!(!ends(Some("login"), Method::Post, "/auth/login"));
        assert!(!ends(
            Some("revokeGrant"),
            Method::Post,
            "/grants/{id}/revoke"
        ));
        assert!(!ends(None, Method::Get, "/catalogs/outlook"));
    }

    #[test]
    fn globs_treat_braces_as_text() {
        assert!(glob("/pets/{petId}", "/pets/{petId}", false));
        assert!(glob("/users/*", "/users/{id}/roles", false));
        assert!(!glob("/users/*", "/users", false));
        assert!(glob("delete*", "deleteUser", false));
        assert!(!glob("delete*", "undelete", false));
        assert!(glob("a?c", "abc", false));
        assert!(glob("Admin", "admin", true));
    }

    #[test]
    fn each_kind_of_pattern_names_its_operations() {
        let shutdown = op(
            "shutdown",
            Some("shutdown"),
            Method::Post,
            "/admin/shutdown",
            &["Admin"],
        );
        let delete = op(
            "DELETE /users/{id}",
            None,
            Method::Delete,
            "/users/{id}",
            &[],
        );
        let unload = op(
            "Mutation.unloadCode",
            None,
            Method::GraphqlMutation,
            "unloadCode",
            &[],
        );
        let p = |t: &str| Pattern::parse(t).unwrap();
        assert!(p("POST /admin/shutdown").matches(&shutdown));
        assert!(p("post /admin/*").matches(&shutdown));
        assert!(!p("GET /admin/*").matches(&shutdown));
        assert!(p("/admin/*").matches(&shutdown));
        assert!(p("tag:admin").matches(&shutdown));
        assert!(p("shut*").matches(&shutdown));
        assert!(p("DELETE /users/*").matches(&delete));
        assert!(p("* /users/{id}").matches(&delete));
        assert!(p("DELETE /users/{id}").matches(&delete));
        assert!(p("Mutation.unload*").matches(&unload));
        assert!(!p("Query.*").matches(&unload));
        assert!(
            !p("/unloadCode").matches(&unload),
            "a GraphQL field is no route"
        );
        assert!(p("DELETE *").matches(&delete), "`METHOD *` is every path");
        assert!(!p("DELETE *").matches(&shutdown));
        assert!(Pattern::parse("FETCH /x").is_err());
        assert!(Pattern::parse("DELETE users").is_err());
        assert!(Pattern::parse("  ").is_err());
    }

    #[test]
    fn exclusion_wins_and_unmatched_patterns_are_named() {
        let ops = [
            op("listUsers", Some("listUsers"), Method::Get, "/users", &[]),
            op(
                "deleteUser",
                Some("deleteUser"),
                Method::Delete,
                "/users/{id}",
                &[],
            ),
        ];
        let s = Selection::parse(
            &["*User*".into()],
            &["DELETE /users/*".into(), "nothingLikeThis".into()],
        )
        .unwrap();
        assert!(s.keeps(&ops[0]));
        assert!(!s.keeps(&ops[1]));
        assert_eq!(s.unmatched(ops.iter()), ["nothingLikeThis"]);
    }
}
