//! Inline object schemas of request and 2xx response bodies become named
//! schemas, named after their place (`createThing.201`, `listThings.200[]`,
//! `createThing.body`), so that the graph sees them as it sees `definitions`:
//! a description whose bodies are all inline otherwise has no produces and no
//! consumes edge at all. Equal shapes share one name.

use indexmap::IndexMap;

use crate::model::{Operation, Schema, names};

/// How many property levels below an answer's body inline objects are still
/// named (`listThings.200.data[]` for an envelope's items).
const MAX_NESTING: usize = 2;

/// Property names of envelopes: their objects are the path's resource, not a
/// resource of their own name.
const ENVELOPES: [&str; 14] = [
    "data", "items", "results", "result", "content", "records", "list", "entries", "values",
    "objects", "hits", "nodes", "rows", "payload",
];

/// Names the inline objects of every operation's bodies, adding them to
/// `schemas`; returns each name with its resource's words.
pub(super) fn name_inline_schemas(
    operations: &mut [Operation],
    schemas: &mut IndexMap<String, Schema>,
) -> IndexMap<String, Vec<String>> {
    let mut namer = Namer {
        schemas,
        inline: IndexMap::new(),
        shapes: std::collections::HashMap::new(),
    };
    for op in operations.iter_mut() {
        let resource = names::path_resource(&op.path);
        if let Some(body) = &mut op.request_body {
            // Only the body itself: objects nested in what a client sends are
            // never answered back, so they could feed no later call.
            for schema in body.content.values_mut() {
                namer.visit(schema, &op.name, "body", &resource, MAX_NESTING);
            }
        }
        for (status, response) in op.responses.iter_mut() {
            if !status.starts_with('2') {
                continue;
            }
            for schema in response.content.values_mut() {
                namer.visit(schema, &op.name, status, &resource, 0);
            }
        }
    }
    namer.inline
}

struct Namer<'a> {
    schemas: &'a mut IndexMap<String, Schema>,
    inline: IndexMap<String, Vec<String>>,
    /// A shape (as JSON text) → the name it got first.
    shapes: std::collections::HashMap<String, String>,
}

impl Namer<'_> {
    /// Names `schema` when it is an inline object (or a list or map of
    /// them), replacing it with a reference; `place` is its name's tail.
    fn visit(
        &mut self,
        schema: &mut Schema,
        operation: &str,
        place: &str,
        resource: &[String],
        depth: usize,
    ) {
        if schema.reference.is_some() {
            return;
        }
        if let Some(items) = &mut schema.items {
            self.visit(items, operation, &format!("{place}[]"), resource, depth);
            return;
        }
        if schema.properties.is_empty() {
            if let Some(values) = &mut schema.additional_properties {
                self.visit(values, operation, &format!("{place}{{}}"), resource, depth);
            }
            return;
        }
        if depth < MAX_NESTING {
            let keys: Vec<String> = schema.properties.keys().cloned().collect();
            for key in keys {
                let own = if ENVELOPES.contains(&key.to_ascii_lowercase().as_str()) {
                    resource.to_vec()
                } else {
                    names::words(&key)
                        .iter()
                        .map(|w| names::singular(w))
                        .collect()
                };
                if let Some(prop) = schema.properties.get_mut(&key) {
                    self.visit(prop, operation, &format!("{place}.{key}"), &own, depth + 1);
                }
            }
        }
        let shape = serde_json::to_string(&*schema).unwrap_or_default();
        let name = match self.shapes.get(&shape) {
            Some(name) => name.clone(),
            None => {
                let mut name = format!("{operation}.{place}");
                // A named schema may already be called so.
                let mut n = 2;
                while self.schemas.contains_key(&name) {
                    name = format!("{operation}.{place}~{n}");
                    n += 1;
                }
                self.schemas.insert(name.clone(), std::mem::take(schema));
                self.inline.insert(name.clone(), resource.to_vec());
                self.shapes.insert(shape, name.clone());
                name
            }
        };
        *schema = Schema::named(name);
    }
}
