//! Rules stated in words: the sentences of a description or of a server's
//! refusal that say what a value must be ("must be an integer", "at least 3
//! characters", "must end with a dot", "one of: a, b"), read by regexes.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::rule::Rule;

fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a valid built-in regex"))
}

/// The rules one sentence states.
pub fn rules_in(text: &str) -> Vec<Rule> {
    static QUOTED: OnceLock<Regex> = OnceLock::new();
    static INTEGER: OnceLock<Regex> = OnceLock::new();
    static NUMBER: OnceLock<Regex> = OnceLock::new();
    static UUID: OnceLock<Regex> = OnceLock::new();
    static BETWEEN: OnceLock<Regex> = OnceLock::new();
    static LEAST: OnceLock<Regex> = OnceLock::new();
    static MOST: OnceLock<Regex> = OnceLock::new();
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    let mut out = Vec::new();
    if regex(
        &QUOTED,
        r"(?i)integer[s]? (between|in|within|inside|surrounded by) (double )?quotes",
    )
    .is_match(text)
    {
        out.push(Rule::QuotedInteger);
        return out;
    }
    if regex(
        &INTEGER,
        r"(?i)\b((must|should|has to) be an? (valid )?(integer|int|whole number)|not an? (valid )?integer|valid integer|expected (an )?integer|integer expected|int_parsing|int_type)\b",
    )
    .is_match(text)
    {
        out.push(Rule::Integer);
    } else if regex(
        &NUMBER,
        r"(?i)\b((must|should) be an? (valid )?number|not an? (valid )?number|valid number|float_parsing)\b",
    )
    .is_match(text)
    {
        out.push(Rule::Number);
    }
    if regex(
        &UUID,
        r"(?i)\b(valid uuid|uuid_parsing|uuid_type|must be an? uuid|not an? (valid )?uuid)\b",
    )
    .is_match(text)
    {
        out.push(Rule::Uuid);
    }
    let num = |s: &str| s.parse::<f64>().ok();
    if let Some(c) = regex(
        &BETWEEN,
        r"(?i)between (-?\d+(?:\.\d+)?) and (-?\d+(?:\.\d+)?)( characters?| chars?| letters?)",
    )
    .captures(text)
    {
        let (lo, hi) = (num(&c[1]), num(&c[2]));
        if let (Some(lo), Some(hi)) = (lo, hi) {
            if c.get(3).is_some() {
                out.push(Rule::MinLength(lo.max(0.0) as u64));
                out.push(Rule::MaxLength(hi.max(0.0) as u64));
            } else {
                out.push(Rule::Minimum(lo));
                out.push(Rule::Maximum(hi));
            }
        }
    }
    for (cell, pattern, min) in [
        (
            &LEAST,
            r"(?i)(?:at least|greater than or equal to|>=|no less than|minimum(?: of| is)?) (-?\d+(?:\.\d+)?)( characters?| chars?| letters?)",
            true,
        ),
        (
            &MOST,
            r"(?i)(?:at most|less than or equal to|<=|no more than|maximum(?: of| is)?) (-?\d+(?:\.\d+)?)( characters?| chars?| letters?)",
            false,
        ),
    ] {
        if let Some(c) = regex(cell, pattern).captures(text) {
            let Some(n) = num(&c[1]) else { continue };
            let rule = match (c.get(2).is_some(), min) {
                (true, true) => Rule::MinLength(n.max(0.0) as u64),
                (true, false) => Rule::MaxLength(n.max(0.0) as u64),
                (false, true) => Rule::Minimum(n),
                (false, false) => Rule::Maximum(n),
            };
            if !out.contains(&rule) {
                out.push(rule);
            }
        }
    }
    out.extend(affixes_in(text));
    if let Some(f) = format_in(text)
        && !out.contains(&Rule::Uuid)
    {
        out.push(f);
    }
    if let Some(list) = one_of_in(text) {
        out.push(Rule::OneOf(list));
    }
    if unique_in(text) {
        out.push(Rule::Unique);
    }
    if let Some(p) = characters_in(text) {
        out.push(Rule::Pattern(p));
    }
    if let Some(c) = regex(&PATTERN, r#"(?i)(?:match(?:es)?|matching) (?:the )?(?:required )?(?:pattern|regex|regular expression)[:\s]*['"`/]([^'"`]+?)['"`/](?:\s|$|[.,;)])"#).captures(text)
        && crate::generation::pattern::pattern_matches(&c[1], "").is_some() {
            out.push(Rule::Pattern(c[1].to_string()));
        }
    out
}

/// What a text a value must start or end with is called in words.
const AFFIX_WORDS: [(&str, &str); 10] = [
    ("dot", "."),
    ("period", "."),
    ("full stop", "."),
    ("slash", "/"),
    ("forward slash", "/"),
    ("hyphen", "-"),
    ("dash", "-"),
    ("underscore", "_"),
    ("colon", ":"),
    ("at sign", "@"),
];

/// "must end with a dot", "should start with '/'", "must begin with
/// `ab`", and PowerDNS's "is not canonical" (a canonical DNS name ends with
/// a dot).
fn affixes_in(text: &str) -> Vec<Rule> {
    static AFFIX: OnceLock<Regex> = OnceLock::new();
    static CANONICAL: OnceLock<Regex> = OnceLock::new();
    let re = regex(
        &AFFIX,
        r#"(?i)\b(?:must|should|has to|have to|needs? to|is required to|expected to)\s+(start|begin|end)\s+with\s+(?:an?\s+|the\s+)?(?:['"`]([^'"`]{1,16})['"`]|(full stop|forward slash|at sign|dot|period|slash|hyphen|dash|underscore|colon))"#,
    );
    let mut out = Vec::new();
    for c in re.captures_iter(text) {
        let affix = match (c.get(2), c.get(3)) {
            (Some(q), _) => q.as_str().to_string(),
            (None, Some(w)) => {
                let w = w.as_str().to_ascii_lowercase();
                match AFFIX_WORDS.iter().find(|(name, _)| *name == w) {
                    Some((_, t)) => t.to_string(),
                    None => continue,
                }
            }
            _ => continue,
        };
        let rule = if c[1].eq_ignore_ascii_case("end") {
            Rule::EndsWith(affix)
        } else {
            Rule::StartsWith(affix)
        };
        if !out.contains(&rule) {
            out.push(rule);
        }
    }
    if out.is_empty()
        && regex(
            &CANONICAL,
            r"(?i)\b(?:not (?:a )?canonical|must be (?:a )?canonical|non-canonical)\b",
        )
        .is_match(text)
    {
        out.push(Rule::EndsWith(".".into()));
    }
    out
}

/// "Enter a valid email address." (Django), "must be a valid URL", "is not
/// a valid date", "value is not a valid email address" (pydantic).
fn format_in(text: &str) -> Option<Rule> {
    static FORMAT: OnceLock<Regex> = OnceLock::new();
    let c = regex(
        &FORMAT,
        r"(?i)\b(?:valid|well-formed|proper|must be an?|should be an?|is not an?)\s+(e-?mail|url|uri|date-?time|datetime|date|time|ipv4|ipv6|ip address|ip|hostname|host name)\b",
    )
    .captures(text)?;
    let format = match c[1].to_ascii_lowercase().replace('-', "").as_str() {
        "email" => "email",
        "url" | "uri" => "uri",
        "datetime" => "date-time",
        "date" => "date",
        "time" => "time",
        "ipv6" => "ipv6",
        "ipv4" | "ip address" | "ip" => "ipv4",
        _ => "hostname",
    };
    Some(Rule::Format(format.into()))
}

/// "must be one of: a, b, c", "must be one of [a, b]" (Joi), "Input
/// should be 'a', 'b' or 'c'" (pydantic), "must be either 'a' or 'b'".
fn one_of_in(text: &str) -> Option<Vec<Value>> {
    static LISTED: OnceLock<Regex> = OnceLock::new();
    static QUOTED: OnceLock<Regex> = OnceLock::new();
    let list = if let Some(c) = regex(
        &LISTED,
        r#"(?i)\bone of(?: the following)?(?: values)?\s*[:\[(]?\s*([^\])
]{1,200})"#,
    )
    .captures(text)
    {
        c[1].to_string()
    } else {
        let c = regex(
            &QUOTED,
            r#"(?i)\b(?:must|should|has to) be (?:either )?((?:['"][^'"]{1,40}['"],?\s*)+(?:or|and)\s+['"][^'"]{1,40}['"])"#,
        )
        .captures(text)?;
        c[1].to_string()
    };
    let items: Vec<Value> = list
        .split(',')
        .flat_map(|part| part.split(" or "))
        .flat_map(|part| part.split(" and "))
        .flat_map(|part| part.split('|'))
        .map(|w| {
            w.trim()
                .trim_end_matches(['.', ';'])
                .trim_matches(|c: char| c == '\'' || c == '"' || c == '`' || c == '[' || c == ']')
                .trim()
        })
        .filter(|w| !w.is_empty() && w.len() <= 40 && !w.contains(' '))
        .map(|w| Value::String(w.to_string()))
        .collect();
    (items.len() >= 2).then_some(items)
}

/// "already exists" (Django's "zone with this name already exists."),
/// "must be unique", "is already taken", "already in use".
fn unique_in(text: &str) -> bool {
    static UNIQUE: OnceLock<Regex> = OnceLock::new();
    regex(
        &UNIQUE,
        r"(?i)\b(?:already exists?|already (?:taken|in use|registered|used)|must be unique|is not unique|should be unique|duplicate (?:key|value|entry|name))\b",
    )
    .is_match(text)
}

/// What a class of characters is called in words, and its regex class
/// text; longer names first ("lowercase letters" before "letters").
const CHARACTER_WORDS: [(&str, &str); 19] = [
    ("lowercase alphanumeric", "a-z0-9"),
    ("lower case alphanumeric", "a-z0-9"),
    ("lowercase letter", "a-z"),
    ("lower case letter", "a-z"),
    ("lowercase character", "a-z"),
    ("uppercase letter", "A-Z"),
    ("upper case letter", "A-Z"),
    ("alphanumeric", "a-zA-Z0-9"),
    ("letter", "a-zA-Z"),
    ("number", "0-9"),
    ("digit", "0-9"),
    ("dash", "-"),
    ("hyphen", "-"),
    ("underscore", "_"),
    ("dot", "."),
    ("period", "."),
    ("space", " "),
    ("slash", "/"),
    ("colon", ":"),
];

/// "must only contain lowercase letters, numbers, and dashes" (Prefect's
/// names), "may only contain letters, digits and underscores", "must
/// consist of lower case alphanumeric characters or '-'" (Kubernetes): the
/// characters a value is made of, as a pattern (`^[a-z0-9-]+$`).
fn characters_in(text: &str) -> Option<String> {
    static ONLY: OnceLock<Regex> = OnceLock::new();
    let c = regex(
        &ONLY,
        r"(?i)\b(?:(?:must|should|can|may) only (?:contain|consist of|include|use|have)|(?:must|should|can|may) (?:contain|include|use|have) only|(?:must|should) consist (?:only )?of|(?:is|are) only allowed to contain|only contains?)\s+(.{1,160})",
    )
    .captures(text)?;
    let list = c[1].to_ascii_lowercase();
    // The list ends where the sentence goes on about something else.
    let list = list
        .split([';', '('])
        .next()
        .unwrap_or("")
        .split(". ")
        .next()
        .unwrap_or("")
        .split(" and must ")
        .next()
        .unwrap_or("");
    let mut class = String::new();
    // A dash stands for itself last in a class.
    let mut dash = false;
    let mut add = |chars: &str, class: &mut String| {
        if chars == "-" {
            dash = true;
        } else if !class.contains(chars) {
            class.push_str(chars);
        }
    };
    let mut rest = list.to_string();
    for (name, chars) in CHARACTER_WORDS {
        if let Some(at) = rest.find(name) {
            rest.replace_range(at..at + name.len(), "");
            add(chars, &mut class);
        }
    }
    // Quoted single characters: `'-'`, `"_"`, `` `.` ``.
    for q in ['\'', '"', '`'] {
        for piece in rest.split(q).skip(1).step_by(2) {
            let mut chars = piece.chars();
            if let (Some(ch), None) = (chars.next(), chars.next())
                && !ch.is_alphanumeric()
            {
                let text = if ch == '-' {
                    "-".to_string()
                } else {
                    regex::escape(&ch.to_string())
                };
                add(&text, &mut class);
            }
        }
    }
    if dash {
        class.push('-');
    }
    if class.is_empty() {
        return None;
    }
    let pattern = format!("^[{class}]+$");
    Regex::new(&pattern).ok().map(|_| pattern)
}
