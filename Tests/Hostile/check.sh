# Sourced by the hostile suite's parts: check NAME EXPECTED_EXIT WORDS -- COMMAND... runs COMMAND (bounded to 60 s,
# standard input empty) and prints `PASS NAME` or `FAIL NAME: why`; WORDS must be in its output ('' for none).
check() {
    local name="$1" expected="$2" words="$3"
    shift 4
    local code=0 output
    output="$(timeout -k 5 60 "$@" 2>&1 </dev/null)" || code=$?
    if [[ "$code" != "$expected" ]]; then
        echo "FAIL $name: exit $code, expected $expected: $(head -c 300 <<<"$output" | tr '\n' ' ')"
    elif [[ -n "$words" && "$output" != *"$words"* ]]; then
        echo "FAIL $name: does not say '$words': $(head -c 300 <<<"$output" | tr '\n' ' ')"
    elif grep -qE 'Fatal error|Current stack trace' <<<"$output"; then
        echo "FAIL $name: a trap: $(head -c 300 <<<"$output" | tr '\n' ' ')"
    else
        echo "PASS $name"
    fi
}
