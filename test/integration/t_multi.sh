#!/usr/bin/env bash
# Several events at once: event=cpu,alloc,lock,wall=... writes one JFR with execution samples, wall
# samples with their states, allocation samples and lock events; the other outputs show the first event.
. "$(dirname "$0")/lib.sh"
JFR=$(dirname "$JAVA")/jfr

run_java 60 "event=cpu,interval=5ms,alloc=16k,lock=100us,wall=20ms,file=$WORK/all.jfr" LockApp 3 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
"$JFR" summary "$WORK/all.jfr" > "$WORK/summary.txt" 2>&1
for ev in jdk.ExecutionSample jdk.ObjectAllocationSample jdk.JavaMonitorEnter jdk.ThreadPark; do
	check "one JFR holds $ev" grep -qE "^ $ev +[1-9]" "$WORK/summary.txt"
done
"$JFR" print --events jdk.ExecutionSample "$WORK/all.jfr" > "$WORK/exec.txt"
check "wall samples of sleeping threads are in it with their state" grep -q 'STATE_SLEEPING' "$WORK/exec.txt"
check "cpu samples are in it (running)" grep -q 'STATE_RUNNABLE' "$WORK/exec.txt"
"$JFR" print --events jdk.ObjectAllocationSample "$WORK/all.jfr" > "$WORK/alloc.txt"
check "allocation samples name byte[] from allocLoop" bash -c "grep -q 'objectClass = byte\[\]' '$WORK/alloc.txt' && grep -q 'LockApp.allocLoop' '$WORK/alloc.txt'"

run_java 60 "event=cpu,interval=5ms,alloc=16k,lock,file=$WORK/cpu.collapsed" LockApp 2 || fail "JVM failed"
check "collapsed output of a multi-event session shows the primary event (cpu)" grep -q 'LockApp.busy' "$WORK/cpu.collapsed"
check "no allocation or lock leaves in the cpu profile" bash -c "! grep -qE 'byte\[\]|LockApp\\\$Monitor [0-9]+$' '$WORK/cpu.collapsed'"
finish
