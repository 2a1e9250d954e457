//! The name index: which schema (and property) an input's name points to,
//! in its several forms (`petId`, `pet_id`, `{pet}` under `/pets`), with a
//! score, and whether two schemas' types are compatible.

use std::collections::{HashMap, HashSet};

use crate::model::names;
use crate::model::{Api, Schema, SchemaType};

use super::MAX_SOURCES_PER_INPUT;

pub(super) fn shape(words: &[String]) -> Option<Shape> {
    let start = |w: &String| w.chars().take(2).collect::<String>();
    Some((words.len(), start(words.first()?), start(words.last()?)))
}

/// Schemas matched fuzzily, with their score.
pub(super) type FuzzyHit = (Vec<usize>, f64);

/// One way of naming a schema: its words and the score a match on them earns.
pub(super) struct NameForm {
    pub(super) words: Vec<String>,
    pub(super) schema: usize,
    pub(super) score: f64,
    pub(super) rule: &'static str,
}

/// Lookup tables from name words to schema nodes.
pub(super) struct NameIndex<'a> {
    /// Node schema names, in node order.
    pub(super) schemas: Vec<&'a str>,
    /// Their definitions.
    pub(super) defs: Vec<&'a Schema>,
    /// Every name form of every schema.
    pub(super) forms: Vec<NameForm>,
    /// Joined words of a form → forms (`pet` → Pet; `user` → UserResponse).
    pub(super) by_key: HashMap<String, Vec<usize>>,
    /// Shape of a form → forms: the only ones a fuzzy match can reach ([`shape`]).
    pub(super) by_shape: HashMap<Shape, Vec<usize>>,
    /// Per schema: property key → property name.
    pub(super) props: Vec<HashMap<String, &'a str>>,
    /// Schema name → position.
    pub(super) position: HashMap<&'a str, usize>,
    /// Fuzzy lookups already made.
    pub(super) fuzzy_cache: std::cell::RefCell<HashMap<String, Option<FuzzyHit>>>,
}

impl<'a> NameIndex<'a> {
    pub(super) fn new(api: &'a Api, nodes: &'a [String]) -> NameIndex<'a> {
        let mut index = NameIndex {
            schemas: Vec::new(),
            defs: Vec::new(),
            forms: Vec::new(),
            by_key: HashMap::new(),
            by_shape: HashMap::new(),
            props: Vec::new(),
            position: HashMap::new(),
            fuzzy_cache: Default::default(),
        };
        for (i, name) in nodes.iter().enumerate() {
            let def = &api.schemas[name.as_str()];
            // An inline body schema's name says where it was written
            // (`createTenant.201`); inputs name it by its path's resource.
            let words = match api.inline.get(name.as_str()) {
                Some(resource) => resource.clone(),
                None => names::schema_words(name),
            };
            if !words.is_empty() {
                let bare = names::strip_decoration(&words);
                // The whole name, then without decoration (`UserResponse` →
                // `user`), then trailing parts (`full-repository` → `repository`).
                index.add_form(words.clone(), i, 1.0, "compound-name");
                if bare.len() < words.len() {
                    index.add_form(bare.clone(), i, 0.95, "compound-name");
                }
                for start in 1..bare.len() {
                    index.add_form(bare[start..].to_vec(), i, 0.9, "compound-name");
                }
            }
            index.props.push(
                def.properties
                    .keys()
                    .map(|p| (names::key(p), p.as_str()))
                    .collect(),
            );
            index.schemas.push(name);
            index.defs.push(def);
            index.position.insert(name, i);
        }
        index
    }

    pub(super) fn add_form(
        &mut self,
        words: Vec<String>,
        schema: usize,
        score: f64,
        rule: &'static str,
    ) {
        let Some(shape) = shape(&words) else {
            return;
        };
        let id = self.forms.len();
        self.by_key.entry(names::join(&words)).or_default().push(id);
        self.by_shape.entry(shape).or_default().push(id);
        self.forms.push(NameForm {
            words,
            schema,
            score,
            rule,
        });
    }

    pub(super) fn position(&self, name: &str) -> Option<usize> {
        self.position.get(name).copied()
    }

    /// Schemas one of whose name forms is exactly `key`, each with its best score.
    pub(super) fn by_name(&self, key: &str) -> Vec<(usize, f64, &'static str)> {
        let mut out: Vec<(usize, f64, &'static str)> = Vec::new();
        for &f in self.by_key.get(key).into_iter().flatten() {
            let form = &self.forms[f];
            match out.iter_mut().find(|(s, _, _)| *s == form.schema) {
                Some(existing) if existing.1 >= form.score => {}
                Some(existing) => *existing = (form.schema, form.score, form.rule),
                None => out.push((form.schema, form.score, form.rule)),
            }
        }
        out
    }

    /// The schemas whose name matches `words` word for word, allowing
    /// abbreviations and spelling variants ([`names::word_similarity`]) but not an
    /// exact match (that is [`Self::by_name`]); the best-scoring ones only.
    pub(super) fn fuzzy(&self, words: &[String]) -> Option<FuzzyHit> {
        let shape = shape(words)?;
        let key = names::join(words);
        if let Some(hit) = self.fuzzy_cache.borrow().get(&key) {
            return hit.clone();
        }
        let mut best: Option<FuzzyHit> = None;
        for &f in self.by_shape.get(&shape).into_iter().flatten() {
            let form = &self.forms[f];
            if form.words == words {
                continue;
            }
            let Some(sim) = names::words_similarity(words, &form.words) else {
                continue;
            };
            let s = sim * form.score;
            match &mut best {
                Some((v, b)) if (s - *b).abs() < 1e-9 => v.push(form.schema),
                Some((_, b)) if s < *b => {}
                _ => best = Some((vec![form.schema], s)),
            }
        }
        if let Some((v, _)) = &mut best {
            v.sort_unstable();
            v.dedup();
        }
        self.fuzzy_cache.borrow_mut().insert(key, best.clone());
        best
    }

    pub(super) fn property(&self, schema: usize, key: &str) -> Option<&'a str> {
        self.props[schema].get(key).copied()
    }

    /// The property an input that names the resource itself (`{repo}`) most
    /// likely means: the first identifying property whose type fits the input's
    /// exactly (a string `{repo}` is a name, not a numeric id), else the first
    /// that fits at all.
    pub(super) fn identifying_property(
        &self,
        api: &Api,
        schema: usize,
        ty: &Schema,
    ) -> Option<&'a str> {
        let fit = |w: &&str| {
            let prop = self.property(schema, w)?;
            let (input, held) = (
                api.resolve(ty),
                api.resolve(&self.defs[schema].properties[prop]),
            );
            let mut factor = fit(api, input, held)?;
            // `{database}` as plain text names a database; its uuid `id` fits
            // the type but not the format.
            if held.format.is_some() && input.format != held.format {
                factor *= 0.95;
            }
            Some((prop, factor))
        };
        let fits: Vec<(&'a str, f64)> = names::IDENTIFYING.iter().filter_map(fit).collect();
        fits.iter()
            .find(|(_, f)| *f >= 1.0)
            .or(fits.first())
            .map(|(p, _)| *p)
    }
}

/// A candidate source for an input.
#[derive(Clone)]
pub(super) struct Candidate {
    pub(super) schema: usize,
    pub(super) property: String,
    pub(super) score: f64,
    pub(super) rule: &'static str,
}

/// Candidates for an input named `name`, typed `ty`, by name alone: `petId` →
/// Pet.id (compound), `repoId` → Repository.id (fuzzy).
pub(super) fn name_candidates(
    api: &Api,
    index: &NameIndex,
    name: &str,
    ty: &Schema,
    allow_bare_resource: bool,
) -> Vec<Candidate> {
    let words: Vec<String> = names::words(name)
        .iter()
        .map(|w| names::singular(w))
        .collect();
    let mut out = Vec::new();
    // Compound: the input's words are a schema's name followed by a property's.
    for split in 1..words.len() {
        let prefix = names::join(&words[..split]);
        let rest = names::join(&words[split..]);
        for (schema, score, rule) in index.by_name(&prefix) {
            if let Some(prop) = index.property(schema, &rest) {
                out.push(Candidate {
                    schema,
                    property: prop.to_string(),
                    score,
                    rule,
                });
            }
        }
    }
    // Fuzzy: a resource word spelled differently, then an identifying word.
    let (resource, prop_word): (&[String], Option<&String>) = match words.split_last() {
        Some((last, rest)) if !rest.is_empty() && names::is_identifying(last) => (rest, Some(last)),
        _ if allow_bare_resource => (&words, None),
        _ => (&[], None),
    };
    if !resource.is_empty() {
        if let Some((schemas, score)) = index.fuzzy(resource) {
            for schema in schemas {
                let prop = match &prop_word {
                    Some(w) => index.property(schema, w),
                    None => index.identifying_property(api, schema, ty),
                };
                if let Some(prop) = prop {
                    out.push(Candidate {
                        schema,
                        property: prop.to_string(),
                        score,
                        rule: "fuzzy-name",
                    });
                }
            }
        }
        // `{pet}` or `{repo}` alone: the resource's identifying property.
        if prop_word.is_none() {
            // Only whole names: a trailing part (`type` of `CustomerType`) is too weak
            // when the input says nothing but that word.
            for (schema, score, _) in index.by_name(&names::join(resource)) {
                if score < 0.95 {
                    continue;
                }
                if let Some(prop) = index.identifying_property(api, schema, ty) {
                    out.push(Candidate {
                        schema,
                        property: prop.to_string(),
                        score: score * 0.9,
                        rule: "resource-name",
                    });
                }
            }
        }
    }
    retain_compatible(api, index, ty, &mut out);
    out
}

/// Drops candidates whose property cannot hold the input's values, and lowers the
/// score of string/number mixes (ids often travel as strings).
pub(super) fn retain_compatible(
    api: &Api,
    index: &NameIndex,
    ty: &Schema,
    out: &mut Vec<Candidate>,
) {
    out.retain_mut(|c| {
        let prop = index.defs[c.schema]
            .properties
            .get(&c.property)
            .map(|p| api.resolve(p));
        match prop.map(|p| fit(api, api.resolve(ty), p)) {
            Some(Some(factor)) => {
                c.score *= factor;
                true
            }
            _ => false,
        }
    });
}

/// How well values of input type `a` fit property type `b` (both resolved),
/// a list of scalars on either side counting by its elements: a `tag`
/// parameter takes one of a pet's `tags`, a `tags` filter a list of one.
/// `None` when they cannot, else a score factor.
pub(super) fn fit<'a>(api: &'a Api, a: &'a Schema, b: &'a Schema) -> Option<f64> {
    if let Some(factor) = compatibility(a, b) {
        return Some(factor);
    }
    let element = |s: &'a Schema| -> Option<&'a Schema> {
        let items = s
            .items
            .as_deref()
            .filter(|_| s.primary_type() == Some(SchemaType::Array))?;
        let items = api.resolve(items);
        matches!(
            items.primary_type(),
            Some(
                SchemaType::String | SchemaType::Integer | SchemaType::Number | SchemaType::Boolean
            )
        )
        .then_some(items)
    };
    let (x, y) = (element(a), element(b));
    if x.is_none() && y.is_none() {
        return None;
    }
    // An element is a weaker match than a whole value of the same name.
    compatibility(x.unwrap_or(a), y.unwrap_or(b)).map(|f| f * 0.9)
}

/// How well values of `a` fit `b`: `None` when they cannot, else a score factor.
pub(super) fn compatibility(a: &Schema, b: &Schema) -> Option<f64> {
    use SchemaType::*;
    let (Some(x), Some(y)) = (a.primary_type(), b.primary_type()) else {
        // An untyped side (often a GraphQL custom scalar or a bare schema) may fit;
        // an object or array on the other side rarely does.
        let typed = a.primary_type().or(b.primary_type());
        return match typed {
            Some(Object) | Some(Array) => None,
            _ if a.reference.is_some() || b.reference.is_some() => None,
            _ => Some(1.0),
        };
    };
    match (x, y) {
        _ if x == y && x != Object && x != Array => Some(1.0),
        (Integer, Number) | (Number, Integer) => Some(1.0),
        (String, Integer) | (Integer, String) | (String, Number) | (Number, String) => Some(0.9),
        _ => None,
    }
}

/// Word count and the first two letters of the first and last words. Names that
/// match word for word share it: an abbreviation keeps at least three leading
/// letters of its word, and spelling variants as close as
/// [`names::FUZZY_THRESHOLD`] differ after the start. Indexing by it keeps fuzzy
/// lookups from scanning every schema (12,700 types in the AWS GraphQL schema).
pub(super) type Shape = (usize, String, String);

/// Keeps the top-scoring candidate per schema, then the top score overall.
pub(super) fn keep_best(mut candidates: Vec<Candidate>) -> Vec<Candidate> {
    candidates.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.schema.cmp(&b.schema))
    });
    let Some(top) = candidates.first().map(|c| c.score) else {
        return Vec::new();
    };
    let mut seen = HashSet::new();
    candidates
        .into_iter()
        .filter(|c| (c.score - top).abs() < 1e-9 && seen.insert(c.schema))
        .take(MAX_SOURCES_PER_INPUT)
        .collect()
}
