#!/usr/bin/env bash
# Kernel frames: event=cpu (kernel mode sampled) puts the perf callchain's kernel frames, named from
# /proc/kallsyms with _[k], leaf-most above the native and Java frames of SyscallWriter's write loop;
# the ring buffer keeps one signal per sample; ctimer, itimer, wall and cstack=no have none; attach
# works the same; context-switches get the scheduler path; JFR, flameconv and ann keep _[k] once;
# hidden kernel symbols (a zeroed /proc/kallsyms) give one warning and [kernel]_[k]; rings beyond the
# locked-memory limit give one warning; an unprivileged JVM keeps its Java frames.
. "$(dirname "$0")/lib.sh"

SYSCALL_RE='(entry_SYSCALL[A-Za-z0-9_]*|do_syscall_64|__x64_sys_write|ksys_write|vfs_write)_\[k\]'
# leaf_ok FILE: every kernel frame is leaf-most (no other frame after one) and sits on a user frame
leaf_ok() {
	awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); k = 0
	       for (i = 1; i <= n; i++) {
	         if (f[i] ~ /_\[k\]$/) { if (!k && i == 1) bad++; k = 1 } else if (k) bad++ }
	     } END { exit bad > 0 }' "$1"
}

out=$WORK/cpu.collapsed
run_java 60 "event=cpu,interval=2ms,file=$out" SyscallWriter 3 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
loop=$WORK/loop.collapsed
grep 'SyscallWriter.writeLoop' "$out" > "$loop"
k=$(share "$loop" "$SYSCALL_RE")
check "cpu: most writeLoop samples carry the write system call's kernel frames ($k% of $(total "$loop"))" test "$k" -ge 50
check "cpu: kernel frames are leaf-most, above the user frames" leaf_ok "$out"
check "cpu: the kernel part starts at the syscall entry, right above the libc/Java write" \
	grep -qE 'FileDispatcherImpl.write0;[^;]*;entry_SYSCALL[A-Za-z0-9_]*_\[k\];do_syscall_64_\[k\]' "$out"
check "cpu: kernel frames are named (unnamed [kernel] frames $(share "$out" '\[kernel\]_\[k\]')%)" \
	test "$(share "$out" '\[kernel\]_\[k\]')" -le 1
check "cpu: no warning about kernel symbols as root" bash -c "! grep -q 'kernel symbols are hidden' '$WORK/out.txt'"

# the ring buffer must not cost signals (a ring that fills up or a wakeup per page would): the same
# run without kernel callchains has about as many samples (loose bounds: 2 shared cores are noisy)
out2=$WORK/nocstack.collapsed
run_java 60 "event=cpu,interval=2ms,cstack=no,file=$out2" SyscallWriter 3 || fail "JVM failed"
a=$(total "$loop") b=$(grep 'SyscallWriter.writeLoop' "$out2" | total /dev/stdin)
check "cpu: one signal per sample with the ring ($a writeLoop samples, $b without kernel frames)" \
	test $((a * 100)) -ge $((b * 50)) -a $((a * 100)) -le $((b * 200)) -a "$a" -gt 300
check "cstack=no: no kernel frames" bash -c "! grep -q '_\[k\]' '$out2'"

for ev in ctimer itimer wall; do
	o=$WORK/$ev.collapsed
	iv=5ms; [ $ev = wall ] && iv=10ms
	run_java 60 "event=$ev,interval=$iv,file=$o" SyscallWriter 2 || fail "JVM failed"
	check "$ev: no kernel frames ($(total "$o") samples)" bash -c "[ \$(grep -c SyscallWriter.writeLoop '$o') -gt 0 ] && ! grep -q '_\[k\]' '$o'"
done

# ann: the suffix is part of a kernel frame's name, not doubled
o=$WORK/ann.collapsed
run_java 60 "event=cpu,interval=5ms,ann,file=$o" SyscallWriter 1 || fail "JVM failed"
check "ann: kernel frames end in a single _[k]" bash -c "grep -qE 'SyscallWriter.writeLoop_\[j\];.*do_syscall_64_\[k\]' '$o' && ! grep -q '_\[k\]_\[k\]' '$o'"

# attached at run time (flameattach): the same kernel frames
if start_java - SyscallWriter 30; then
	"$TOP/build/bin/flameattach" "$JPID" -e cpu -i 5ms -d 2 -o collapsed > "$WORK/attach.collapsed" 2> "$WORK/attach.err"
	check "flameattach: kernel frames above the write loop ($(share "$WORK/attach.collapsed" "$SYSCALL_RE")%)" \
		bash -c "grep -qE 'SyscallWriter.writeLoop;.*do_syscall_64_\[k\]' '$WORK/attach.collapsed'"
	kill "$JPID" 2>/dev/null
else
	fail "SyscallWriter did not start"
fi

# context switches are taken in the scheduler: the kernel path up to schedule() above the waiting
# thread's frames (page faults are not: their samples carry the user registers, no kernel chain)
o=$WORK/cs.collapsed
run_java 60 "event=context-switches,interval=1,file=$o" MultiThread 1 || fail "JVM failed"
check "context-switches: the scheduler path above MultiThread.main's wait" \
	grep -qE '^MultiThread\.main;.*;(__)?schedule_\[k\] [0-9]+$' "$o"
check "context-switches: kernel frames are leaf-most, above the user frames" leaf_ok "$o"

# JFR: Kernel frame type with the bare name; flameconv brings _[k] back, HTML and collapsed keep it
jfr=$WORK/k.jfr
run_java 60 "event=cpu,interval=5ms,file=$jfr" SyscallWriter 2 || fail "JVM failed"
JFR_TOOL=$(dirname "$JAVA")/jfr
if [ -x "$JFR_TOOL" ]; then
	check "jfr: the JDK's jfr tool reads kernel frames" bash -c "'$JFR_TOOL' print --events jdk.ExecutionSample '$jfr' | grep -qE '^ +(\.)?(ksys_write|do_syscall_64)\(\)'"
fi
"$TOP/build/bin/flameconv" "$jfr" "$WORK/fromjfr.collapsed" > /dev/null 2>&1
check "flameconv: JFR kernel frames come back as name_[k]" grep -qE 'FileDispatcherImpl.write0;.*do_syscall_64_\[k\]' "$WORK/fromjfr.collapsed"
"$TOP/build/bin/flameconv" "$out" "$WORK/round.collapsed" > /dev/null 2>&1
check "flameconv: collapsed round trip keeps _[k] frames" bash -c "[ \"\$(sort '$out' | md5sum)\" = \"\$(sort '$WORK/round.collapsed' | md5sum)\" ]"
"$TOP/build/bin/flameconv" "$out" "$WORK/k.html" > /dev/null 2>&1
check "flameconv: the HTML flame graph names kernel frames with _[k]" grep -q 'do_syscall_64_\[k\]' "$WORK/k.html"
"$TOP/build/bin/flameconv" "$out" "$WORK/k.svg" > /dev/null 2>&1
check "flameconv: the SVG flame graph names kernel frames with _[k]" grep -q 'do_syscall_64_\[k\]' "$WORK/k.svg"

# hidden kernel symbols (kernel.kptr_restrict, no CAP_SYSLOG): /proc/kallsyms shows zero addresses.
# Simulated by bind-mounting a zeroed copy in a private mount namespace.
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
	sed 's/^[0-9a-f]*/0000000000000000/' /proc/kallsyms > "$WORK/kallsyms.zero"
	o=$WORK/hidden.collapsed
	timeout -k 5 60 unshare -m sh -c "mount --bind '$WORK/kallsyms.zero' /proc/kallsyms && \
		exec '$JAVA' -agentpath:'$AGENT'=event=cpu,interval=2ms,file='$o' -cp '$APPS' SyscallWriter 2" > "$WORK/hidden.txt" 2>&1 ||
		fail "JVM failed: $(tail -n 3 "$WORK/hidden.txt")"
	check "hidden kernel symbols: one warning naming the fix" \
		test "$(grep -c 'warning: kernel symbols are hidden (/proc/kallsyms: only zero addresses).*kernel.kptr_restrict=0' "$WORK/hidden.txt")" -eq 1
	hl=$(grep 'SyscallWriter.writeLoop' "$o" | total /dev/stdin)
	check "hidden kernel symbols: kernel time is one [kernel]_[k] frame above the user frames ($(share "$o" 'write0;[^;]*;\[kernel\]_\[k\] [0-9]+$')%)" \
		bash -c "[ \$(grep -c 'write0;[^;]*;\[kernel\]_\[k\] [0-9]*$' '$o') -ge 1 ] && ! grep -q '\[kernel\]_\[k\];' '$o'"
	check "hidden kernel symbols: Java frames kept ($hl writeLoop samples)" test "$hl" -gt 300
fi

# beyond the locked-memory allowance for rings (no CAP_IPC_LOCK, ulimit -l 0, 300 threads x 8 KiB >
# kernel.perf_event_mlock_kb): one warning, the JVM runs on, threads past it have no kernel frames
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	o=$WORK/mlock.collapsed
	(ulimit -l 0 && timeout -k 5 90 setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock "$JAVA" \
		-agentpath:"$AGENT"=event=cpu,interval=5ms,file="$o" -cp "$APPS" SyscallWriter 2 300) > "$WORK/mlock.txt" 2>&1
	rc=$?
	check "rings beyond the locked-memory limit: one warning naming the limit, the JVM runs on (exit $rc, $(total "$o") samples)" \
		bash -c "[ $rc -eq 0 ] && [ \$(grep -c 'cannot map a perf ring buffer (8192 bytes per thread): Operation not permitted.*ulimit -l' '$WORK/mlock.txt') -eq 1 ] && grep -q 'SyscallWriter.writeLoop' '$o'"
fi

# an unprivileged JVM (perf_event_paranoid 2: user mode only, kallsyms hidden) runs and keeps its Java frames
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	stage=$(mktemp -d /dev/shm/fa-kernel-XXXXXX 2>/dev/null || mktemp -d /var/tmp/fa-kernel-XXXXXX)
	cp -r "$APPS" "$stage/java" && cp "$AGENT" "$stage/" && chmod -R a+rwX "$stage"
	(cd "$stage" && timeout -k 5 60 setpriv --reuid=nobody --regid=nogroup --clear-groups "$JAVA" \
		-agentpath:"$stage/libflameagent.so"=event=cpu,interval=2ms,file="$stage/u.collapsed" \
		-cp "$stage/java" SyscallWriter 2 > "$stage/out.txt" 2>&1)
	rc=$?
	ul=$(grep 'SyscallWriter.writeLoop' "$stage/u.collapsed" 2>/dev/null | total /dev/stdin)
	check "unprivileged JVM: exits normally with its Java frames (exit $rc, $ul writeLoop samples)" test "$rc" -eq 0 -a "$ul" -gt 50
	if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 2 ]; then
		check "unprivileged JVM: the note on user-mode-only sampling, no kernel frames" \
			bash -c "grep -q 'allows user-mode sampling only' '$stage/out.txt' && ! grep -q '_\[k\]' '$stage/u.collapsed'"
	else
		check "unprivileged JVM: kernel frames named, or one warning on hidden symbols" \
			bash -c "! grep -q '\[kernel\]_\[k\]' '$stage/u.collapsed' || grep -q 'kernel symbols are hidden' '$stage/out.txt'"
	fi
	rm -rf "$stage"
fi
# file-system calls: a directory listing loop (open/getdents64) shows the file system's kernel path
out=$WORK/dir.collapsed
run_java 60 "event=cpu,interval=2ms,file=$out" DirLister 2 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
grep 'DirLister.listLoop' "$out" > "$WORK/dirloop" || true
dk=$(share "$WORK/dirloop" 'DirLister.listLoop;.*(getdents64|iterate_dir|readdir)[a-z0-9_]*_\[k\]')
echo "info: directory listing: ${dk}% of listLoop samples in the kernel's readdir path"
check "directory listing: kernel frames (getdents64, iterate_dir, ...) above DirLister.listLoop (${dk}%)" test "$dk" -ge 30
finish
