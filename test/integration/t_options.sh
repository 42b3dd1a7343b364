#!/usr/bin/env bash
# Bad options stop the JVM at -agentpath time with a message that names them; text outputs work.
. "$(dirname "$0")/lib.sh"

bad() { # bad "options" "expected text in the message"
	if run_java 30 "$1" CpuBurner 0.1; then
		fail "$1: the JVM started"
	elif grep -qF -- "$2" "$WORK/out.txt"; then
		pass "$1: refused with '$2'"
	else
		fail "$1: message lacks '$2': $(head -n 2 "$WORK/out.txt")"
	fi
}
bad "interval=10xs" "interval=10xs"
bad "interval=-5ms" "interval=-5ms"
bad "evnt=cpu" "evnt"
bad "event=cpu,file=/nonexistent-dir/sub/out.collapsed" "/nonexistent-dir/sub"
bad "jstackdepth=0" "jstackdepth=0"
bad "event=wall,wall=10ms" "event=wall and wall= both ask for the wall clock"
bad "event=cpu,interval=1us" "the minimum is 10us"
bad "event=wall,interval=100us" "the minimum is 1ms"
bad "event=bogus" "supported: cpu, ctimer, itimer"
bad "cstack=lbr" "expected fp, dwarf or no"
bad "collapsed,summary,file=/tmp/x.txt" "collapsed and summary: one file holds one output format"

out=$WORK/summary.txt
run_java 60 "event=cpu,interval=5ms,summary,flat=5,traces=3,file=$out" CpuBurner 2 || fail "JVM failed"
check "summary names the event and counts samples" grep -qiE 'samples.*[0-9]+' "$out"
check "flat lists burnHeavy" grep -q 'CpuBurner.burnHeavy' "$out"
check "summary reports the sampler's mean cost per sample" grep -qiE 'cost.*ns|ns.*per sample' "$out"

out=$WORK/ann.collapsed
run_java 60 "ann,file=$out,include=*burnHeavy" CpuBurner 2 || fail "JVM failed"
check "ann marks Java frames _[j]" grep -q 'CpuBurner.burnHeavy_\[j\]' "$out"
check "include= keeps only matching stacks" bash -c "! grep -q 'burnLight' '$out'"
finish
