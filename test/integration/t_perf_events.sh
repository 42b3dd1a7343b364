#!/usr/bin/env bash
# Perf events by name: page-faults land on the method that touches fresh pages; context-switches work;
# hardware events either work or stop the JVM with a message that names the event and why; list.
. "$(dirname "$0")/lib.sh"

out=$WORK/pf.collapsed
run_java 60 "event=page-faults,interval=1,file=$out" PageToucher 2 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
java=$WORK/pf.java
grep -v '^\[' "$out" > "$java"
check "page-faults: samples recorded ($(total "$out"))" test "$(total "$out")" -gt 1000
check "page-faults: touchPages has most Java-attributed faults ($(share "$java" 'PageToucher.touchPages')%)" \
	test "$(share "$java" 'PageToucher.touchPages')" -ge 60

out=$WORK/cs.txt
run_java 60 "event=context-switches,summary,file=$out" MultiThread 1 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
check "context-switches: the summary names the event and counts events" grep -qE 'event: +context-switches' "$out"

if run_java 30 "event=cycles,file=$WORK/cy.collapsed" CpuBurner 1; then
	check "cycles: this machine has a PMU and the profile has burnHeavy" grep -q burnHeavy "$WORK/cy.collapsed"
else
	check "cycles: refused with the event and the reason" grep -qE 'event=cycles: this machine has no hardware counter for cycles' "$WORK/out.txt"
fi

run_java 30 "list" CpuBurner 0.1
check "list shows page-faults" grep -qE '^  page-faults' "$WORK/out.txt"
check "list says which hardware events this machine lacks or has" grep -qE '^  cycles' "$WORK/out.txt"
finish
