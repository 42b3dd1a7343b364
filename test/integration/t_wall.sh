#!/usr/bin/env bash
# event=wall: threads that compute, sleep, block on a monitor and read a pipe get equal samples (±15%)
# with the expected frames and states; filter= limits sampling to given threads; 1000 idle threads
# cost the agent well under 1% of a core.
. "$(dirname "$0")/lib.sh"

out=$WORK/wall.collapsed
run_java 60 "event=wall,interval=20ms,threads,file=$out" WallApp 3 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
count() { grep "^\[$1 tid=" "$out" | total /dev/stdin; }
c=$(count wall-compute) s=$(count wall-sleep) b=$(count wall-blocked) p=$(count wall-pipe)
check "equal wall samples (±15%): compute $c, sleep $s, blocked $b, pipe $p" awk -v a="$c" -v b="$s" -v c="$b" -v d="$p" \
	'BEGIN { m = (a + b + c + d) / 4; if (m < 50) exit 1; split(a " " b " " c " " d, v, " "); for (i in v) if (v[i] < 0.85 * m || v[i] > 1.15 * m) exit 1 }'
check "wall-compute runs wallCompute" grep -qE '^\[wall-compute tid=[0-9]+\];\[running\];.*WallApp.wallCompute [0-9]+$' "$out"
check "wall-sleep sleeps in Thread.sleep under wallSleep" grep -qE '^\[wall-sleep tid=[0-9]+\];\[sleeping\];.*WallApp.wallSleep;java/lang/Thread.sleep' "$out"
check "wall-blocked waits in wallBlocked (native monitor frames above it)" grep -qE '^\[wall-blocked tid=[0-9]+\];\[sleeping\];.*WallApp.wallBlocked(;[^ ]+)? [0-9]+$' "$out"
check "wall-pipe waits in FileInputStream.read under wallPipe" grep -qE '^\[wall-pipe tid=[0-9]+\];\[sleeping\];.*WallApp.wallPipe;.*java/io/FileInputStream.read' "$out"
sl=$(grep '^\[wall-sleep tid=' "$out" | grep -F '[sleeping]' | total /dev/stdin)
check "wall-sleep is recorded sleeping ($sl of $s)" test $((sl * 100)) -ge $((s * 90))

# filter=: only the given thread ids
JCMD=$(dirname "$JAVA")/jcmd
start_java - WallApp 20 || fail "JVM did not start"
tid=$(grep -l '^wall-sleep$' /proc/"$JPID"/task/*/comm | head -n 1 | awk -F/ '{print $5}')
timeout 30 "$JCMD" "$JPID" JVMTI.agent_load "$AGENT" "\"start,event=wall,interval=20ms,threads,filter=$tid\"" > /dev/null
sleep 1
timeout 30 "$JCMD" "$JPID" JVMTI.agent_load "$AGENT" "\"stop,file=$WORK/filter.collapsed\"" > /dev/null
check "filter=$tid samples only that thread" awk -v t="tid=$tid]" '{ if (index($0, t) == 0) bad = 1; n++ } END { exit bad || n == 0 }' "$WORK/filter.collapsed"
kill "$JPID"

# 1000 parked threads: the agent's CPU over 3 s (process CPU with the agent minus without)
cpu_window() { # opts -> microseconds of process CPU between 2 s and 5 s after READY
	start_java "$1" WallApp idle 1000 8 || return 1
	sleep 2
	local a b
	a=$(cat /proc/"$JPID"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { print int(s / 1000) }')
	sleep 3
	b=$(cat /proc/"$JPID"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { print int(s / 1000) }')
	kill "$JPID"
	echo $((b - a))
}
with=$(cpu_window "event=wall,file=$WORK/idle.collapsed")
without=$(cpu_window -)
check "1000 idle threads: agent cost $((with - without)) us over 3 s (< 30000 us, 1% of a core)" test $((with - without)) -lt 30000
finish
