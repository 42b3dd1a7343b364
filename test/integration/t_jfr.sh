#!/usr/bin/env bash
# JFR output read by the JDK's own `jfr` tool: the writer's fixture (every event type, names, lines,
# frame types, concatenated chunks), and the agent's recordings: sample count equal to the collapsed
# output of the same session, wall states, allocation and lock events.
. "$(dirname "$0")/lib.sh"
JFR=$(dirname "$JAVA")/jfr
JCMD=$(dirname "$JAVA")/jcmd

"$TOP/build/test/test_jfr" --write "$WORK/fixture.jfr"
"$JFR" summary "$WORK/fixture.jfr" > "$WORK/summary.txt" 2>&1
check "jfr summary reads the writer's chunk" grep -qE '^ jdk.ExecutionSample +30 ' "$WORK/summary.txt"
"$JFR" print --events jdk.ExecutionSample "$WORK/fixture.jfr" > "$WORK/print.txt" 2>&1
check "jfr print shows methods, classes and line numbers" grep -qF 'java.lang.String.split(String) line: 3000' "$WORK/print.txt"
check "jfr print shows thread names and states" bash -c "grep -q 'sampledThread = \"worker-1\"' '$WORK/print.txt' && grep -q 'STATE_RUNNABLE' '$WORK/print.txt'"
"$JFR" print --json --events jdk.ExecutionSample "$WORK/fixture.jfr" > "$WORK/print.json" 2>&1
check "frame types are recorded (Inlined, C1 compiled, Interpreted)" bash -c "grep -q '\"type\": \"Inlined\"' '$WORK/print.json' && grep -q '\"type\": \"C1 compiled\"' '$WORK/print.json' && grep -q '\"type\": \"Interpreted\"' '$WORK/print.json'"
"$JFR" print --events jdk.ObjectAllocationSample,jdk.JavaMonitorEnter,jdk.ThreadPark "$WORK/fixture.jfr" > "$WORK/other.txt" 2>&1
check "allocation, monitor and park events" bash -c "grep -q 'objectClass = java.lang.String' '$WORK/other.txt' && grep -q 'monitorClass = Main\$Lock' '$WORK/other.txt' && grep -q 'parkedClass = java.util.concurrent.locks.ReentrantLock\$NonfairSync' '$WORK/other.txt'"
cat "$WORK/fixture.jfr" "$WORK/fixture.jfr" "$WORK/fixture.jfr" > "$WORK/cat.jfr"
check "files concatenated with cat stay readable" bash -c "'$JFR' summary '$WORK/cat.jfr' | grep -qE '^ jdk.ExecutionSample +90 '"

# the agent's own recording: same session written as collapsed, then again as JFR
start_java - CpuBurner 60 || fail "JVM did not start"
load() { timeout 30 "$JCMD" "$JPID" JVMTI.agent_load "$AGENT" "\"$1\"" > /dev/null 2>&1; }
load "start,event=cpu,interval=5ms"
sleep 1.5
load "stop,file=$WORK/s.collapsed"
load "stop,file=$WORK/s.jfr"
kill "$JPID"
n=$(total "$WORK/s.collapsed")
j=$("$JFR" summary "$WORK/s.jfr" | awk '$1 == "jdk.ExecutionSample" { print $2 }')
check "agent JFR: $j execution samples = $n in the collapsed output" test "$j" = "$n" -a "$n" -gt 50
"$JFR" print --events jdk.ExecutionSample "$WORK/s.jfr" > "$WORK/s.txt"
check "agent JFR: stacks name CpuBurner.burnHeavy with a line number" grep -qE 'CpuBurner.burnHeavy\(long\) line: [0-9]+' "$WORK/s.txt"

run_java 60 "event=wall,interval=20ms,file=$WORK/w.jfr" WallApp 2 || fail "JVM failed"
"$JFR" print --events jdk.ExecutionSample "$WORK/w.jfr" > "$WORK/w.txt"
check "wall JFR: sleeping threads are recorded with their state" grep -q 'STATE_SLEEPING' "$WORK/w.txt"
run_java 60 "event=alloc,file=$WORK/a.jfr" AllocApp 2 || fail "JVM failed"
check "alloc JFR: ObjectAllocationSample with the allocated class" bash -c "'$JFR' print --events jdk.ObjectAllocationSample '$WORK/a.jfr' | grep -q 'objectClass = java.lang.String\[\]'"
run_java 60 "event=lock,file=$WORK/l.jfr" LockApp 2 || fail "JVM failed"
"$JFR" print --events jdk.JavaMonitorEnter,jdk.ThreadPark "$WORK/l.jfr" > "$WORK/l.txt"
check "lock JFR: JavaMonitorEnter on LockApp\$Monitor and ThreadPark on the ReentrantLock" bash -c "grep -q 'monitorClass = LockApp\$Monitor' '$WORK/l.txt' && grep -q 'parkedClass = java.util.concurrent.locks.ReentrantLock\$NonfairSync' '$WORK/l.txt'"

# flameconv reads JFR: ours, the JDK's own, mixed with collapsed
FC=$TOP/build/bin/flameconv
"$FC" "$WORK/s.jfr" "$WORK/from-jfr.collapsed" 2>/dev/null
check "flameconv reads the agent's JFR with the same total ($(total "$WORK/from-jfr.collapsed") = $n)" test "$(total "$WORK/from-jfr.collapsed")" = "$n"
"$FC" "$WORK/s.jfr" "$WORK/s.collapsed" "$WORK/mixed.collapsed" 2>/dev/null
check "JFR and collapsed inputs merge (total $((2 * n)))" test "$(total "$WORK/mixed.collapsed")" = "$((2 * n))"
"$JAVA" -XX:StartFlightRecording=filename="$WORK/jdk.jfr",settings=profile -cp "$APPS" CpuBurner 2 > /dev/null 2>&1
"$FC" "$WORK/jdk.jfr" "$WORK/jdk.collapsed" 2>/dev/null
check "flameconv reads the JDK's own recording (burnHeavy present)" grep -q 'CpuBurner.main;CpuBurner.burnHeavy' "$WORK/jdk.collapsed"
"$FC" --alloc "$WORK/a.jfr" "$WORK/alloc.collapsed" 2>/dev/null
check "flameconv --alloc: allocated classes as leaves" grep -qE 'AllocApp.allocStrings;java\.lang\.String\[\] [0-9]+$' "$WORK/alloc.collapsed"
head -c 3000 "$WORK/s.jfr" > "$WORK/cut.jfr"
"$FC" "$WORK/cut.jfr" "$WORK/cut.collapsed" 2> "$WORK/err.txt"; rc=$?
check "a truncated JFR: exit 1 with the file and offset named" bash -c "[ $rc -eq 1 ] && grep -q 'cut.jfr: offset 0: truncated JFR chunk' '$WORK/err.txt'"
finish
