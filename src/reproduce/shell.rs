//! A script as a standalone shell script of `curl` calls: values carried with
//! shell variables (taken from `Location` with sed, from JSON bodies with jq or
//! python3), the target as first argument, exit status 1 when the fault shows.
//!
//! Every text of the script (names, paths, headers, bodies, values the
//! server gave) is data: it goes into a single-quoted word (or, when it holds
//! control characters, an ANSI-C `$'…'` word with them escaped), and into a
//! comment only on one line with its control characters escaped. Nothing of
//! it ever stands inside double quotes, where `$(…)` and backticks run.

use std::collections::HashSet;

use super::{FaultCheck, Script, Source};
use crate::model::text::one_line;

/// `s` as one shell word that means exactly `s` (one quoting rule for
/// the scripts and every command printed to paste).
pub use crate::model::text::shell_word as quote;

/// Names the script itself uses: a captured value named like one would
/// overwrite it (a capture named `tmp` would make the exit trap delete
/// whatever the server answered).
const RESERVED: &[&str] = &[
    "tmp",
    "extra",
    "max_time",
    "status",
    "method",
    "path",
    "code",
    "auth",
    "default_base",
];

/// The shell variable of a capture: its name when that is a lower-case
/// identifier the script does not use itself, else `v_` and its letters.
fn var(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let plain = clean == name
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && !RESERVED.contains(&name);
    if plain { clean } else { format!("v_{clean}") }
}

/// A text with `{{var}}`s as one shell word: literal parts quoted,
/// variables double-quoted. Only the names in `known` (captured by an
/// earlier step) are variables; any other `{{…}}` is literal text.
fn word(text: &str, known: &HashSet<&str>) -> String {
    let mut out = String::new();
    let mut literal = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let name = rest[start + 2..]
            .find("}}")
            .map(|len| &rest[start + 2..start + 2 + len])
            .filter(|name| known.contains(name));
        match name {
            Some(name) => {
                literal.push_str(&rest[..start]);
                if !literal.is_empty() {
                    out.push_str(&quote(&literal));
                    literal.clear();
                }
                out.push_str(&format!("\"${{{}}}\"", var(name)));
                rest = &rest[start + 2 + name.len() + 2..];
            }
            None => {
                literal.push_str(&rest[..start + 2]);
                rest = &rest[start + 2..];
            }
        }
    }
    literal.push_str(rest);
    if !literal.is_empty() || out.is_empty() {
        out.push_str(&quote(&literal));
    }
    out
}

const PRELUDE: &str = r#"set -u
default_base=__TARGET__
BASE="${1:-$default_base}"
BASE="${BASE%/}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Credentials are never written into reproducers; give them here if the API needs them:
#   CARTOGRAPH_HEADER='Authorization: Bearer …' ./this-script.sh
# and an API key sent in the query (the run's --query-key) likewise:
#   CARTOGRAPH_QUERY='api_key=…' ./this-script.sh
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
  local auth=("${extra[@]}") url="$BASE$path" n v
  sent_as="${IDENTITY:-CARTOGRAPH_HEADER}"
  if [ -n "${NO_CREDENTIALS:-}" ]; then
    auth=()
  elif [ -n "${IDENTITY:-}" ]; then
    # A step sent as another identity: its headers come from that
    # identity's variable (a second header from VAR_2, and so on).
    auth=()
    for n in "" _2 _3 _4; do
      v="$IDENTITY$n"
      if [ -n "${!v:-}" ]; then auth+=(-H "${!v}"); fi
    done
    if [ "${#auth[@]}" = 0 ]; then
      echo "set $IDENTITY='Header: value' to that identity's credentials" >&2
      exit 2
    fi
  elif [ -n "${CARTOGRAPH_QUERY:-}" ]; then
    case "$path" in
      *\?*) url="$url&$CARTOGRAPH_QUERY" ;;
      *) url="$url?$CARTOGRAPH_QUERY" ;;
    esac
  fi
  # The path exactly as written (no dot-segment squashing, no globbing), and
  # the headers the run sent: its User-Agent, none of curl's own additions.
  status=$(curl -sS --path-as-is --globoff --max-time "$max_time" -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' \
    -A "$user_agent" -H 'Expect:' -X "$method" "${auth[@]}" "$@" "$url")
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
    echo "curl failed on $method ${path//[[:cntrl:]]/?}" >&2
    exit 2
  fi
  echo "$method ${path//[[:cntrl:]]/?} -> $status" >&2
}

# The last segment of the Location header.
location_id() {
  sed -n 's/^[Ll]ocation:[[:space:]]*//p' "$tmp/headers" | tr -d '\r' | sed -e 's/[?#].*//' -e 's#/*$##' -e 's#.*/##'
}

# The response's media type, without parameters.
content_type() {
  sed -n 's/^[Cc]ontent-[Tt]ype:[[:space:]]*//p' "$tmp/headers" | tr -d '\r' | cut -d';' -f1 | tr 'A-Z' 'a-z'
}

# has_header NAME: whether the answer has a header of that (lower-case) name.
has_header() {
  tr 'A-Z' 'a-z' < "$tmp/headers" | grep -q "^$1:"
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

# graphql_error PATH TEXT: an entry of the GraphQL answer's `errors` is at
# PATH (`data.book[*].author`: `.name` per name, `[*]` per index; `-` for
# an entry without a path) and one of its strings but its path holds TEXT,
# in any ASCII case. A bare string entry is its own message.
graphql_error() {
  if command -v jq >/dev/null 2>&1; then
    jq -e --arg p "$1" --arg t "$2" '
      ($t | ascii_downcase) as $t
      | (.errors // empty) | (if type == "array" then .[] else . end)
      | (if type == "string" then {message: .} else . end) | select(type == "object")
      | select((.path | if type == "array" and length > 0
          then "data" + (map(if type == "number" then "[*]" elif type == "string" then "." + . else "." + tojson end) | join(""))
          else "-" end) == $p)
      | select([del(.path) | .. | strings | ascii_downcase | contains($t)] | any)' "$tmp/body" >/dev/null 2>&1
  elif command -v python3 >/dev/null 2>&1; then
    python3 - "$1" "$2" "$tmp/body" <<'PY'
import json, sys
want, text, path = sys.argv[1:4]
try:
    body = json.load(open(path))
except Exception:
    sys.exit(1)
def low(s):
    return "".join(c.lower() if c.isascii() else c for c in s)
text = low(text)
errors = body.get("errors") if isinstance(body, dict) else None
entries = [] if errors is None else errors if isinstance(errors, list) else [errors]
def says(v):
    if isinstance(v, str):
        return text in low(v)
    if isinstance(v, list):
        return any(says(i) for i in v)
    if isinstance(v, dict):
        return any(says(i) for i in v.values())
    return False
for e in entries:
    if isinstance(e, str):
        e = {"message": e}
    if not isinstance(e, dict):
        continue
    p = e.get("path")
    if isinstance(p, list) and p:
        at = "data" + "".join(
            "[*]" if isinstance(s, (int, float)) and not isinstance(s, bool)
            else "." + s if isinstance(s, str)
            else "." + json.dumps(s, separators=(",", ":"), ensure_ascii=False)
            for s in p)
    else:
        at = "-"
    if at == want and says({k: v for k, v in e.items() if k != "path"}):
        sys.exit(0)
sys.exit(1)
PY
  else
    echo "this script needs jq or python3 to read JSON" >&2
    exit 2
  fi
}

# refused SAW: the last step was answered 401 where the run saw SAW (the
# credentials it needs are missing or refused), or 502-504 where the run saw
# no server error (the server could not be asked: down, starting, or behind
# a proxy that lost it): the sequence cannot run (it would only say the
# fault did not show).
refused() {
  case "$status" in
    502|503|504)
      case "$1" in
        5??) ;;
        *)
          echo "cannot run: answered $status where the run was answered $1: the server could not be asked (down, starting, or behind a proxy that lost it); try again when it is up" >&2
          exit 2
          ;;
      esac
      ;;
  esac
  if [ "$status" = 401 ] && [ "$1" != 401 ]; then
    local hint="set $sent_as='Header: value' to valid ones"
    if [ "$sent_as" = CARTOGRAPH_HEADER ]; then
      hint="$hint (CARTOGRAPH_QUERY='name=value' for a key sent in the query)"
    fi
    echo "cannot run: answered 401 where the run was answered $1: the credentials are missing or refused; $hint" >&2
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
            format!(
                "{number} && [ \"$status\" -ge 500 ] && [ \"$status\" -le 599 ] && [ \"$status\" -ne 501 ]"
            )
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
        FaultCheck::NoHeader { status: s, name } => {
            format!("{} && ! has_header {}", status(*s), quote(name))
        }
        FaultCheck::Timeout { .. } => "[ \"$status\" = timeout ]".into(),
        FaultCheck::NoAnswer => "[ \"$status\" = no_answer ]".into(),
        FaultCheck::InvalidHttp => "[ \"$status\" = invalid_http ]".into(),
        FaultCheck::NotJson { status: s } => format!(
            "{} && [ -s \"$tmp/body\" ] && case \"$(content_type)\" in */json|*+json) true ;; *) false ;; esac && not_json",
            status(*s)
        ),
        FaultCheck::GraphqlError {
            status: s,
            path,
            text,
        } => format!(
            "{} && graphql_error {} {}",
            status(*s),
            quote(path),
            quote(text)
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
        out.push_str(&format!("# Fault: {} ({})\n", one_line(&f.message), f.code));
        out.push_str(&format!("# Signature: {}\n", one_line(&f.signature)));
    }
    out.push_str(&format!(
        "#\n# Usage: {} [BASE_URL]   (default: {})\n",
        "bash THIS_SCRIPT",
        one_line(&script.target)
    ));
    out.push_str("# Exit status: 1 when the fault shows, 0 when it does not, 2 when the sequence could not run.\n");
    let others: Vec<String> = {
        let mut seen: Vec<&str> = Vec::new();
        for name in script.steps.iter().filter_map(|s| s.identity.as_deref()) {
            if name != crate::execution::identities::ANONYMOUS && !seen.contains(&name) {
                seen.push(name);
            }
        }
        seen.iter()
            .map(|n| {
                format!(
                    "{} (identity {})",
                    crate::execution::identities::env_var(n),
                    one_line(n)
                )
            })
            .collect()
    };
    if !others.is_empty() {
        out.push_str(&format!(
            "# Credentials: CARTOGRAPH_HEADER for the run's own identity, and {}.\n",
            others.join(", ")
        ));
    }
    out.push_str("# Needs curl, and jq or python3 when values are read from JSON bodies.\n");
    if script.planted > 0 {
        let steps = match script.planted {
            1 => "Step 1 plants".to_string(),
            n => format!("Steps 1 to {n} plant"),
        };
        out.push_str(&format!(
            "# {steps} what the fault needs: inputs the description forbids that the server\n# accepted earlier in the run, before the fault first showed.\n"
        ));
    }
    if script.makes_its_conflict() {
        out.push_str(&format!(
            "# Step {} makes what the last one's conflict needs: the same creation, sent\n# once before (on a fresh server it succeeds, and the last one conflicts).\n",
            script.steps.len() - 1
        ));
    }
    match script.fresh {
        Some(crate::faults::Fresh::Shows) => out.push_str(
            "# Fresh: shows. Run after the reset (--reset-command) before it was written,\n# it showed its fault.\n",
        ),
        Some(crate::faults::Fresh::DoesNotShow) => out.push_str(
            "# Fresh: does_not_show. Run after the reset (--reset-command) before it was\n# written, it did not show its fault.\n",
        ),
        Some(crate::faults::Fresh::CannotRun) => out.push_str(
            "# Fresh: cannot_run. Run after the reset (--reset-command) before it was\n# written, it could not run to its end.\n",
        ),
        None => {}
    }
    if !script.standalone {
        out.push_str("# Note: this sequence may not show the fault on a freshly started server:\n");
        for r in &script.not_standalone {
            out.push_str(&format!("#   {}\n", one_line(r)));
        }
        if script.not_standalone.is_empty() {
            out.push_str("#   it names what it does not create (the server's own data, or what the run made earlier):\n");
            for u in &script.unmade {
                out.push_str(&format!("#   {}\n", one_line(&u.to_string())));
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
            .replace("__TARGET__", &quote(&script.target))
            .replace("__TIMEOUT__", &timeout.to_string())
            .replace("__VERSION__", env!("CARGO_PKG_VERSION")),
    );
    out.push('\n');
    let mut names: Vec<&str> = Vec::new();
    for name in script.steps.iter().filter_map(|s| s.identity.as_deref()) {
        if name != crate::execution::identities::ANONYMOUS && !names.contains(&name) {
            names.push(name);
        }
    }
    if !names.is_empty() {
        out.push_str(
            "# Some steps go as other identities (never written here); give each its header:\n",
        );
        for name in &names {
            out.push_str(&format!(
                "#   {}='Authorization: Bearer …'   # identity {}\n",
                crate::execution::identities::env_var(name),
                one_line(name)
            ));
        }
        // All checked before the first request: a variable found missing
        // at its step would leave what the earlier steps wrote.
        out.push_str("for v in");
        for name in &names {
            out.push(' ');
            out.push_str(&crate::execution::identities::env_var(name));
        }
        out.push_str(
            "; do\n  if [ -z \"${!v:-}\" ]; then\n    echo \"set $v='Header: value' to that identity's credentials (nothing was sent)\" >&2\n    exit 2\n  fi\ndone\n",
        );
        out.push('\n');
    }
    // The variables earlier steps captured: only these are `{{…}}` to fill.
    let mut known: HashSet<&str> = HashSet::new();
    for (i, step) in script.steps.iter().enumerate() {
        out.push_str(&format!(
            "# {}. {} (the run saw {})\n",
            i + 1,
            one_line(&step.operation),
            step.status
                .map_or("no response".to_string(), |s| s.to_string())
        ));
        if let Some(b) = &step.breach {
            out.push_str(&format!("# Deliberately: {}\n", one_line(&b.to_string())));
        }
        let bare = step
            .breach
            .as_ref()
            .is_some_and(|b| b.kind.drops_credentials());
        let who = match step.identity.as_deref() {
            _ if bare => "NO_CREDENTIALS=1 ".to_string(),
            Some(crate::execution::identities::ANONYMOUS) => "NO_CREDENTIALS=1 ".to_string(),
            Some(name) => format!("IDENTITY={} ", crate::execution::identities::env_var(name)),
            None => String::new(),
        };
        if let Some(name) = &step.identity {
            out.push_str(&format!("# Sent as identity {}\n", one_line(name)));
        }
        let mut line = format!(
            "{who}step {} {}",
            quote(&step.method),
            word(&step.path, &known)
        );
        for (name, value) in &step.headers {
            line.push_str(&format!(
                " -H {}",
                word(&format!("{name}: {value}"), &known)
            ));
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
            line.push_str(&format!(" --data-binary {}", word(body, &known)));
        }
        out.push_str(&line);
        out.push('\n');
        // A step that went with credentials and got past them in the run.
        if !who.starts_with("NO_CREDENTIALS")
            && let Some(saw) = step.status.filter(|s| *s != 401)
        {
            out.push_str(&format!("refused {saw}\n"));
        }
        for c in &step.captures {
            let get = match &c.from {
                Source::LocationId => "location_id".to_string(),
                Source::Json { pointer } => format!("json value {}", quote(pointer)),
            };
            let v = var(&c.var);
            out.push_str(&format!("{v}=\"$({get})\"\n"));
            out.push_str(&format!("need {} \"${v}\"\n", quote(&c.var)));
            known.insert(c.var.as_str());
        }
        out.push('\n');
    }
    match &script.fault {
        Some(f) => {
            out.push_str(&format!("if {}; then\n", condition(&f.check)));
            out.push_str(&format!(
                "  echo {} >&2\n  exit 1\nfi\n",
                quote(&format!("FAULT SHOWS: {}", one_line(&f.message)))
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
    use crate::oracles::registry::Code;
    use crate::reproduce::{Capture, ScriptFault, Step};

    fn known<'a>(names: &[&'a str]) -> HashSet<&'a str> {
        names.iter().copied().collect()
    }

    #[test]
    fn words_quote_literals_and_splice_variables() {
        let k = known(&["x", "id"]);
        assert_eq!(word("/a/{{x}}/b", &k), r#"'/a/'"${x}"'/b'"#);
        assert_eq!(word("it's", &k), r#"'it'\''s'"#);
        assert_eq!(word(r#"{"id":{{id}}}"#, &k), r#"'{"id":'"${id}"'}'"#);
        assert_eq!(word("", &k), "''");
        // Only captured names are variables: the rest is text.
        assert_eq!(word("/a/{{HOME}}/{{x}}", &k), r#"'/a/{{HOME}}/'"${x}""#);
        assert_eq!(word("{{x", &k), "'{{x'");
    }

    #[test]
    fn captures_never_overwrite_the_scripts_own_variables() {
        assert_eq!(var("book_id"), "book_id");
        assert_eq!(var("tmp"), "v_tmp");
        assert_eq!(var("status"), "v_status");
        assert_eq!(var("PATH"), "v_path");
        assert_eq!(var("9lives"), "v_9lives");
        assert_eq!(var("a$(b)"), "v_a__b_");
    }

    /// What bash makes of `word` as an argument.
    fn through_bash(word: &str) -> Option<Vec<u8>> {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("printf '%s' {word}"))
            .output()
            .ok()?;
        Some(out.stdout)
    }

    #[test]
    fn quoted_words_mean_exactly_their_text() {
        for text in [
            "plain",
            "it's",
            "$(touch x) `touch y` \"; touch z; \" ${HOME} \\ !",
            "line\nbreak\r\tand \u{1b}[31m escape \u{7} bell",
            "\u{9b}c1 and unicode é ✓",
        ] {
            let q = quote(text);
            assert!(!q.contains(|c: char| c.is_control()), "{q:?}");
            if let Some(said) = through_bash(&q) {
                assert_eq!(String::from_utf8_lossy(&said), text, "{q}");
            }
        }
        // A NUL cannot be in a shell word: it is dropped, nothing else.
        assert_eq!(quote("a\u{0}b"), "$'ab'");
    }

    fn hostile_script() -> Script {
        let evil = "x\n$(touch /tmp/pwned)`touch /tmp/pwned2`'\"\u{1b}]0;t\u{7}\r";
        Script {
            target: format!("http://127.0.0.1:1/$(touch /tmp/pwned)\"{evil}"),
            fault: Some(ScriptFault {
                code: Code::ServerError,
                signature: format!("server_error:{evil}:500"),
                message: format!("the server answered 500 {evil}"),
                check: FaultCheck::ServerError,
            }),
            steps: vec![
                Step {
                    operation: format!("make{evil}"),
                    method: "POST".into(),
                    path: format!("/things/{evil}/{{{{HOME}}}}"),
                    headers: vec![("X-A".into(), evil.into())],
                    content_type: Some("application/json".into()),
                    body: Some(format!("{{\"name\":\"{evil}\"}}")),
                    graphql_query: false,
                    breach: None,
                    identity: None,
                    captures: vec![Capture {
                        var: "tmp".into(),
                        from: Source::Json {
                            pointer: format!("/{evil}"),
                        },
                    }],
                    status: Some(201),
                    graphql_clean: false,
                },
                Step {
                    operation: evil.into(),
                    method: "GET".into(),
                    path: "/things/{{tmp}}".into(),
                    headers: vec![],
                    content_type: None,
                    body: None,
                    graphql_query: false,
                    breach: None,
                    identity: None,
                    captures: vec![],
                    status: Some(500),
                    graphql_clean: false,
                },
            ],
            standalone: false,
            unmade: vec![crate::reproduce::Unmade {
                operation: evil.into(),
                name: evil.into(),
                value: evil.into(),
                at: None,
                from_run: None,
                maker: None,
            }],
            not_standalone: vec![],
            direct: Vec::new(),
            planted: 0,
            fresh: None,
        }
    }

    #[test]
    fn hostile_text_stays_data() {
        let text = render(&hostile_script());
        // Comments stay comments, and no control character reaches the file.
        for line in text.lines() {
            assert!(
                !line.contains(|c: char| c.is_control() && c != '\t'),
                "{line:?}"
            );
        }
        for line in text.lines().filter(|l| l.contains("pwned")) {
            let quoted = line.starts_with('#')
                || line.starts_with("default_base=$'")
                || line.starts_with("step ")
                || line.starts_with("v_tmp=")
                || line.starts_with("need ")
                || line.starts_with("  echo '");
            assert!(quoted, "{line}");
        }
        assert!(text.contains("v_tmp=\"$(json value $'"), "{text}");
        assert!(text.contains(r#"'/things/'"${v_tmp}""#), "{text}");
        assert!(!text.contains("${HOME}"), "{text}");
        let syntax = std::process::Command::new("bash")
            .arg("-n")
            .arg("/dev/stdin")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(text.as_bytes())?;
                child.wait()
            });
        if let Ok(status) = syntax {
            assert!(status.success(), "{text}");
        }
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
                identity: None,
                captures: vec![],
                status: Some(200),
                graphql_clean: false,
            }],
            standalone: true,
            unmade: vec![],
            not_standalone: vec![],
            direct: Vec::new(),
            planted: 0,
            fresh: None,
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
            text.contains("step 'POST' '/a/../b/[x]/' -H 'Accept: text/csv' -H 'Content-Type:' --data-binary 'raw'"),
            "{text}"
        );
        assert!(!text.contains("plant"), "{text}");
        let planting = Script {
            planted: 1,
            fresh: None,
            ..script.clone()
        };
        assert!(render(&planting).contains("# Step 1 plants what the fault needs"));
        let planting = Script {
            planted: 3,
            fresh: None,
            ..script
        };
        assert!(render(&planting).contains("# Steps 1 to 3 plant what the fault needs"));
    }
}
