#!/usr/bin/env bash
# make test: unit tests, then integration tests on every JDK present; ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
total_p=0 total_f=0
add() { # parses the last "N passed, N failed" line of $1
	local line p f
	line=$(printf '%s\n' "$1" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
	if [ -z "$line" ]; then total_f=$((total_f + 1)); return; fi
	p=${line%% passed*}; f=${line#*, }; f=${f%% failed}
	total_p=$((total_p + p)); total_f=$((total_f + f))
}
echo "== unit tests"
out=$(scripts/run-unit-tests.sh "$@" 2>&1); printf '%s\n' "$out" | sed '$d'; add "$out"
echo "== integration tests"
out=$(test/integration/run.sh 2>&1 | tee /dev/stderr); add "$out"
echo "$total_p passed, $total_f failed"
[ $total_f -eq 0 ]
