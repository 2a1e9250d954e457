#!/usr/bin/env bash
# Reproducer written by Cartograph 0.1.0.
# Fault: the server answered 500 (server_error)
# Signature: server_error:listOrders:500
#
# Usage: bash THIS_SCRIPT [BASE_URL]   (default: http://127.0.0.1:PORT/)
# Exit status: 1 when the fault shows, 0 when it does not, 2 when the sequence could not run.
# Needs curl, and jq or python3 when values are read from JSON bodies.
# Fresh: shows. Run after the reset (--reset-command) before it was written,
# it showed its fault.

set -u
default_base='http://127.0.0.1:PORT/'
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
max_time="${CARTOGRAPH_TIMEOUT:-60}"
user_agent='cartograph/0.1.0'

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

# 1. listOrders (the run saw 500)
# Deliberately: credentials bearerAuth: malformed credentials
NO_CREDENTIALS=1 step 'GET' '/orders' -H 'Authorization: Bearer '

if case "$status" in *[!0-9]*) false ;; esac && [ "$status" -ge 500 ] && [ "$status" -le 599 ] && [ "$status" -ne 501 ]; then
  echo 'FAULT SHOWS: the server answered 500' >&2
  exit 1
fi
echo "the fault did not show (last status $status)" >&2
exit 0
