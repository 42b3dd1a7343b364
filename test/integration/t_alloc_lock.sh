#!/usr/bin/env bash
# event=alloc: the allocated class is the leaf, weights in bytes follow the app's 3:1 ratio;
# event=lock: contended synchronized, ReentrantLock and Semaphore waits with the lock's class as leaf.
. "$(dirname "$0")/lib.sh"

out=$WORK/alloc.collapsed
run_java 60 "event=alloc,total,file=$out" AllocApp 3 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
check "alloc: String[] allocated in allocStrings is a leaf" grep -qE '^([^ ]*;)?AllocApp.allocStrings;java\.lang\.String\[\] [0-9]+$' "$out"
check "alloc: byte[] allocated in allocBytes is a leaf" grep -qE '^([^ ]*;)?AllocApp.allocBytes;byte\[\] [0-9]+$' "$out"
app=$WORK/alloc.app
grep -E 'AllocApp.alloc(Strings|Bytes);' "$out" > "$app"
s=$(share "$app" 'String\[\]')
check "alloc: String[] has ${s}% of the app's bytes (expected 75 ±5)" within "$s" 75 5

out=$WORK/alloc.txt
run_java 60 "event=alloc,interval=256k,summary,file=$out" AllocApp 1 || fail "JVM failed"
check "alloc: summary speaks bytes" grep -qE 'interval: +262144 bytes' "$out"

out=$WORK/lock.collapsed
run_java 60 "event=lock,total,file=$out" LockApp 3 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
check "lock: synchronized contention ends in the monitor's class" grep -qE 'LockApp.syncContended;LockApp\$Monitor [0-9]+$' "$out"
check "lock: ReentrantLock waits end in its sync class" grep -qE 'LockApp.juclContended;.*Unsafe.park;java\.util\.concurrent\.locks\.ReentrantLock\$NonfairSync [0-9]+$' "$out"
check "lock: Semaphore waits end in its sync class" grep -qE 'LockApp.semContended;.*Unsafe.park;java\.util\.concurrent\.Semaphore\$NonfairSync [0-9]+$' "$out"
# the monitor's wait time against what the two sync threads measured themselves (how it splits between
# them depends on the JVM's fairness: JDK 25 lets one thread re-enter far more often)
w=$(grep 'LockApp.syncContended;LockApp$Monitor' "$out" | total /dev/stdin)
truth=$(sed -n 's/^SYNC_WAIT_NS //p' "$WORK/out.txt")
check "lock: synchronized wait time ${w} ns matches the app's own ${truth:-?} ns (±20%)" \
	awk -v a="$w" -v b="${truth:-0}" 'BEGIN { exit !(b > 300000000 && a > 0.8 * b && a < 1.2 * b) }'

# two sites (synchronized and ReentrantLock) against the wait times the app measured itself
out=$WORK/ratio.collapsed
run_java 60 "event=lock,total,file=$out" LockRatio 3 || fail "JVM failed"
read -r wa wb < <(sed -nE 's/^WAIT a=([0-9]+) b=([0-9]+)/\1 \2/p' "$WORK/out.txt")
truth=$(( 100 * wa / (wa + wb) ))
pa=$(awk '{ if ($0 ~ /LockRatio.waitA/) a += $NF; else if ($0 ~ /LockRatio.waitB/) b += $NF } END { if (a + b == 0) print -1; else printf "%d\n", 100 * a / (a + b) + 0.5 }' "$out")
check "lock: monitor site's share of wait time ${pa}% vs measured ${truth}% (±10)" within "$pa" "$truth" 10
check "lock: both sites present (synchronized A and the ReentrantLock)" bash -c "grep -q 'LockRatio\$A [0-9]*$' '$out' && grep -q 'ReentrantLock\$NonfairSync [0-9]*$' '$out'"

out=$WORK/lock-threshold.collapsed
run_java 60 "event=lock,interval=1s,file=$out" LockApp 1 || fail "JVM failed"
check "lock: waits under the threshold (1s) are not recorded" test "$(total "$out")" -eq 0
finish
