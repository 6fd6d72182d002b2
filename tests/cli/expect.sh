#!/usr/bin/env bash
# Run a command and check its exit code and output.
#
#   expect.sh [OPTIONS] CODE REGEX CMD [ARGS...]
#
# Runs CMD (60 s timeout), capturing stdout and stderr. Passes if the exit code is CODE and the combined output
# (stdout, then stderr) matches the extended regular expression REGEX (grep -E, any line). On failure it prints the
# command, the exit code and the output, and exits 1.
#
# Rules that always apply:
#   CODE 2 (bad usage): stderr must be exactly ONE line, starting with "dreduce: error:".
#   CODE 0: stderr must not contain a "dreduce: error:" line.
#
# OPTIONS (before CODE; used by tests/cli/cases.cmake's dr_cli_check):
#   --also REGEX        the combined output must also match REGEX (repeatable)
#   --not REGEX         the combined output must NOT match REGEX (repeatable)
#   --json              stdout (with --file: FILE) must be one valid JSON document (python3 json.load)
#   --json-expr EXPR    ...and the Python expression EXPR, with the document as `d`, must be true (repeatable)
#   --env VAR=VALUE     run CMD with this environment variable set (repeatable; VALUE may be empty)
#   --csv-append FILE   remove FILE, run CMD twice (CMD should write CSV to FILE with -o FILE); both runs must pass
#                       the checks; FILE must then hold exactly one header line, every row as many fields as the
#                       header, and twice the data rows it held after the first run; REGEX is also matched against
#                       FILE
#   --file FILE         REGEX (and --also/--not) are matched against FILE's content after the run instead of the
#                       output; FILE is removed first
set -u

also=() nots=() json=0 json_exprs=() envs=() csv_file="" out_file=""
while [ $# -gt 0 ]; do
    case "$1" in
    --also) also+=("$2"); shift 2 ;;
    --not) nots+=("$2"); shift 2 ;;
    --json) json=1; shift ;;
    --json-expr) json=1; json_exprs+=("$2"); shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --csv-append) csv_file="$2"; shift 2 ;;
    --file) out_file="$2"; shift 2 ;;
    --) shift; break ;;
    -*) echo "expect.sh: unknown option '$1'" >&2; exit 1 ;;
    *) break ;;
    esac
done
if [ $# -lt 3 ]; then
    echo "usage: expect.sh [--also RE] [--not RE] [--json] [--json-expr EXPR] [--env V=X] [--csv-append FILE]" \
         "[--file FILE] CODE REGEX CMD [ARGS...]" >&2
    exit 1
fi
want_code="$1" regex="$2"
shift 2
cmd=("$@")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dreduce-expect.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

show() {
    echo "---- command:"
    printf '  %q' ${envs[@]+env "${envs[@]}"} "${cmd[@]}"
    echo
    echo "---- exit code: $code (expected $want_code)"
    echo "---- stdout:"
    cat "$tmp/out"
    echo "---- stderr:"
    cat "$tmp/err"
    if [ -n "$csv_file" ] || [ -n "$out_file" ]; then
        local f="${csv_file:-$out_file}"
        echo "---- $f:"
        cat "$f" 2>/dev/null || echo "(missing)"
    fi
    echo "----"
}

# Run once, check the exit code and the stderr rules. Sets $code.
run_once() {
    if [ ${#envs[@]} -gt 0 ]; then
        timeout 60 env "${envs[@]}" "${cmd[@]}" >"$tmp/out" 2>"$tmp/err" </dev/null
    else
        timeout 60 "${cmd[@]}" >"$tmp/out" 2>"$tmp/err" </dev/null
    fi
    code=$?
    cat "$tmp/out" "$tmp/err" >"$tmp/all"
    if [ "$code" = 124 ]; then
        fail "timed out after 60 s"
    elif [ "$code" != "$want_code" ]; then
        fail "exit code $code, expected $want_code"
    fi
    if [ "$want_code" = 2 ]; then
        local lines
        lines=$(wc -l <"$tmp/err")
        if [ "$lines" -ne 1 ] || [ -n "$(tail -c1 "$tmp/err")" ]; then
            fail "stderr should be exactly one line, it has $lines line(s)"
        fi
        if ! head -n1 "$tmp/err" | grep -q '^dreduce: error: '; then
            fail "stderr should start with 'dreduce: error: '"
        fi
    elif [ "$want_code" = 0 ]; then
        if grep -q 'dreduce: error:' "$tmp/err"; then
            fail "a successful run printed an error line"
        fi
    fi
}

# Match REGEX, --also and --not against a file.
match_all() {
    local f="$1" what="$2" re
    if ! grep -Eq -- "$regex" "$f"; then fail "$what does not match /$regex/"; fi
    for re in ${also[@]+"${also[@]}"}; do
        if ! grep -Eq -- "$re" "$f"; then fail "$what does not match /$re/"; fi
    done
    for re in ${nots[@]+"${nots[@]}"}; do
        if grep -Eq -- "$re" "$f"; then fail "$what matches /$re/ (it should not)"; fi
    done
}

# check_json FILE WHAT
check_json() {
    [ "$json" = 1 ] || return 0
    local e f="$1" what="$2"
    if ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" 2>"$tmp/pyerr"; then
        fail "$what is not valid JSON: $(tail -n1 "$tmp/pyerr")"
        return
    fi
    for e in ${json_exprs[@]+"${json_exprs[@]}"}; do
        if ! EXPR="$e" python3 -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(os.environ["EXPR"]) else 1)' "$f" 2>"$tmp/pyerr"; then
            fail "JSON check failed: $e $(tail -n1 "$tmp/pyerr")"
        fi
    done
}

# CSV file: one header, rows as wide as the header; prints the number of data rows.
csv_rows() {
    python3 - "$1" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
if not rows:
    print("empty file"); sys.exit(1)
header = rows[0]
if header[0] != "schema_version":
    print("first line is not a header: %r" % rows[0][:3]); sys.exit(1)
headers = sum(1 for r in rows if r == header)
if headers != 1:
    print("%d header lines" % headers); sys.exit(1)
bad = [i + 1 for i, r in enumerate(rows) if len(r) != len(header)]
if bad:
    print("lines %s do not have %d fields" % (bad[:5], len(header))); sys.exit(1)
print(len(rows) - 1)
EOF
}

if [ -n "$csv_file" ]; then
    rm -f "$csv_file"
    run_once
    n1=$(csv_rows "$csv_file") || fail "after the first run, $csv_file: $n1"
    if [ "$failures" = 0 ]; then
        run_once
        n2=$(csv_rows "$csv_file") || fail "after the second run, $csv_file: $n2"
        if [ "$failures" = 0 ]; then
            if [ "$n1" -lt 1 ]; then fail "the first run wrote no data rows"; fi
            if [ "$n2" != $((2 * n1)) ]; then
                fail "$csv_file has $n2 data rows after two runs, expected 2 x $n1"
            fi
        fi
    fi
    match_all "$csv_file" "$csv_file"
elif [ -n "$out_file" ]; then
    rm -f "$out_file"
    run_once
    if [ -f "$out_file" ]; then match_all "$out_file" "$out_file"; else fail "$out_file was not written"; fi
    if [ -f "$out_file" ]; then check_json "$out_file" "$out_file"; fi
else
    run_once
    match_all "$tmp/all" "the output"
    check_json "$tmp/out" "stdout"
fi

if [ "$failures" -gt 0 ]; then
    show
    exit 1
fi
echo "ok: exit $code, output matches /$regex/"
exit 0
