//! Resource templates (the resource-dependency paper, Table 1): a call on a
//! resource preceded by the calls that bring it into being: the creation of
//! each ancestor in its path (outermost first) and, for the CREATE-* templates,
//! of the resource itself.

use std::collections::HashMap;

use rand::Rng;

use super::values::Rng64;
use crate::model::{Api, Method};

/// A template of Table 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Template {
    /// #1–#5: the call alone (after its ancestors' creation).
    Alone,
    /// #6: create, then create again (the conflict case; for an action, the action twice).
    CreatePost,
    /// #7: create, then read.
    CreateGet,
    /// #8: create, then replace.
    CreatePut,
    /// #9: create, then one or two partial updates.
    CreatePatch,
    /// #10: create, then delete.
    CreateDelete,
}

impl Template {
    /// The name used in Table 1.
    pub fn name(self) -> &'static str {
        match self {
            Template::Alone => "ALONE",
            Template::CreatePost => "CREATE-POST",
            Template::CreateGet => "CREATE-GET",
            Template::CreatePut => "CREATE-PUT",
            Template::CreatePatch => "CREATE-PATCH",
            Template::CreateDelete => "CREATE-DELETE",
        }
    }
}

/// A template made concrete: operation positions, and which of them create a
/// resource the later calls rely on.
#[derive(Debug, Clone, PartialEq)]
pub struct Handling {
    /// The template.
    pub template: Template,
    /// The calls, last one being the operation under test.
    pub calls: Vec<usize>,
    /// Per call: whether it creates something later calls need (a failure
    /// makes the rest of the test pointless).
    pub creates: Vec<bool>,
}

/// The resource structure of an API: who creates what, by path.
#[derive(Debug, Clone)]
pub struct Resources {
    /// Per operation: its path's resource prefixes (ending in a parameter).
    prefixes: Vec<Vec<String>>,
    /// Normalised resource path → creators (POST on the collection first, then PUT).
    post_creators: HashMap<String, usize>,
    put_creators: HashMap<String, usize>,
    /// Per operation: whether its path ends in a parameter.
    on_item: Vec<bool>,
}

/// A path with parameter names erased (`/a/{}/b`), so that `/a/{id}` and
/// `/a/{aId}/b` are seen to share their first resource.
fn normalise(path: &str) -> String {
    path.split('/')
        .map(|s| {
            if s.starts_with('{') && s.ends_with('}') {
                "{}"
            } else {
                s
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

impl Resources {
    /// Indexes `api`'s REST operations that `allowed` admits.
    pub fn new(api: &Api, allowed: &dyn Fn(usize) -> bool) -> Resources {
        let mut post_creators = HashMap::new();
        let mut put_creators = HashMap::new();
        let mut prefixes = Vec::new();
        let mut on_item = Vec::new();
        for (i, op) in api.operations.iter().enumerate() {
            let path = normalise(&op.path);
            let segs: Vec<&str> = path.split('/').collect();
            let mut pre = Vec::new();
            for k in 1..segs.len() {
                if segs[k] == "{}" {
                    pre.push(segs[..=k].join("/"));
                }
            }
            on_item.push(segs.last() == Some(&"{}"));
            prefixes.push(pre);
            if !allowed(i) {
                continue;
            }
            match op.method {
                Method::Post => {
                    post_creators.entry(format!("{path}/{{}}")).or_insert(i);
                }
                Method::Put if path.ends_with("{}") => {
                    put_creators.entry(path.clone()).or_insert(i);
                }
                _ => {}
            }
        }
        Resources {
            prefixes,
            post_creators,
            put_creators,
            on_item,
        }
    }

    /// A creator of the resource at normalised path `resource`: POST on its
    /// collection, or PUT on it with probability 0.2 (always, if no POST).
    fn creator(&self, resource: &str, rng: &mut Rng64) -> Option<usize> {
        let post = self.post_creators.get(resource).copied();
        let put = self.put_creators.get(resource).copied();
        match (post, put) {
            (Some(p), Some(u)) => Some(if rng.random_bool(0.2) { u } else { p }),
            (p, u) => p.or(u),
        }
    }

    /// The templates that apply to operation `op`.
    pub fn applicable(&self, api: &Api, op: usize) -> Vec<Template> {
        let m = api.operations[op].method;
        let mut out = vec![Template::Alone];
        let own = self.own_resource(op);
        let creatable = own.is_some_and(|r| {
            self.post_creators.contains_key(r) || self.put_creators.contains_key(r)
        });
        match m {
            Method::Post => out.push(Template::CreatePost),
            Method::Get if creatable || !self.on_item[op] => out.push(Template::CreateGet),
            Method::Put if creatable => out.push(Template::CreatePut),
            Method::Patch if creatable => out.push(Template::CreatePatch),
            Method::Delete if creatable => out.push(Template::CreateDelete),
            _ => {}
        }
        out
    }

    /// The resource the operation acts on, when its path ends in a parameter.
    fn own_resource(&self, op: usize) -> Option<&str> {
        if self.on_item[op] {
            self.prefixes[op].last().map(String::as_str)
        } else {
            None
        }
    }

    /// Instantiates `template` for `op`; `None` when it does not apply.
    pub fn instantiate(
        &self,
        api: &Api,
        op: usize,
        template: Template,
        max_len: usize,
        rng: &mut Rng64,
    ) -> Option<Handling> {
        let mut calls = Vec::new();
        let mut creates = Vec::new();
        let ancestors: &[String] = if self.on_item[op] {
            let p = &self.prefixes[op];
            &p[..p.len().saturating_sub(1)]
        } else {
            &self.prefixes[op]
        };
        for a in ancestors {
            if let Some(c) = self.creator(a, rng)
                && c != op
            {
                calls.push(c);
                creates.push(true);
            }
        }
        let method = api.operations[op].method;
        match template {
            Template::Alone => {}
            Template::CreatePost => {
                if method != Method::Post {
                    return None;
                }
                calls.push(op);
                creates.push(true);
            }
            Template::CreateGet if !self.on_item[op] => {
                // A collection read: k creations into it first (EvoMaster's GET template).
                let collection = format!("{}/{{}}", normalise(&api.operations[op].path));
                let c = *self.post_creators.get(&collection)?;
                for _ in 0..rng.random_range(1..=2) {
                    calls.push(c);
                    creates.push(false);
                }
            }
            Template::CreateGet
            | Template::CreatePut
            | Template::CreatePatch
            | Template::CreateDelete => {
                let own = self.own_resource(op)?;
                let c = self.creator(own, rng)?;
                if c == op {
                    return None;
                }
                calls.push(c);
                creates.push(true);
            }
        }
        calls.push(op);
        creates.push(false);
        if template == Template::CreatePatch && rng.random_bool(0.5) {
            calls.push(op);
            creates.push(false);
        }
        if calls.len() > max_len {
            return None;
        }
        Some(Handling {
            template,
            calls,
            creates,
        })
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn demo() -> Api {
        crate::load::load_text(crate::demo::OPENAPI_YAML, std::path::Path::new("demo.yaml"))
            .unwrap()
            .api
    }

    fn names(api: &Api, h: &Handling) -> Vec<String> {
        h.calls
            .iter()
            .map(|&p| api.operations[p].name.clone())
            .collect()
    }

    #[test]
    fn nested_resources_create_their_ancestors_first() {
        let api = demo();
        let res = Resources::new(&api, &|_| true);
        let pos = api.operation_positions();
        let mut rng = Rng64::seed_from_u64(1);
        let h = res
            .instantiate(&api, pos["updateBook"], Template::CreatePatch, 10, &mut rng)
            .unwrap();
        let n = names(&api, &h);
        assert_eq!(
            &n[..3],
            ["createAuthor", "createBook", "updateBook"],
            "{n:?}"
        );
        assert_eq!(&h.creates[..2], [true, true]);
        let h = res
            .instantiate(&api, pos["cancelOrder"], Template::CreatePost, 10, &mut rng)
            .unwrap();
        assert_eq!(
            names(&api, &h),
            ["placeOrder", "cancelOrder", "cancelOrder"]
        );
        let h = res
            .instantiate(&api, pos["getBook"], Template::Alone, 10, &mut rng)
            .unwrap();
        assert_eq!(names(&api, &h), ["createAuthor", "getBook"]);
        assert!(
            res.applicable(&api, pos["deleteBook"])
                .contains(&Template::CreateDelete)
        );
        assert_eq!(
            res.instantiate(
                &api,
                pos["createAuthor"],
                Template::CreateDelete,
                10,
                &mut rng
            ),
            None
        );
    }
}
