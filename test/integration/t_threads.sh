#!/usr/bin/env bash
# threads: every thread is its own root frame named [name tid=N]; a thread that ended early keeps its
# name; a renamed thread shows its last name; JVM-internal threads are sampled too.
. "$(dirname "$0")/lib.sh"

out=$WORK/threads.collapsed
if ! run_java 60 "event=cpu,interval=2ms,threads,file=$out" MultiThread 3; then
	fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
	finish; exit
fi
for t in worker-alpha:alphaWork worker-beta:betaWork early-bird:earlyWork renamed-worker:renamedWork; do
	name=${t%%:*} method=${t##*:}
	check "thread $name is a root frame over $method" grep -qE "^\[$name tid=[0-9]+\];.*MultiThread.$method(;| )" "$out"
done
a=$(grep '^\[worker-alpha tid' "$out" | total /dev/stdin)
b=$(grep '^\[worker-beta tid' "$out" | total /dev/stdin)
check "alpha ($a) and beta ($b) got similar samples (within 35%)" awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 50 && b > 50 && (a > b ? a / b : b / a) < 1.35) }'
e=$(grep '^\[early-bird tid' "$out" | total /dev/stdin)
check "early-bird ($e samples) is seen, far less than alpha" awk -v e="$e" -v a="$a" 'BEGIN { exit !(e > 10 && e < a) }'
# names are re-read every 100 ms: at most the first moments before the rename carry the old name
old=$(grep '^\[rename-me tid' "$out" | total /dev/stdin)
new=$(grep '^\[renamed-worker tid' "$out" | total /dev/stdin)
check "a renamed thread's samples carry its new name ($new) and few the old one ($old)" test "$new" -gt 50 -a $((old * 10)) -le "$new"
check "JVM-internal threads are sampled (compiler or GC or VM threads)" grep -qE '^\[(C[12] CompilerThre|GC Thread|G1 |VM Thread|VM Periodic)' "$out"
finish
