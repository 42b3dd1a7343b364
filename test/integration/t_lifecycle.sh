#!/usr/bin/env bash
# Attach-time lifecycle through the JDK's own jcmd (JVMTI.agent_load): start, status, dump, stop with a
# format, stop again (writes the last profile again), resume; a bad option fails and the JVM runs on.
. "$(dirname "$0")/lib.sh"
JCMD=$(dirname "$JAVA")/jcmd

# jcmd reads key=value words as its own named arguments: quote the option string for it
load() { timeout 30 "$JCMD" "$JPID" JVMTI.agent_load "$AGENT" "\"$1\"" > "$WORK/jcmd.txt" 2>&1; }

start_java - CpuBurner 60 || { fail "JVM did not start"; finish; exit; }
load "start,event=cpu,interval=5ms,log=$WORK/agent.log"
check "start returns 0" grep -q 'return code: 0' "$WORK/jcmd.txt"
sleep 1.5
load "status,file=$WORK/status.txt"
check "status says running" grep -q '^state: running' "$WORK/status.txt"
load "dump,file=$WORK/dump.collapsed"
check "dump while running writes a profile" grep -q 'CpuBurner.burnHeavy' "$WORK/dump.collapsed"
load "stop,file=$WORK/stop.collapsed,collapsed"
check "stop writes the profile" grep -q 'CpuBurner.burnHeavy' "$WORK/stop.collapsed"
n1=$(total "$WORK/stop.collapsed")
load "stop,file=$WORK/again.txt,summary"
check "stop after stop writes the last profile again" grep -qE "$n1" "$WORK/again.txt"
load "interval=10xs,log=$WORK/agent.log"
check "a bad option fails the command" bash -c "! grep -q 'return code: 0' '$WORK/jcmd.txt'"
check "the bad option is named in the agent's log" grep -q 'interval=10xs' "$WORK/agent.log"
check "the JVM is alive after a bad option" kill -0 "$JPID"
load "resume,event=cpu,interval=5ms"
sleep 1
load "stop,file=$WORK/resumed.collapsed"
n2=$(total "$WORK/resumed.collapsed")
check "resume adds to the last profile ($n1 -> $n2)" test "$n2" -gt "$n1"
load "start,event=cpu,interval=5ms"
sleep 0.5
load "stop,file=$WORK/fresh.collapsed"
n3=$(total "$WORK/fresh.collapsed")
check "start begins a fresh profile ($n3 < $n2)" test "$n3" -lt "$n2"
load "version,file=$WORK/version.txt"
check "version" grep -q 'flameagent' "$WORK/version.txt"
finish
