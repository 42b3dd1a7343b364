#!/usr/bin/env bash
# make bench: BenchWorkload (2 threads, fixed CPU work) timed without the agent and with event=cpu at
# 10 ms and 1 ms; median of RUNS runs each (default 7), printed as overhead ratios, plus the agent's
# mean cost per sample from its summary output. Not part of make test.
set -eu
cd "$(dirname "$0")/.."
JAVA=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
RUNS=${RUNS:-7}
ITER=${ITER:-1500000000}
AGENT=$PWD/build/lib/libflameagent.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
run() { # run LABEL AGENTOPTS
	local label=$1 opts=$2 i
	: > "$tmp/$label"
	for i in $(seq "$RUNS"); do
		if [ -z "$opts" ]; then
			"$JAVA" -cp build/java BenchWorkload "$ITER"
		else
			"$JAVA" -agentpath:"$AGENT=$opts,file=$tmp/$label-summary.txt" -cp build/java BenchWorkload "$ITER"
		fi | sed -n 's/^ELAPSED_MS //p' >> "$tmp/$label"
	done
	median < "$tmp/$label"
}
echo "bench: $("$JAVA" -version 2>&1 | head -n1), $RUNS runs each, $ITER iterations x 2 threads"
base=$(run none "")
t10=$(run cpu10 "event=cpu,interval=10ms,summary")
t1=$(run cpu1 "event=cpu,interval=1ms,summary")
cost10=$(grep -iE 'cost' "$tmp/cpu10-summary.txt" | head -n1)
cost1=$(grep -iE 'cost' "$tmp/cpu1-summary.txt" | head -n1)
awk -v b="$base" -v a="$t10" -v c="$t1" 'BEGIN {
	printf "no agent:          median %d ms\n", b
	printf "cpu, interval 10ms: median %d ms  overhead ratio %.3f (target <= 1.01)\n", a, a / b
	printf "cpu, interval 1ms:  median %d ms  overhead ratio %.3f (target <= 1.05)\n", c, c / b
}'
echo "sampler cost at 10ms: $cost10"
echo "sampler cost at 1ms:  $cost1"

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
