//! Name handling for dependency inference: splitting identifiers into words,
//! singular forms, and the fuzzy score used when names differ in spelling.

/// Jaro-Winkler similarity at or above which two different words are taken as
/// spellings of the same word (`organisation` ~ `organization`, 0.97). Below it,
/// words that merely share a start stay apart (`caller` ~ `call`, 0.93;
/// `commit` ~ `comment`, 0.91; `channel` ~ `change`, 0.89). Measured over the
/// corpus: lowering this to 0.90 adds 118 distinct matches, and those read were
/// all wrong (`apple`/`app`, `database`/`dataset`, `server`/`service`,
/// `detector`/`detection`). Abbreviations (`repo` for
/// `repository`) are matched by their own rule, not by this threshold: their
/// similarity is low (0.88, and 0.83 for `org`/`organization`) although they are
/// clear.
pub const FUZZY_THRESHOLD: f64 = 0.95;

/// Trailing words that decorate a schema name without changing what it names:
/// `UserResponse`, `PetDto` and `OrderDetails` are a user, a pet and an order.
pub const DECORATION: [&str; 16] = [
    "response",
    "dto",
    "info",
    "resource",
    "object",
    "data",
    "model",
    "entity",
    "details",
    "detail",
    "result",
    "schema",
    "record",
    "representation",
    "view",
    "payload",
];

/// Property names that identify an object, in the order they are preferred when
/// an input names a resource without saying which property (`{repo}`).
pub const IDENTIFYING: [&str; 9] = [
    "id", "uuid", "key", "slug", "name", "login", "code", "number", "username",
];

/// Splits an identifier into lower-case words: `petId`, `pet_id`, `pet-id`
/// and `PetID` all give `["pet", "id"]`.
pub fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        if c.is_uppercase() && !current.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            // A new word starts at `aB`, and at the last capital of `ABc` (`HTTPServer`).
            if prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_lower) {
                out.push(std::mem::take(&mut current));
            }
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The singular of an English plural noun, by the common suffix rules; words that
/// do not look plural are returned unchanged.
pub fn singular(word: &str) -> String {
    let w = word;
    if w.len() <= 3 {
        return w.to_string();
    }
    for (plural, single) in [
        ("ies", "y"),
        ("sses", "ss"),
        ("xes", "x"),
        ("ches", "ch"),
        ("shes", "sh"),
    ] {
        if let Some(stem) = w.strip_suffix(plural) {
            return format!("{stem}{single}");
        }
    }
    if w.ends_with("ss") || w.ends_with("us") || w.ends_with("is") {
        return w.to_string();
    }
    w.strip_suffix('s').unwrap_or(w).to_string()
}

/// The words of a name with every word made singular, joined without separators:
/// the key under which names are compared (`Pets` → `pet`, `pet_ids` → `petid`).
pub fn key(name: &str) -> String {
    words(name).iter().map(|w| singular(w)).collect()
}

/// Joins words without separators.
pub fn join(words: &[String]) -> String {
    words.concat()
}

/// The words of a schema name that say what it is: the last segment of dotted
/// names (`io.k8s.api.core.v1.Pod` → `pod`), made singular.
pub fn schema_words(name: &str) -> Vec<String> {
    let last = name.rsplit('.').next().unwrap_or(name);
    words(last).iter().map(|w| singular(w)).collect()
}

/// The resource a path names: the words of its last literal segment, made
/// singular (`/api/v2/tenants/{tenant_name}` → `tenant`), skipping version
/// and `api` segments; empty for `/`.
pub fn path_resource(path: &str) -> Vec<String> {
    path.split('/')
        .rfind(|s| {
            !s.is_empty() && !s.contains('{') && !s.eq_ignore_ascii_case("api") && !is_version(s)
        })
        .map(|s| words(s).iter().map(|w| singular(w)).collect())
        .unwrap_or_default()
}

/// Whether a path segment is an API version (`v2`, `V1.1`), not a name or an id.
pub fn is_version(segment: &str) -> bool {
    let mut chars = segment.chars();
    matches!(chars.next(), Some('v' | 'V'))
        && segment.len() > 1
        && chars.all(|c| c.is_ascii_digit() || c == '.')
}

/// Similarity of two words in 0..=1.
pub fn similarity(a: &str, b: &str) -> f64 {
    strsim::jaro_winkler(a, b)
}

/// How alike an input's word and a schema's word are when they may name the same
/// thing: 1 when equal; their similarity when the input's word abbreviates the
/// schema's (a prefix of at least three letters: `repo`/`repository`,
/// `cust`/`customer`; never the other way, or `user` would abbreviate
/// `username`) or when they are spelling variants (similarity at least
/// [`FUZZY_THRESHOLD`]); otherwise `None`.
pub fn word_similarity(input: &str, schema: &str) -> Option<f64> {
    if input == schema {
        return Some(1.0);
    }
    let sim = similarity(input, schema);
    if (input.len() >= 3 && input.len() < schema.len() && schema.starts_with(input))
        || sim >= FUZZY_THRESHOLD
    {
        Some(sim)
    } else {
        None
    }
}

/// Word-for-word likeness of an input's name and a schema's name with the same
/// number of words: the least alike pair decides. `None` when the counts differ
/// or a pair does not match ([`word_similarity`]).
pub fn words_similarity(input: &[String], schema: &[String]) -> Option<f64> {
    if input.len() != schema.len() || input.is_empty() {
        return None;
    }
    input
        .iter()
        .zip(schema)
        .map(|(x, y)| word_similarity(x, y))
        .try_fold(1.0f64, |acc, s| s.map(|s| acc.min(s)))
}

/// Removes trailing [`DECORATION`] words, keeping at least one word.
pub fn strip_decoration(words: &[String]) -> Vec<String> {
    let mut end = words.len();
    while end > 1 && DECORATION.contains(&words[end - 1].as_str()) {
        end -= 1;
    }
    words[..end].to_vec()
}

/// Whether a word names an object's identity rather than a descriptive field:
/// `id`, `uuid`, `key`, `slug` (not `name`, which a creation sends).
pub fn is_id_like(word: &str) -> bool {
    matches!(word, "id" | "uuid" | "key" | "slug")
}

/// Whether a whole name ends in a word that names an identity: `id`, `authorId`,
/// `book_id`, `PetUUID` (not `name`, `idea` or `paid`).
pub fn is_id_name(name: &str) -> bool {
    words(name).last().is_some_and(|w| is_id_like(w))
}

/// Whether a property or input name is one that identifies an object.
pub fn is_identifying(word: &str) -> bool {
    IDENTIFYING.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resource_of_a_path_is_its_last_literal_segment_made_singular() {
        assert_eq!(path_resource("/api/v2/tenants/{tenant_name}"), ["tenant"]);
        assert_eq!(path_resource("/kernel-specs"), ["kernel", "spec"]);
        assert_eq!(path_resource("/v1/"), Vec::<String>::new());
        assert_eq!(path_resource("/"), Vec::<String>::new());
    }

    #[test]
    fn words_split_on_case_and_separators() {
        assert_eq!(words("petId"), ["pet", "id"]);
        assert_eq!(words("pet_id"), ["pet", "id"]);
        assert_eq!(words("PetID"), ["pet", "id"]);
        assert_eq!(words("HTTPServer2xx"), ["http", "server2xx"]);
        assert_eq!(words("io.k8s.api"), ["io", "k8s", "api"]);
        assert!(words("--").is_empty());
    }

    #[test]
    fn singular_forms() {
        assert_eq!(singular("pets"), "pet");
        assert_eq!(singular("categories"), "category");
        assert_eq!(singular("addresses"), "address");
        assert_eq!(singular("status"), "status");
        assert_eq!(singular("boxes"), "box");
        assert_eq!(singular("ids"), "ids");
    }

    #[test]
    fn keys_ignore_spelling_of_separators() {
        assert_eq!(key("bookId"), key("book_id"));
        assert_eq!(key("Books"), "book");
        assert_eq!(schema_words("io.k8s.api.core.v1.Pod"), ["pod"]);
    }

    #[test]
    fn abbreviations_and_spelling_variants_match_other_words_do_not() {
        assert!(word_similarity("repo", "repository").is_some());
        assert!(word_similarity("org", "organization").is_some());
        assert!(word_similarity("organisation", "organization").is_some());
        assert!(word_similarity("channel", "change").is_none());
        assert!(word_similarity("commit", "comment").is_none());
        assert!(word_similarity("caller", "call").is_none());
        assert!(
            word_similarity("repository", "repo").is_none(),
            "only inputs abbreviate"
        );
        assert!(word_similarity("username", "user").is_none());
        assert!(word_similarity("user", "usage").is_none());
        assert!(
            word_similarity("id", "identity").is_none(),
            "too short to abbreviate"
        );
        let w = |s: &str| words(s);
        assert!(words_similarity(&w("repoOwner"), &w("repositoryOwner")).is_some());
        assert!(words_similarity(&w("channel"), &w("channelFeatures")).is_none());
    }

    #[test]
    fn id_names_end_in_an_identity_word() {
        for name in ["id", "authorId", "book_id", "PetID", "order-uuid", "ID"] {
            assert!(is_id_name(name), "{name}");
        }
        for name in ["name", "stars", "idea", "paid", "identity", "ids", ""] {
            assert!(!is_id_name(name), "{name}");
        }
    }

    #[test]
    fn decoration_words_are_stripped_from_the_end_only() {
        let w = |s: &str| words(s);
        assert_eq!(strip_decoration(&w("UserResponse")), ["user"]);
        assert_eq!(
            strip_decoration(&w("SeriesTimerInfoDto")),
            ["series", "timer"]
        );
        assert_eq!(strip_decoration(&w("Data")), ["data"]);
        assert_eq!(strip_decoration(&w("DataSet")), ["data", "set"]);
    }
}
