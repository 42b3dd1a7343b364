#!/usr/bin/env bash
# Runs unit test programs given as arguments; each ends with "N passed, N failed". Prints the sum.
set -u
passed=0 failed=0
for t in "$@"; do
	out=$(timeout 300 "$t" 2>&1); rc=$?
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
	if [ -z "$line" ]; then
		printf '%s\n' "$out"
		echo "FAIL $t: crashed or did not report (exit $rc)"
		failed=$((failed + 1)); continue
	fi
	p=${line%% passed*}; f=${line#*, }; f=${f%% failed}
	if [ "$f" != 0 ] || [ $rc -ne 0 ]; then printf '%s\n' "$out" | grep -v -E '^[0-9]+ passed' ; fi
	echo "unit $(basename "$t"): $line"
	passed=$((passed + p)); failed=$((failed + f))
	[ $rc -ne 0 ] && [ "$f" = 0 ] && failed=$((failed + 1))
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
