#!/usr/bin/env bash
# make bench: BenchWorkload (2 threads, fixed CPU work) timed without the agent and with event=cpu at
# 10 ms and 1 ms (interleaved); median of RUNS runs each (default 7), printed as overhead ratios, plus the
# agent's mean cost per sample from its summary output; then StubHeavy's recovery accuracy; on JDK 17 and
# Temurin 25 when present. Not part of make test.
set -eu
cd "$(dirname "$0")/.."
RUNS=${RUNS:-7}
ITER=${ITER:-1500000000}
AGENT=$PWD/build/lib/libflameagent.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The JDKs to measure: BENCH_JDKS (space-separated homes), else JAVA_HOME (JDK 17 by default) and
# Temurin 25 when it is installed.
if [ -z "${BENCH_JDKS:-}" ]; then
	BENCH_JDKS=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
	t25=/usr/lib/jvm/temurin-25-jdk-amd64
	[ -x "$t25/bin/java" ] && [ "$(readlink -f "$t25")" != "$(readlink -f "$BENCH_JDKS")" ] && BENCH_JDKS="$BENCH_JDKS $t25"
fi

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
once() { # once LABEL AGENTOPTS: one timed run appended to $tmp/LABEL
	local label=$1 opts=$2
	if [ -z "$opts" ]; then
		"$JAVA" -cp build/java BenchWorkload "$ITER"
	else
		"$JAVA" -agentpath:"$AGENT=$opts,file=$tmp/$label-summary.txt" -cp build/java BenchWorkload "$ITER"
	fi | sed -n 's/^ELAPSED_MS //p' >> "$tmp/$label"
}
# pct FILE REGEX: share of samples (last field) on lines matching REGEX
pct() { awk -v re="$2" '{ n = $NF; t += n; if ($0 ~ re) m += n } END { printf "%.1f", t ? 100 * m / t : 0 }' "$1"; }
# recovery NAME ARGS...: StubHeavy (megamorphic calls, arraycopy, string intrinsics; it measures its own
# CPU time per phase) at 2 ms: how often AsyncGetCallTrace failed, how much was recovered, the error
# frames left and each phase's share against the app's own figure
recovery() {
	local name=$1; shift
	local out=$tmp/stub.collapsed sum=$tmp/stub.txt log=$tmp/stub.out
	"$JAVA" -agentpath:"$AGENT=event=cpu,interval=2ms,file=$out" -cp build/java StubHeavy "$@" > "$log" 2>&1 || true
	if ! grep -q 'StubHeavy.main' "$out" 2>/dev/null; then echo "recovery, $name: no profile ($(tail -n 2 "$log"))"; return; fi
	grep -E '^(\[|[^ ]*StubHeavy\.main)' "$out" > "$tmp/stub.main"   # the main thread and root error frames
	# the failure report from a second run (one file holds one format)
	"$JAVA" -agentpath:"$AGENT=event=cpu,interval=2ms,summary,file=$sum" -cp build/java StubHeavy "$@" > /dev/null 2>&1 || true
	local line="recovery, $name: error frames $(pct "$tmp/stub.main" '^\[')% (target <= 0.5%)" phase truth got
	for phase in megaCalls copyArrays stringOps; do
		truth=$(sed -nE "s/^SHARE .*$phase=([0-9.]+).*/\1/p" "$log")
		got=$(pct "$tmp/stub.main" "StubHeavy.$phase")
		line="$line, $phase $got% (truth ${truth:-?}%)"
	done
	echo "$line"
	sed -nE 's/^(failed or cut walks: .*)/  summary of a second run: \1/p' "$sum" | head -n 1
}

for jdk in $BENCH_JDKS; do
	JAVA=$jdk/bin/java
	echo "bench: $("$JAVA" -version 2>&1 | head -n1) ($jdk), $RUNS runs each, $ITER iterations x 2 threads"
	# the three configurations interleaved, so drift in the machine's load hits them alike
	: > "$tmp/none"; : > "$tmp/cpu10"; : > "$tmp/cpu1"
	for i in $(seq "$RUNS"); do
		once none ""
		once cpu10 "event=cpu,interval=10ms,summary"
		once cpu1 "event=cpu,interval=1ms,summary"
	done
	base=$(median < "$tmp/none") t10=$(median < "$tmp/cpu10") t1=$(median < "$tmp/cpu1")
	cost10=$(grep -iE 'cost' "$tmp/cpu10-summary.txt" | head -n1)
	cost1=$(grep -iE 'cost' "$tmp/cpu1-summary.txt" | head -n1)
	awk -v b="$base" -v a="$t10" -v c="$t1" 'BEGIN {
		printf "no agent:          median %d ms\n", b
		printf "cpu, interval 10ms: median %d ms  overhead ratio %.3f (target <= 1.01)\n", a, a / b
		printf "cpu, interval 1ms:  median %d ms  overhead ratio %.3f (target <= 1.05)\n", c, c / b
	}'
	echo "sampler cost at 10ms: $cost10"
	echo "sampler cost at 1ms:  $cost1"
	# all a sample costs the workload (timer interrupt, signal delivery, handler), from the 1 ms run:
	# the extra wall time of each of the 2 threads over its share of the samples
	n1=$(sed -nE 's/^samples: *([0-9]+)/\1/p' "$tmp/cpu1-summary.txt")
	awk -v b="$base" -v c="$t1" -v n="${n1:-0}" 'BEGIN {
		if (n > 0) printf "wall time per sample at 1ms: %.1f us (the handler is the sampler cost above; the rest is the kernel)\n", (c - b) * 1000 / (n / 2)
	}'
	recovery default 4
	recovery balanced 4 600000 400 30000
	# the sampler's cost on allocation-heavy code with many distinct stacks: the Demo app at 5 ms
	: > "$tmp/demo"
	for i in 1 2 3 4 5; do
		"$JAVA" -agentpath:"$AGENT=event=cpu,interval=5ms,summary,file=$tmp/demo.txt" -cp build/java Demo 4 > /dev/null 2>&1 || true
		sed -nE 's/^sampler cost: *([0-9]+) ns.*/\1/p' "$tmp/demo.txt" >> "$tmp/demo"
	done
	echo "sampler cost on Demo at 5ms, 5 runs: $(sort -n "$tmp/demo" | awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $1 / 1000 }') us (median $(median < "$tmp/demo" | awk '{ printf "%.1f", $1 / 1000 }') us)"
done

# flameconv: a generated 1,000,000-line collapsed file with about 200,000 distinct stacks to HTML
big=$tmp/big.collapsed
awk 'BEGIN { srand(7); for (i = 0; i < 1000000; i++) { k = int(rand() * 200000);
	printf "java/lang/Thread.run;pkg/svc/Service%d.handle;pkg/mod/Module%d.process;pkg/leaf/Leaf%d.compute %d\n",
	k % 40, int(k / 40) % 500, k, 1 + i % 7 } }' > "$big"
distinct=$(cut -d' ' -f1 "$big" | sort -u | wc -l)
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f '%e %M' -o "$tmp/time.txt" build/bin/flameconv "$big" "$tmp/big.html" 2>/dev/null
	read -r secs kb < "$tmp/time.txt"
else
	start=$(date +%s.%N); build/bin/flameconv "$big" "$tmp/big.html" 2>/dev/null; end=$(date +%s.%N)
	secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'); kb="n/a (no /usr/bin/time)"
fi
in_size=$(stat -c %s "$big") out_size=$(stat -c %s "$tmp/big.html")
awk -v s="$secs" -v kb="$kb" -v i="$in_size" -v o="$out_size" -v d="$distinct" 'BEGIN {
	printf "flameconv: 1000000 lines, %d distinct stacks, %.1f MB in -> HTML %.1f MB (%.1f%% of the input, target <= 25%%) in %s s (target <= 2 s), peak %s KB\n",
		d, i / 1e6, o / 1e6, 100 * o / i, s, kb
}'
