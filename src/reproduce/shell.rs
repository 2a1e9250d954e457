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
user_agent='cartograph/__VERSION__'

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
  # The path exactly as written (no dot-segment squashing, no globbing), and
  # the headers the run sent: its User-Agent, none of curl's own additions.
  status=$(curl -sS --path-as-is --globoff --max-time "$max_time" -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' \
    -A "$user_agent" -H 'Expect:' -X "$method" "${auth[@]}" "$@" "$BASE$path")
  code=$?
  if [ "$code" = 28 ]; then
    status=timeout
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

# json MODE POINTER: reads the body at a JSON pointer, where `*` stands for
# every item of an array and nothing is under a missing or null parent:
#   value   the first value (text as it is, anything else as JSON), for captures
#   values  each value, as JSON, one a line
#   kinds   each value's kind, one a line: integer (no fractional part),
#           number, string, boolean, null, array, object
#   holds   for each object or array where the pointer's parent is: yes when
#           it holds the last member, no when it does not
json() {
  if command -v jq >/dev/null 2>&1; then
    jq -r --arg mode "$1" --arg p "$2" '
      def at($t): if ($t | length) == 0 then . else ($t[0]) as $k | ($t[1:]) as $r
        | if $k == "*" and type == "array" then .[] | at($r)
          elif type == "object" then (if has($k) then .[$k] | at($r) else empty end)
          elif type == "array" and ($k | test("^[0-9]+$")) then
            ($k | tonumber) as $i | (if $i < length then .[$i] | at($r) else empty end)
          else empty end end;
      def kind: if type == "number" then (if . == floor then "integer" else "number" end) else type end;
      ($p | if . == "" then [] else (ltrimstr("/") | split("/") | map(gsub("~1"; "/") | gsub("~0"; "~"))) end) as $t
      | if $mode == "value" then first(at($t)) | (if type == "string" then . else tojson end)
        elif $mode == "values" then at($t) | tojson
        elif $mode == "kinds" then at($t) | kind
        elif $mode == "holds" and ($t | length) > 0 then ($t[-1]) as $k | at($t[:-1])
          | if type == "object" then (if has($k) then "yes" else "no" end)
            elif type == "array" and ($k | test("^[0-9]+$")) then (if ($k | tonumber) < length then "yes" else "no" end)
            else empty end
        else empty end' "$tmp/body" 2>/dev/null
  elif command -v python3 >/dev/null 2>&1; then
    python3 - "$1" "$2" "$tmp/body" <<'PY'
import json, sys
mode, pointer, path = sys.argv[1:4]
try:
    body = json.load(open(path))
except Exception:
    sys.exit(0)
tokens = [] if pointer == "" else [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]
def at(v, t):
    if not t:
        yield v
    elif t[0] == "*" and isinstance(v, list):
        for item in v:
            yield from at(item, t[1:])
    elif isinstance(v, dict):
        if t[0] in v:
            yield from at(v[t[0]], t[1:])
    elif isinstance(v, list) and t[0].isdigit() and t[0].isascii():
        if int(t[0]) < len(v):
            yield from at(v[int(t[0])], t[1:])
def kind(v):
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
        return "integer"
    return {type(None): "null", float: "number", str: "string", list: "array", dict: "object"}[type(v)]
def dump(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
if mode == "value":
    for v in at(body, tokens):
        print(v if isinstance(v, str) else dump(v))
        break
elif mode == "values":
    for v in at(body, tokens):
        print(dump(v))
elif mode == "kinds":
    for v in at(body, tokens):
        print(kind(v))
elif mode == "holds" and tokens:
    last = tokens[-1]
    for p in at(body, tokens[:-1]):
        if isinstance(p, dict):
            print("yes" if last in p else "no")
        elif isinstance(p, list) and last.isdigit() and last.isascii():
            print("yes" if int(last) < len(p) else "no")
PY
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
    // `status` may be the word `timeout`: numeric tests only on numbers.
    let number = "[ \"$status\" != timeout ]";
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
            allowed,
        } => {
            // A kind the schema does not allow, among the values there;
            // `number` allows integers, as in JSON Schema.
            let (invert, kinds): (bool, Vec<&str>) = if allowed.is_empty() {
                (false, vec![json_type.as_str()])
            } else {
                (true, allowed.iter().map(String::as_str).collect())
            };
            let mut patterns = String::new();
            for k in &kinds {
                patterns.push_str(&format!(" -e {}", quote(k)));
                if *k == "number" {
                    patterns.push_str(" -e integer");
                }
            }
            format!(
                "{} && json kinds {} | grep -q{}xF{patterns}",
                status(*s),
                quote(pointer),
                if invert { "v" } else { "" }
            )
        }
        FaultCheck::JsonValue {
            status: s,
            pointer,
            value,
        } => format!(
            "{} && json values {} | grep -qxF -- {}",
            status(*s),
            quote(pointer),
            quote(&value.to_string())
        ),
        FaultCheck::JsonMissing { status: s, pointer } => format!(
            "{} && json holds {} | grep -qx no",
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
        out.push_str("# Note: this sequence may not show the fault on a freshly started server:\n");
        for r in &script.not_standalone {
            out.push_str(&format!("#   {}\n", r.replace(['\n', '\r'], " ")));
        }
        if script.not_standalone.is_empty() {
            out.push_str("#   it names what it does not create (the server's own data, or what the run made earlier):\n");
            for u in &script.unmade {
                out.push_str(&format!(
                    "#   {}\n",
                    u.to_string().replace(['\n', '\r'], " ")
                ));
            }
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
            .replace("__TIMEOUT__", &timeout.to_string())
            .replace("__VERSION__", env!("CARGO_PKG_VERSION")),
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
        match (&step.content_type, &step.body) {
            (Some(ct), _) => {
                line.push_str(&format!(" -H {}", quote(&format!("Content-Type: {ct}"))))
            }
            // curl would call a bare body a form; the run sent no type.
            (None, Some(_)) => line.push_str(" -H 'Content-Type:'"),
            (None, None) => {}
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

    #[test]
    fn curl_sends_what_the_run_sent_and_nothing_of_its_own() {
        let script = Script {
            target: "http://127.0.0.1:1".into(),
            fault: None,
            steps: vec![crate::reproduce::Step {
                operation: "op".into(),
                method: "POST".into(),
                path: "/a/../b/[x]/".into(),
                headers: vec![("Accept".into(), "text/csv".into())],
                content_type: None,
                body: Some("raw".into()),
                graphql_query: false,
                breach: None,
                captures: vec![],
                status: Some(200),
                graphql_clean: false,
            }],
            standalone: true,
            unmade: vec![],
            not_standalone: vec![],
            direct: Vec::new(),
        };
        let text = render(&script);
        assert!(text.contains("--path-as-is --globoff"), "{text}");
        assert!(
            text.contains(&format!(
                "user_agent='cartograph/{}'",
                env!("CARGO_PKG_VERSION")
            )),
            "{text}"
        );
        assert!(text.contains("-A \"$user_agent\" -H 'Expect:'"), "{text}");
        assert!(
            text.contains("step POST '/a/../b/[x]/' -H 'Accept: text/csv' -H 'Content-Type:' --data-binary 'raw'"),
            "{text}"
        );
    }
}
