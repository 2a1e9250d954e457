//! A script as a standalone shell script of `curl` calls: values carried with
//! shell variables (taken from `Location` with sed, from JSON bodies with jq or
//! python3), the target as first argument, exit status 1 when the fault shows.

use super::{FaultCheck, Script, Source};

/// Single-quotes `s` for the shell.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A text with `{{var}}`s as one shell word: literal parts single-quoted,
/// variables double-quoted.
fn word(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start + 2..].find("}}") else {
            break;
        };
        let name = &rest[start + 2..start + 2 + len];
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            break;
        }
        if start > 0 {
            out.push_str(&quote(&rest[..start]));
        }
        out.push_str(&format!("\"${{{name}}}\""));
        rest = &rest[start + 2 + len + 2..];
    }
    if !rest.is_empty() || out.is_empty() {
        out.push_str(&quote(rest));
    }
    out
}

const PRELUDE: &str = r#"set -u
BASE="${1:-__TARGET__}"
BASE="${BASE%/}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Credentials are never written into reproducers; give them here if the API needs them:
#   CARTOGRAPH_HEADER='Authorization: Bearer …' ./this-script.sh
extra=()
if [ -n "${CARTOGRAPH_HEADER:-}" ]; then extra=(-H "$CARTOGRAPH_HEADER"); fi
# Seconds each request may take (the run's --timeout when the fault is one).
max_time="${CARTOGRAPH_TIMEOUT:-__TIMEOUT__}"

# step METHOD PATH [curl arguments…]: sends one request, keeps its status,
# headers and body; the status is `timeout` when no answer came in time.
step() {
  local method="$1" path="$2" code
  shift 2
  : >"$tmp/body"
  : >"$tmp/headers"
  # A step that tests credentials sends its own, or none.
  local auth=("${extra[@]}")
  if [ -n "${NO_CREDENTIALS:-}" ]; then auth=(); fi
  status=$(curl -sS --max-time "$max_time" -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' -X "$method" "${auth[@]}" "$@" "$BASE$path")
  code=$?
  if [ "$code" = 28 ]; then
    status=timeout
  elif [ "$code" = 52 ] || { [ "$code" = 56 ] && [ "$status" = 000 ]; }; then
    # Closed or reset before any answer.
    status=no_answer
  elif [ "$code" = 1 ] || [ "$code" = 8 ] || [ "$code" = 18 ] || [ "$code" = 56 ]; then
    # Not HTTP (curl: unsupported version, weird reply), or cut mid-answer.
    status=invalid_http
  elif [ "$code" != 0 ]; then
    echo "curl failed on $method $path" >&2
    exit 2
  fi
  echo "$method $path -> $status" >&2
}

# The last segment of the Location header.
location_id() {
  sed -n 's/^[Ll]ocation:[[:space:]]*//p' "$tmp/headers" | tr -d '\r' | sed -e 's/[?#].*//' -e 's#/*$##' -e 's#.*/##'
}

# The response's media type, without parameters.
content_type() {
  sed -n 's/^[Cc]ontent-[Tt]ype:[[:space:]]*//p' "$tmp/headers" | tr -d '\r' | cut -d';' -f1 | tr 'A-Z' 'a-z'
}

# json MODE POINTER: the body's value at a JSON pointer (MODE value) or its type (MODE type).
json() {
  if command -v jq >/dev/null 2>&1; then
    jq -r --arg mode "$1" --arg p "$2" '
      ($p | if . == "" then [] else (ltrimstr("/") | split("/")
        | map(gsub("~1"; "/") | gsub("~0"; "~") | if test("^[0-9]+$") then tonumber else . end)) end) as $path
      | (try getpath($path) catch null) as $v
      | if $mode == "type" then ($v | type) elif ($v | type) == "string" then $v else ($v | tojson) end' "$tmp/body" 2>/dev/null \
      || { [ "$1" = type ] && echo null; }
  elif command -v python3 >/dev/null 2>&1; then
    python3 - "$1" "$2" "$tmp/body" <<'PY'
import json, sys
mode, pointer, path = sys.argv[1:4]
try:
    v = json.load(open(path))
except Exception:
    v = None
for t in ([] if pointer == "" else pointer[1:].split("/")):
    t = t.replace("~1", "/").replace("~0", "~")
    if isinstance(v, list):
        v = v[int(t)] if t.isdigit() and int(t) < len(v) else None
    elif isinstance(v, dict):
        v = v.get(t)
    else:
        v = None
if mode == "type":
    print({type(None): "null", bool: "boolean", int: "number", float: "number",
           str: "string", list: "array", dict: "object"}[type(v)])
else:
    print(v if isinstance(v, str) else json.dumps(v))
PY
  else
    echo "this script needs jq or python3 to read JSON" >&2
    exit 2
  fi
}

# not_json: the body does not parse as JSON.
not_json() {
  if command -v jq >/dev/null 2>&1; then
    ! jq empty "$tmp/body" >/dev/null 2>&1
  elif command -v python3 >/dev/null 2>&1; then
    ! python3 -c 'import json, sys; json.loads(open(sys.argv[1], encoding="utf-8-sig").read())' "$tmp/body" 2>/dev/null
  else
    echo "this script needs jq or python3 to read JSON" >&2
    exit 2
  fi
}

# need NAME VALUE: stops when a response did not give a value a later request needs.
need() {
  if [ -z "$2" ] || [ "$2" = null ]; then
    echo "the response gave no value for $1; the sequence cannot go on" >&2
    exit 2
  fi
}
"#;

/// The condition, in shell, under which the last response shows the fault.
fn condition(check: &FaultCheck) -> String {
    let status = |s: u16| format!("[ \"$status\" = {s} ]");
    // `status` may be a word (`timeout`, `no_answer`, `invalid_http`):
    // numeric tests only on numbers.
    let number = "case \"$status\" in *[!0-9]*) false ;; esac";
    match check {
        FaultCheck::Status { status: s } => status(*s),
        FaultCheck::ServerError => {
            format!("{number} && [ \"$status\" -ge 500 ] && [ \"$status\" -le 599 ]")
        }
        FaultCheck::Success => {
            format!("{number} && [ \"$status\" -ge 200 ] && [ \"$status\" -lt 300 ]")
        }
        FaultCheck::JsonType {
            status: s,
            pointer,
            json_type,
        } => format!(
            "{} && [ \"$(json type {})\" = {} ]",
            status(*s),
            quote(pointer),
            quote(json_type)
        ),
        FaultCheck::JsonValue {
            status: s,
            pointer,
            value,
        } => {
            let text = match value {
                serde_json::Value::String(t) => t.clone(),
                other => other.to_string(),
            };
            format!(
                "{} && [ \"$(json value {})\" = {} ]",
                status(*s),
                quote(pointer),
                quote(&text)
            )
        }
        FaultCheck::JsonMissing { status: s, pointer } => format!(
            "{} && [ \"$(json type {})\" = null ]",
            status(*s),
            quote(pointer)
        ),
        FaultCheck::ContentType { status: s, media } => {
            format!(
                "{} && [ \"$(content_type)\" = {} ]",
                status(*s),
                quote(media)
            )
        }
        FaultCheck::Timeout { .. } => "[ \"$status\" = timeout ]".into(),
        FaultCheck::NoAnswer => "[ \"$status\" = no_answer ]".into(),
        FaultCheck::InvalidHttp => "[ \"$status\" = invalid_http ]".into(),
        FaultCheck::NotJson { status: s } => format!(
            "{} && [ -s \"$tmp/body\" ] && case \"$(content_type)\" in */json|*+json) true ;; *) false ;; esac && not_json",
            status(*s)
        ),
        FaultCheck::BodyContains { status: s, text } => {
            let first = text.lines().next().unwrap_or(text);
            format!(
                "{} && grep -qF -- {} \"$tmp/body\"",
                status(*s),
                quote(first)
            )
        }
    }
}

/// Renders `script` as a bash script.
pub fn render(script: &Script) -> String {
    let mut out = String::from("#!/usr/bin/env bash\n");
    out.push_str(&format!(
        "# Reproducer written by Cartograph {}.\n",
        env!("CARGO_PKG_VERSION")
    ));
    if let Some(f) = &script.fault {
        out.push_str(&format!(
            "# Fault: {} ({})\n",
            f.message.replace('\n', " "),
            f.code
        ));
        out.push_str(&format!("# Signature: {}\n", f.signature));
    }
    out.push_str(&format!(
        "#\n# Usage: {} [BASE_URL]   (default: {})\n",
        "bash THIS_SCRIPT", script.target
    ));
    out.push_str("# Exit status: 1 when the fault shows, 0 when it does not, 2 when the sequence could not run.\n");
    out.push_str("# Needs curl, and jq or python3 when values are read from JSON bodies.\n");
    if !script.standalone {
        out.push_str("# Note: this sequence names resources it does not create (the server's own\n# data, or what the run made earlier), so it shows the fault against a\n# server that has them.\n");
        for u in &script.unmade {
            out.push_str(&format!("#   {}\n", u.to_string().replace('\n', " ")));
        }
    }
    out.push('\n');
    // A timeout is reproduced with the run's own limit; anything else may
    // take a minute before the script gives up on it.
    let timeout = match script.fault.as_ref().map(|f| &f.check) {
        Some(FaultCheck::Timeout { seconds }) => *seconds,
        _ => 60,
    };
    out.push_str(
        &PRELUDE
            .replace("__TARGET__", &script.target.replace('"', ""))
            .replace("__TIMEOUT__", &timeout.to_string()),
    );
    out.push('\n');
    for (i, step) in script.steps.iter().enumerate() {
        out.push_str(&format!(
            "# {}. {} (the run saw {})\n",
            i + 1,
            step.operation,
            step.status
                .map_or("no response".to_string(), |s| s.to_string())
        ));
        if let Some(b) = &step.breach {
            out.push_str(&format!(
                "# Deliberately: {}\n",
                b.to_string().replace('\n', " ")
            ));
        }
        let bare = step
            .breach
            .as_ref()
            .is_some_and(|b| b.kind.drops_credentials());
        let mut line = format!(
            "{}step {} {}",
            if bare { "NO_CREDENTIALS=1 " } else { "" },
            step.method,
            word(&step.path)
        );
        for (name, value) in &step.headers {
            line.push_str(&format!(" -H {}", word(&format!("{name}: {value}"))));
        }
        if let Some(ct) = &step.content_type {
            line.push_str(&format!(" -H {}", quote(&format!("Content-Type: {ct}"))));
        }
        if let Some(body) = &step.body {
            line.push_str(&format!(" --data-binary {}", word(body)));
        }
        out.push_str(&line);
        out.push('\n');
        for c in &step.captures {
            let get = match &c.from {
                Source::LocationId => "location_id".to_string(),
                Source::Json { pointer } => format!("json value {}", quote(pointer)),
            };
            out.push_str(&format!("{}=\"$({get})\"\n", c.var));
            out.push_str(&format!("need {} \"${}\"\n", c.var, c.var));
        }
        out.push('\n');
    }
    match &script.fault {
        Some(f) => {
            out.push_str(&format!("if {}; then\n", condition(&f.check)));
            out.push_str(&format!(
                "  echo {} >&2\n  exit 1\nfi\n",
                quote(&format!("FAULT SHOWS: {}", f.message.replace('\n', " ")))
            ));
            out.push_str("echo \"the fault did not show (last status $status)\" >&2\nexit 0\n");
        }
        None => out.push_str("exit 0\n"),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_quote_literals_and_splice_variables() {
        assert_eq!(word("/a/{{x}}/b"), r#"'/a/'"${x}"'/b'"#);
        assert_eq!(word("it's"), r#"'it'\''s'"#);
        assert_eq!(word(r#"{"id":{{id}}}"#), r#"'{"id":'"${id}"'}'"#);
        assert_eq!(word(""), "''");
    }
}
