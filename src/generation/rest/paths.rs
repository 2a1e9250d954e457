//! Which value a path parameter takes: the property of a collection's
//! members it names (a pool's `name`, not its `id`), and the literal
//! segments between one id of a path and the next (where a parent's
//! children sit). The sampler and the test runner both ask.

use crate::model::Location;

/// The property of a collection's members that path parameter `name` of
/// operation `op` takes, when it is not the id the collection is keyed by
/// (`None` then): the property the graph binds the parameter to
/// (`work_pool_name ← WorkPoolResponse.name`), else the last word of its
/// name when that word identifies (`pool_name` → `name`, `{slug}`).
pub(super) fn path_property(
    plan: &crate::generation::plan::Plan,
    api: &crate::model::Api,
    op: usize,
    name: &str,
) -> Option<String> {
    let bound = plan.sources[op]
        .get(&(Location::Path, name.to_string()))
        .and_then(|sources| sources.iter().find(|s| s.active))
        .and_then(|s| s.key.rsplit_once('.'))
        .map(|(_, property)| property.to_string());
    let property = bound.or_else(|| {
        let declared = api.operations[op]
            .parameters
            .iter()
            .any(|p| p.location == Location::Path && p.name == name);
        crate::model::names::words(name)
            .pop()
            .filter(|w| declared && crate::model::names::is_identifying(w))
    })?;
    // `Pet.id`, `Pet.petId`: the id the collection is keyed by.
    let id = crate::model::names::words(&property)
        .last()
        .map(String::as_str)
        == Some("id");
    (!id).then_some(property)
}

/// The literal segments between a path's id and the next id after it
/// (`/boards` in `{project_id}/boards/{board_id}`), when one follows.
pub(super) fn below_to_next_id(rest: &[&str]) -> Option<String> {
    let next = rest.iter().position(|s| s.starts_with('{'))?;
    if next == 0 {
        return None;
    }
    Some(rest[..next].iter().map(|s| format!("/{s}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_parameter_takes_the_property_its_name_or_binding_says() {
        let spec = r#"
openapi: 3.0.3
info: {title: T, version: "1"}
paths:
  /pools/{name}:
    get:
      operationId: readPool
      parameters: [{name: name, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
  /pools/{pool_name}/runs/{runId}:
    get:
      operationId: readRun
      parameters:
        - {name: pool_name, in: path, required: true, schema: {type: string}}
        - {name: runId, in: path, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
  /tags/{tag}/items/{slug}:
    get:
      operationId: readItem
      parameters:
        - {name: tag, in: path, required: true, schema: {type: string}}
        - {name: slug, in: path, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
"#;
        let api = crate::load::load_text(spec, std::path::Path::new("t.yaml"))
            .unwrap()
            .api;
        let plan = crate::generation::plan::Plan::empty(&api);
        let at =
            |op: &str, name: &str| path_property(&plan, &api, api.operation_positions()[op], name);
        assert_eq!(at("readPool", "name").as_deref(), Some("name"));
        assert_eq!(at("readRun", "pool_name").as_deref(), Some("name"));
        assert_eq!(at("readRun", "runId"), None, "an id keys the collection");
        assert_eq!(at("readItem", "tag"), None, "not a word that identifies");
        assert_eq!(at("readItem", "slug").as_deref(), Some("slug"));
        // A binding of the graph wins over the name.
        let mut bound = plan.clone();
        let op = api.operation_positions()["readItem"];
        bound.sources[op].insert(
            (Location::Path, "tag".into()),
            vec![crate::generation::plan::Source {
                schema: "Tag".into(),
                key: "Tag.label".into(),
                active: true,
                rank: 0,
                score: 1.0,
            }],
        );
        assert_eq!(
            path_property(&bound, &api, op, "tag").as_deref(),
            Some("label")
        );
    }
}
