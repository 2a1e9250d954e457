//! The operations a run must never call (`--exclude`, or left out by
//! `--include`), checked on every request the engine is about to send, so
//! no phase (search, follow-ups, confirmation, suite) can reach them.

use std::collections::HashSet;

/// One operation's method and path template (`DELETE /users/{id}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    method: String,
    template: String,
}

impl Route {
    /// The route of `method` on the path template `path`.
    pub fn new(method: &str, path: &str) -> Route {
        Route {
            method: method.to_ascii_uppercase(),
            template: path.to_string(),
        }
    }

    /// How many literal segments match `path` (requested with `method`), or
    /// `None` when it is not this route.
    fn fit(&self, method: &str, path: &str) -> Option<usize> {
        if !self.method.eq_ignore_ascii_case(method) {
            return None;
        }
        super::wire::template_fit(&self.template, path)
    }
}

/// What may not be sent: excluded operations by name, and their routes
/// (which a request built without an operation, such as a follow-up of a
/// `Location`, may still hit).
#[derive(Debug, Clone, Default)]
pub struct Fence {
    names: HashSet<String>,
    closed: Vec<Route>,
    open: Vec<Route>,
}

impl Fence {
    /// A fence around the operations named `excluded` with routes `closed`;
    /// `open` are the kept operations' routes, so `/users/me` stays open
    /// when only `/users/{id}` is closed.
    pub fn new(
        excluded: impl IntoIterator<Item = String>,
        closed: Vec<Route>,
        open: Vec<Route>,
    ) -> Fence {
        Fence {
            names: excluded.into_iter().collect(),
            closed,
            open,
        }
    }

    /// Whether nothing is fenced off.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.closed.is_empty()
    }

    /// Whether `operation` (a graph name; GraphQL: `Mutation.field`) is fenced off.
    pub fn closes_operation(&self, operation: &str) -> bool {
        self.names.contains(operation)
    }

    /// Whether a request named `operation`, sent with `method` to `path`
    /// (relative to the target, query included), would reach a fenced-off
    /// operation: by its name, or by a route that fits it better than any
    /// kept operation's.
    pub fn refuses(&self, operation: &str, method: &str, path: &str) -> bool {
        if self.is_empty() {
            return false;
        }
        if self.closes_operation(operation) {
            return true;
        }
        let best = |routes: &[Route]| routes.iter().filter_map(|r| r.fit(method, path)).max();
        // The kept routes (possibly thousands) are scanned only when a
        // fenced one fits: this runs before every request.
        match best(&self.closed) {
            Some(closed) => best(&self.open).is_none_or(|open| closed >= open),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_close_what_no_kept_route_fits_better() {
        let fence = Fence::new(
            ["deleteUser".to_string()],
            vec![
                Route::new("DELETE", "/users/{id}"),
                Route::new("GET", "/admin/{x}"),
            ],
            vec![Route::new("GET", "/admin/status")],
        );
        assert!(fence.refuses("deleteUser", "POST", "/anything"));
        assert!(fence.refuses("whatever (Location)", "DELETE", "/users/7?force=1"));
        assert!(!fence.refuses("getUser", "GET", "/users/7"));
        assert!(!fence.refuses("status", "GET", "/admin/status"));
        assert!(fence.refuses("x", "GET", "/admin/other"));
        assert!(!Fence::default().refuses("deleteUser", "DELETE", "/users/7"));
    }
}
