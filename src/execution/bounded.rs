//! Parsing a JSON body with its arrays cut short: the items past the limit
//! are scanned (the document must still be valid JSON) but never built.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Items kept per array.
pub const JSON_ITEMS: usize = 16;

/// `text` as JSON with every array cut at [`JSON_ITEMS`] items; `None` when
/// it is not JSON.
pub(super) fn parse(text: &str) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Bounded.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// Levels of nested arrays and objects at which the parser gives up on a
/// document (serde_json's recursion limit): such a body is no JSON the run
/// can read.
pub const JSON_DEPTH: usize = 128;

/// Whether `text` nests arrays and objects [`JSON_DEPTH`] levels deep
/// (counted outside strings), stopping as soon as it does.
pub(super) fn too_deep(text: &str) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth >= JSON_DEPTH {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

struct Bounded;

impl<'de> DeserializeSeed<'de> for Bounded {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(Bounded)
    }
}

impl<'de> Visitor<'de> for Bounded {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Bounded.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while items.len() < JSON_ITEMS {
            match seq.next_element_seed(Bounded)? {
                Some(v) => items.push(v),
                None => return Ok(Value::Array(items)),
            }
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Bounded)?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arrays_are_cut_and_everything_else_kept() {
        let long: Vec<u32> = (0..100).collect();
        let text = json!({"a": long, "b": {"c": [1, 2.5, null, true, "x"]}, "n": -3}).to_string();
        let v = parse(&text).unwrap();
        assert_eq!(v["a"].as_array().unwrap().len(), JSON_ITEMS);
        assert_eq!(v["a"][15], 15);
        assert_eq!(v["b"], json!({"c": [1, 2.5, null, true, "x"]}));
        assert_eq!(v["n"], -3);
    }

    #[test]
    fn invalid_json_is_none_even_past_the_cut() {
        let mut text = format!("[{}", "1,".repeat(40));
        text.push_str("}]");
        assert!(parse(&text).is_none());
        assert!(parse("{\"a\": 1} trailing").is_none());
        assert!(parse("").is_none());
    }

    #[test]
    fn a_document_too_deep_for_the_parser_is_told_from_one_that_is_not() {
        let deep = format!("{}{}", "[".repeat(JSON_DEPTH), "]".repeat(JSON_DEPTH));
        assert!(parse(&deep).is_none());
        assert!(too_deep(&deep));
        let fits = format!(
            "{}{}",
            "[".repeat(JSON_DEPTH - 1),
            "]".repeat(JSON_DEPTH - 1)
        );
        assert!(parse(&fits).is_some());
        assert!(!too_deep(&fits));
        // Brackets in strings are text.
        let quoted = format!("{{\"a\": \"{}\\\" [\"}}", "[".repeat(300));
        assert!(parse(&quoted).is_some(), "{quoted}");
        assert!(!too_deep(&quoted));
    }
}
