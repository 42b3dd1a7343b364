#!/usr/bin/env bash
# Runs every test/integration/t_*.sh on JDK 17 and, when present, JDK 25 (or the JDKs in TEST_JDKS).
# Each test file gets TEST_TIMEOUT seconds (600). Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")"
jdks=${TEST_JDKS:-}
if [ -z "$jdks" ]; then
	for j in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64; do
		[ -x "$j/bin/java" ] && jdks="$jdks $j"
	done
	[ -z "$jdks" ] && jdks=${JAVA_HOME:-}
fi
passed=0 failed=0
for j in $jdks; do
	for t in ${TESTS:-t_*.sh}; do
		[ -f "$t" ] || continue
		out=$(TEST_JAVA=$j/bin/java JAVA_HOME=$j timeout -k 10 "${TEST_TIMEOUT:-600}" bash "$t" 2>&1); rc=$?
		printf '%s\n' "$out" | grep -v -E '^[0-9]+ passed, [0-9]+ failed$'
		line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
		if [ -z "$line" ]; then echo "FAIL $t on $j: did not finish (exit $rc)"; failed=$((failed + 1)); continue; fi
		p=${line%% passed*}; f=${line#*, }; f=${f%% failed}
		passed=$((passed + p)); failed=$((failed + f))
	done
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
