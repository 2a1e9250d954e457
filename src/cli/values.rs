//! The values flags take, parsed and checked (clap's value parsers): each
//! error says what was written and how to write it.

use std::time::Duration;

use crate::execution;
use crate::oracles::registry::Code;

/// The oracle codes one value of `--skip-check` or `--fail-on` stands for
/// (a code, or an earlier name of one or more).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Codes(Vec<Code>);

impl Codes {
    /// Every code the values stand for, once each, in their order.
    pub(super) fn flat(values: &[Codes]) -> Vec<Code> {
        let mut out: Vec<Code> = Vec::new();
        for code in values.iter().flat_map(|c| &c.0) {
            if !out.contains(code) {
                out.push(*code);
            }
        }
        out
    }
}

/// Reads [`Codes`], and lists the codes (with their titles) for shell
/// completion; earlier names are accepted but not offered.
#[derive(Debug, Clone, Copy)]
pub(super) struct CodeParser;

impl clap::builder::TypedValueParser for CodeParser {
    type Value = Codes;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Codes, clap::Error> {
        // A function parser words its error as clap words every other one.
        let parse: fn(&str) -> Result<Codes, String> =
            |name| crate::oracles::registry::resolve(name).map(Codes);
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(Code::ALL.iter().map(|c| {
            clap::builder::PossibleValue::new(c.as_str()).help(c.oracle().title)
        })))
    }
}

/// Checks an `--include`/`--exclude` pattern (so that a bad one in a
/// configuration file is reported at its line).
pub(super) fn parse_pattern(text: &str) -> Result<String, String> {
    crate::model::select::Pattern::parse(text).map(|_| text.to_string())
}

/// Parses `PATTERN=RATE` (`POST /search=1/s`).
pub(super) fn parse_rate_for(text: &str) -> Result<(String, execution::Rate), String> {
    let Some((pattern, rate)) = text.rsplit_once('=') else {
        return Err(format!(
            "{text:?}: write PATTERN=RATE, e.g. 'POST /search=1/s'"
        ));
    };
    crate::model::select::Pattern::parse(pattern)?;
    Ok((
        pattern.trim().to_string(),
        execution::parse_rate(rate.trim())?,
    ))
}

/// Parses `90s`, `5m`, `1h`.
pub(super) fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text).map_err(|e| format!("{text:?}: {e} (write e.g. 90s, 5m, 1h)"))
}

/// Parses a per-request timeout: a duration above zero (`0s` would make
/// every request a timeout before it is sent).
pub(super) fn parse_timeout(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d.is_zero() {
        return Err(format!(
            "{text:?}: the timeout must be above zero (write e.g. 500ms, 10s)"
        ));
    }
    Ok(d)
}

/// Parses a size: bytes (`1000000`), or a number with a unit: `k`, `M`, `G`
/// (also `KiB`, `MiB`, `GiB`) count by 1024, `kB`, `MB`, `GB` by 1000, as dd
/// reads them; `1.5M` is allowed. Zero is refused: no body would be read.
pub(super) fn parse_bytes(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = unit.trim();
    let factor: f64 = match unit {
        "" | "b" | "B" => 1.0,
        "k" | "K" | "KiB" | "kiB" | "Ki" => 1024.0,
        "kB" | "KB" => 1e3,
        "m" | "M" | "MiB" | "Mi" => 1024.0 * 1024.0,
        "MB" => 1e6,
        "g" | "G" | "GiB" | "Gi" => 1024.0 * 1024.0 * 1024.0,
        "GB" => 1e9,
        other => {
            return Err(format!(
                "{text:?}: unknown unit {other:?}; write bytes, or a number with k, M, G (by 1024; also KiB, MiB, GiB) or kB, MB, GB (by 1000), e.g. 64k or 4MiB"
            ));
        }
    };
    let n: f64 = number.replace('_', "").parse().map_err(|_| {
        format!("{text:?} is not a size; write bytes, or a number with a unit, e.g. 64k or 4MiB")
    })?;
    let bytes = (n * factor).round();
    if !(bytes >= 1.0 && bytes <= usize::MAX as f64) {
        return Err(format!("{text:?}: the size must be at least one byte"));
    }
    Ok(bytes as usize)
}

/// Parses a size limit as [`parse_bytes`] does, where `0` means no limit.
pub(super) fn parse_limit(text: &str) -> Result<usize, String> {
    if text.trim() == "0" {
        return Ok(0);
    }
    parse_bytes(text)
}

/// Parses a seed: a number up to 2^64 - 1, as reports write it (a JSON
/// string, so that JavaScript and jq keep every digit; its quotes may come
/// along when it is copied from there).
pub(super) fn parse_seed(text: &str) -> Result<u64, String> {
    let t = text.trim().trim_matches('"');
    t.parse().map_err(|_| {
        format!("{text:?} is not a seed: write a whole number from 0 to 18446744073709551615")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_of_zero_is_no_limit() {
        assert_eq!(parse_limit("0"), Ok(0));
        assert_eq!(parse_limit("64k"), Ok(64 * 1024));
        assert!(parse_bytes("0").is_err());
    }

    #[test]
    fn sizes_take_units() {
        assert_eq!(parse_bytes("1000000"), Ok(1_000_000));
        assert_eq!(parse_bytes("1k"), Ok(1024));
        assert_eq!(parse_bytes("64K"), Ok(65_536));
        assert_eq!(parse_bytes("4MiB"), Ok(4 * 1024 * 1024));
        assert_eq!(parse_bytes("4M"), Ok(4 * 1024 * 1024));
        assert_eq!(parse_bytes("1MB"), Ok(1_000_000));
        assert_eq!(parse_bytes("2kB"), Ok(2000));
        assert_eq!(parse_bytes("1.5k"), Ok(1536));
        assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
        assert!(parse_bytes("0").unwrap_err().contains("at least one byte"));
        assert!(parse_bytes("1x").unwrap_err().contains("unknown unit"));
        assert!(parse_bytes("lots").is_err());
    }

    #[test]
    fn a_timeout_must_be_above_zero() {
        assert_eq!(parse_timeout("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_timeout("500ms"), Ok(Duration::from_millis(500)));
        assert!(parse_timeout("0s").unwrap_err().contains("above zero"));
        assert!(parse_timeout("0ms").is_err());
    }

    #[test]
    fn seeds_come_back_as_written() {
        assert_eq!(parse_seed("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            parse_seed("\"12345678901234567890\""),
            Ok(12_345_678_901_234_567_890)
        );
        assert_eq!(parse_seed("7"), Ok(7));
        assert!(parse_seed("18446744073709551616").is_err());
        assert!(parse_seed("-1").is_err());
    }
}
