# Sourced by integration tests (test/integration/t_*.sh). Provides JAVA, AGENT, paths, pass/fail, a
# JVM runner bounded by timeouts, and share helpers for collapsed output. Each test ends with `finish`.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AGENT=$TOP/build/lib/libflameagent.so
APPS=$TOP/build/java
JAVA=${TEST_JAVA:-${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java}
JDK_TAG=${TEST_JDK_TAG:-$("$JAVA" -version 2>&1 | head -n1 | sed -E 's/.*version "([0-9]+).*/jdk\1/')}
TEST_NAME=$(basename "$0" .sh)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fa-$TEST_NAME-XXXXXX")
_passed=0 _failed=0
_pids=()
cleanup() { for p in "${_pids[@]}"; do { kill -9 "$p"; wait "$p"; } 2>/dev/null; done; rm -rf "$WORK"; }
trap cleanup EXIT

pass() { echo "ok   $JDK_TAG $TEST_NAME: $*"; _passed=$((_passed + 1)); }
fail() { echo "FAIL $JDK_TAG $TEST_NAME: $*"; _failed=$((_failed + 1)); }
check() { # check "description" command...
	local d=$1; shift
	if "$@"; then pass "$d"; else fail "$d"; fi
}
finish() { echo "$_passed passed, $_failed failed"; [ $_failed -eq 0 ]; }

# run_java TIMEOUT_S AGENT_OPTS CLASS [ARGS...]: runs a test app under the agent, output in $WORK/out.txt
run_java() {
	local t=$1 opts=$2; shift 2
	timeout -k 5 "$t" "$JAVA" -agentpath:"$AGENT"${opts:+=$opts} -cp "$APPS" "$@" >"$WORK/out.txt" 2>&1
}

# start_java AGENT_OPTS CLASS [ARGS...]: starts a JVM in the background (no agent if opts is "-"),
# waits for its READY line (30 s), sets JPID.
start_java() {
	local opts=$1; shift
	local log=$WORK/jvm-$RANDOM.log
	# background jobs of a non-interactive shell start with SIGQUIT ignored, and a JVM that inherits an
	# ignored SIGQUIT never answers attach requests: restore the default disposition
	if [ "$opts" = - ]; then
		env --default-signal=QUIT,INT "$JAVA" -cp "$APPS" "$@" >"$log" 2>&1 &
	else
		env --default-signal=QUIT,INT "$JAVA" -agentpath:"$AGENT"${opts:+=$opts} -cp "$APPS" "$@" >"$log" 2>&1 &
	fi
	JPID=$!
	JLOG=$log
	_pids+=("$JPID")
	local i
	for i in $(seq 300); do
		grep -q READY "$log" 2>/dev/null && return 0
		kill -0 "$JPID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# share FILE REGEX: percent (integer, rounded) of samples in collapsed FILE whose stack matches REGEX
share() {
	awk -v re="$2" '{ n = $NF; t += n; if ($0 ~ re) m += n } END { if (t == 0) print -1; else printf "%d\n", (100 * m / t) + 0.5 }' "$1"
}
# total FILE: sum of counts in a collapsed file
total() { awk '{ t += $NF } END { printf "%.0f\n", t }' "$1"; }
# within A B TOL: |A-B| <= TOL
within() { local d=$(($1 - $2)); [ ${d#-} -le "$3" ]; }
