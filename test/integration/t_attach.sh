#!/usr/bin/env bash
# flameattach against running JVMs: the hot method, pid-first and pid-last forms, stdout, every event and
# output format, the install layout with Hadoop's exact profiler.sh command line, clear failures, and 50
# attach/start/stop cycles with file descriptors and memory flat.
. "$(dirname "$0")/lib.sh"
FA=$TOP/build/bin/flameattach

start_java - CpuBurner 300 || { fail "JVM did not start"; finish; exit; }
"$FA" "$JPID" -d 2 -f "$WORK/a.collapsed" 2> "$WORK/err.txt"
check "attach -d 2 -f: hot methods take most samples ($(share "$WORK/a.collapsed" 'CpuBurner.burn')%)" test "$(share "$WORK/a.collapsed" 'CpuBurner.burn')" -ge 50
check "start and end sentences" bash -c "grep -q 'Profiling pid $JPID (cpu) for 2s. Ctrl-C stops early.' '$WORK/err.txt' && grep -qE 'Wrote collapsed stacks to $WORK/a.collapsed: [0-9]+ samples' '$WORK/err.txt'"
"$FA" -e cpu -i 5ms -d 1 -o collapsed "$JPID" > "$WORK/stdout.collapsed" 2>/dev/null
check "pid last, result on stdout" grep -q 'CpuBurner.burnHeavy' "$WORK/stdout.collapsed"
for fmt in html svg tree; do
	"$FA" "$JPID" -d 1 -f "$WORK/o.$fmt" -o "$fmt" 2>/dev/null
	check "output $fmt via attach" grep -q 'CpuBurner.burnHeavy' "$WORK/o.$fmt"
done
"$FA" "$JPID" -d 1 -o summary,traces=5,flat=5 > "$WORK/text.txt" 2>/dev/null
check "text output via attach" bash -c "grep -q '^--- Summary ---' '$WORK/text.txt' && grep -q 'Flat profile' '$WORK/text.txt'"
"$FA" status "$JPID" > "$WORK/status.txt" 2>/dev/null
check "status" grep -q '^state: idle' "$WORK/status.txt"
"$FA" "$JPID" -e evnt -d 1 > /dev/null 2> "$WORK/err.txt"; rc=$?
check "the agent's refusal is shown and exits 3 ($rc)" bash -c "[ $rc -eq 3 ] && grep -q 'event=evnt' '$WORK/err.txt'"
"$FA" "$JPID" -d 1 -f /nonexistent-dir/x.html 2> "$WORK/err.txt"; rc=$?
check "unwritable output: exit 4 ($rc)" bash -c "[ $rc -eq 4 ] && grep -q 'cannot write /nonexistent-dir/x.html' '$WORK/err.txt'"
"$FA" start "$JPID" 2>/dev/null
"$FA" start "$JPID" 2> "$WORK/err.txt"; rc=$?
check "a second start while one runs gets a clear answer ($rc)" bash -c "[ $rc -eq 3 ] && grep -q 'already running' '$WORK/err.txt'"
sleep 0.5
"$FA" stop -f "$WORK/stopped.collapsed" "$JPID" 2>/dev/null
check "stop -f writes the running session" grep -q 'CpuBurner' "$WORK/stopped.collapsed"

# every event via attach
"$FA" "$JPID" -e wall -i 20ms -d 1 -f "$WORK/wall.collapsed" 2>/dev/null
check "wall via attach" grep -q 'CpuBurner.main' "$WORK/wall.collapsed"
"$FA" "$JPID" -e itimer -d 1 -f "$WORK/itimer.collapsed" 2>/dev/null
check "itimer via attach" grep -q 'CpuBurner.burn' "$WORK/itimer.collapsed"
kill "$JPID"
start_java - LockApp 60 || fail "LockApp did not start"
"$FA" "$JPID" -e lock -d 2 -f "$WORK/lock.collapsed" 2>/dev/null
check "lock via attach (park wrapper bound late)" grep -q 'ReentrantLock$NonfairSync' "$WORK/lock.collapsed"
kill "$JPID"
start_java - AllocApp 60 || fail "AllocApp did not start"
"$FA" "$JPID" -e alloc -d 1 -f "$WORK/alloc.collapsed" 2>/dev/null
check "alloc via attach" grep -q 'java.lang.String\[\]' "$WORK/alloc.collapsed"
kill "$JPID"

# failures
"$FA" 999999 -d 1 2> "$WORK/err.txt"; rc=$?
check "no such pid: exit 2 and a message ($rc)" bash -c "[ $rc -eq 2 ] && grep -q 'no process with pid 999999' '$WORK/err.txt'"
sleep 30 & sp=$!
"$FA" $sp -d 1 2> "$WORK/err.txt"; rc=$?
kill $sp
check "not a JVM: exit 2 ($rc)" bash -c "[ $rc -eq 2 ] && grep -q 'is not a Java process' '$WORK/err.txt'"
start_java - -XX:+DisableAttachMechanism CpuBurner 60 || fail "JVM did not start"
"$FA" "$JPID" -d 1 2> "$WORK/err.txt"; rc=$?
check "attach disabled: exit 2 with the hint ($rc)" bash -c "[ $rc -eq 2 ] && grep -q 'DisableAttachMechanism' '$WORK/err.txt'"
kill "$JPID"

# another user may not attach (flameattach run as an unprivileged user against a root JVM)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	id fauser >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin fauser
	start_java - CpuBurner 60 || fail "JVM did not start"
	setpriv --reuid=fauser --regid=fauser --clear-groups "$FA" "$JPID" -d 1 > /dev/null 2> "$WORK/err.txt"; rc=$?
	check "another user: exit 2 with a permission message ($rc)" bash -c "[ $rc -eq 2 ] && grep -q 'permission denied: pid $JPID runs as uid 0' '$WORK/err.txt'"
	kill "$JPID"
fi

# the installed layout and Hadoop's ProfileServlet command line
make -s -C "$TOP" install PREFIX="$WORK/inst" > /dev/null 2>&1
start_java - CpuBurner 300 || fail "JVM did not start"
"$WORK/inst/profiler.sh" -e cpu -d 2 -o svg -f "$WORK/hadoop.svg" -i 10ms -j 2048 -b 5000000 -t -s --width 1200 --height 16 --minwidth 0.5 --reverse "$JPID" 2> "$WORK/err.txt"
check "Hadoop's profiler.sh command line writes a real SVG" bash -c "head -c 200 '$WORK/hadoop.svg' | grep -q '<svg' && [ \$(stat -c %s '$WORK/hadoop.svg') -gt 100 ] && grep -q 'burnHeavy' '$WORK/hadoop.svg'"
check "-b is accepted with a note" grep -q 'is ignored' "$WORK/err.txt"
"$WORK/inst/bin/asprof" -d 1 -o collapsed "$JPID" > "$WORK/asprof.collapsed" 2>/dev/null
check "bin/asprof works like flameattach" grep -q 'burnHeavy' "$WORK/asprof.collapsed"
"$WORK/inst/profiler.sh" -e cpu -d 1 -o jfr -f "$WORK/hadoop.jfr" "$JPID" 2>/dev/null
check "Hadoop's -o jfr gives a recording the JDK reads" bash -c "'$(dirname "$JAVA")/jfr' summary '$WORK/hadoop.jfr' | grep -q jdk.ExecutionSample"

# 50 cycles: no crash, descriptors and memory flat
fds() { ls /proc/"$JPID"/fd | wc -l; }
rss() { awk '/^VmRSS/ { print $2 }' /proc/"$JPID"/status; }
"$FA" start -i 1ms "$JPID" 2>/dev/null; "$FA" stop -f "$WORK/cyc.collapsed" "$JPID" 2>/dev/null
f0=$(fds) r0=$(rss)
for i in $(seq 50); do
	"$FA" start -i 1ms "$JPID" 2>/dev/null && "$FA" stop -f "$WORK/cyc.collapsed" "$JPID" 2>/dev/null || { fail "cycle $i failed"; break; }
done
f1=$(fds) r1=$(rss)
check "50 attach/start/stop cycles: JVM alive" kill -0 "$JPID"
check "50 cycles: open descriptors flat ($f0 -> $f1)" test $((f1 - f0)) -le 2
check "50 cycles: resident memory flat ($r0 kB -> $r1 kB, < 20 MB growth)" test $((r1 - r0)) -lt 20480
finish
