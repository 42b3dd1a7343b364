#!/usr/bin/env bash
# cstack=dwarf: native frames by DWARF unwind tables. The JNI library built without frame pointers
# (libjniburn_nofp.so, loaded after the agent started) keeps Java_JniBurner_nativeBurn between the Java
# frames and burn_loop, where cstack=fp loses it; the normal library and Demo (GC threads' C++ frames,
# nothing native below the first Java frame) walk as with frame pointers.
. "$(dirname "$0")/lib.sh"
LIB=$TOP/build/test/native/libjniburn.so

NOFP=$TOP/build/test/native/libjniburn_nofp.so
# the premise: neither C function of the FP-less build sets up rbp
if command -v objdump >/dev/null; then
	check "libjniburn_nofp.so: burn_loop and Java_JniBurner_nativeBurn do not use rbp" bash -c \
		"objdump -d --no-show-raw-insn '$NOFP' | awk '/<(burn_loop|Java_JniBurner_nativeBurn)>:/,/^\$/' | grep -q 'ret' && ! objdump -d --no-show-raw-insn '$NOFP' | awk '/<(burn_loop|Java_JniBurner_nativeBurn)>:/,/^\$/' | grep -q '%rbp'"
fi
JNI_RE='JniBurner.main;JniBurner.work;JniBurner.nativeBurn;Java_JniBurner_nativeBurn;burn_loop [0-9]+$'
out=$WORK/dwarf-nofp.collapsed
run_java 60 "event=cpu,interval=5ms,cstack=dwarf,file=$out" JniBurner "$NOFP" 2 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
jni=$(grep -E "$JNI_RE" "$out" | total /dev/stdin)
main=$(grep 'JniBurner.main' "$out" | total /dev/stdin)
check "cstack=dwarf, library without frame pointers: ...;Java_JniBurner_nativeBurn;burn_loop has most samples ($jni of $main)" test $((jni * 100)) -ge $((main * 80)) -a "$main" -gt 100
check "cstack=dwarf: nothing below the first Java frame" bash -c "! grep -qE '(start_thread|JavaMain|thread_native_entry)[^ ]*;[^ ]*JniBurner' '$out'"

out=$WORK/fp-nofp.collapsed
run_java 60 "event=cpu,interval=5ms,cstack=fp,file=$out" JniBurner "$NOFP" 1 || fail "JVM failed"
jni=$(grep -E "$JNI_RE" "$out" | total /dev/stdin)
main=$(grep 'JniBurner.main' "$out" | total /dev/stdin)
echo "info $JDK_TAG $TEST_NAME: cstack=fp, library without frame pointers: $jni of $main samples keep Java_JniBurner_nativeBurn"

out=$WORK/dwarf-fp.collapsed
run_java 60 "event=cpu,interval=5ms,cstack=dwarf,file=$out" JniBurner "$LIB" 2 || fail "JVM failed"
jni=$(grep -E "$JNI_RE" "$out" | total /dev/stdin)
main=$(grep 'JniBurner.main' "$out" | total /dev/stdin)
check "cstack=dwarf, library with frame pointers: the same stack ($jni of $main)" test $((jni * 100)) -ge $((main * 80)) -a "$main" -gt 50

out=$WORK/dwarf-demo.collapsed
run_java 60 "event=cpu,interval=2ms,threads,cstack=dwarf,file=$out" -Xmx64m Demo 3 || fail "JVM failed"
check "cstack=dwarf: GC threads show their C++ frames" grep -qE '^\[(GC Thread#[0-9]+|G1 [^]]*) tid=[0-9]+\];.*G1[A-Za-z]*::[A-Za-z_]+\(' "$out"
check "cstack=dwarf: Java code in the VM: libjvm C++ frames above a Java frame" grep -qE '(Demo|java/[a-z/]+/[A-Za-z$]+)\.[a-zA-Z$0-9<>]+;[^ ;]*::' "$out"
# a walk that ran past the code cache would put a thread's root frames after (leafward of) a Java frame
check "cstack=dwarf: nothing native below the first Java frame" bash -c "! grep -qE '(^|;)(Demo|java/)[^ ;]*\.[^ ;]*;[^ ]*(thread_native_entry|start_thread|JavaMain)[^a-zA-Z_]' '$out'"

out=$WORK/dwarf-summary.txt
run_java 60 "event=cpu,interval=5ms,cstack=dwarf,summary,file=$out" JniBurner "$NOFP" 2 || fail "JVM failed"
line=$(grep -E '^native unwinding: +dwarf, [0-9.]+ MiB tables for [0-9]+ objects; [0-9]+ walks, [0-9]+ stopped early' "$out")
walks=$(sed -E 's/.*; ([0-9]+) walks, ([0-9]+) stopped early.*/\1/' <<<"$line")
early=$(sed -E 's/.*; ([0-9]+) walks, ([0-9]+) stopped early.*/\2/' <<<"$line")
check "cstack=dwarf: the summary reports the tables; under 1% of walks stopped early ($(sed -E "s/^[^:]*: *//" <<<"$line"))" \
	test -n "$line" -a "${walks:-0}" -gt 20 -a $((${early:-0} * 100)) -le "${walks:-0}"
finish
