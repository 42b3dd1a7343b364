#!/usr/bin/env bash
# Merged stacks: native frames above the Java ones (a JNI library burning CPU in a named C function),
# JVM-internal threads with their C++ frames (demangled), libjvm frames under Java code in the VM,
# cstack=no, the lib prefix, and no launcher frames below the first Java frame. Separate debug info: a
# stripped library named from its debug file (.gnu_debuglink, compressed .symtab), the same library
# without it ([lib+0x...] and one note), libc internals from libc6-dbg (build-id) when installed.
. "$(dirname "$0")/lib.sh"
LIB=$TOP/build/test/native/libjniburn.so

out=$WORK/jni.collapsed
run_java 60 "event=cpu,interval=5ms,file=$out" JniBurner "$LIB" 2 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
jni=$(grep -E 'JniBurner.main;JniBurner.work;JniBurner.nativeBurn;Java_JniBurner_nativeBurn;burn_loop [0-9]+$' "$out" | total /dev/stdin)
main=$(grep 'JniBurner.main' "$out" | total /dev/stdin)
check "JNI: ...;JniBurner.work;JniBurner.nativeBurn;Java_JniBurner_nativeBurn;burn_loop has most samples ($jni of $main)" test $((jni * 100)) -ge $((main * 80)) -a "$main" -gt 100
check "nothing below the first Java frame (no start_thread, JavaMain)" bash -c "! grep -qE '(start_thread|JavaMain|thread_native_entry)[^ ]*;[^ ]*JniBurner' '$out'"

out=$WORK/lib.collapsed
run_java 60 "event=cpu,interval=5ms,lib,file=$out" JniBurner "$LIB" 1 || fail "JVM failed"
check "lib prefixes the library name" grep -qE ';libjniburn.so`burn_loop [0-9]+$' "$out"

out=$WORK/nocstack.collapsed
run_java 60 "event=cpu,interval=5ms,cstack=no,file=$out" JniBurner "$LIB" 1 || fail "JVM failed"
check "cstack=no: Java frames only" bash -c "grep -qE 'JniBurner.nativeBurn [0-9]+$' '$out' && ! grep -q 'burn_loop' '$out'"

# libjniburn_stripped.so: no .symtab, burn_loop not exported; .debug/libjniburn_stripped.so.debug holds
# a zlib-compressed .symtab (see the Makefile)
SLIB=$TOP/build/test/native/libjniburn_stripped.so
out=$WORK/stripped.collapsed
run_java 60 "event=cpu,interval=5ms,file=$out" JniBurner "$SLIB" 2 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
jni=$(grep -E 'JniBurner.work;JniBurner.nativeBurn;Java_JniBurner_nativeBurn;burn_loop [0-9]+$' "$out" | total /dev/stdin)
main=$(grep 'JniBurner.main' "$out" | total /dev/stdin)
check "stripped library: burn_loop named from its debug file ($jni of $main)" test $((jni * 100)) -ge $((main * 80)) -a "$main" -gt 100
check "stripped library with its debug file: no note" bash -c "! grep -q 'note: no symbols' '$WORK/out.txt'"

mkdir -p "$WORK/nodebug"
cp "$SLIB" "$WORK/nodebug/"
out=$WORK/nodebug.collapsed
run_java 60 "event=cpu,interval=5ms,file=$out" JniBurner "$WORK/nodebug/libjniburn_stripped.so" 2 || fail "JVM failed"
raw=$(grep -E 'JniBurner.nativeBurn;Java_JniBurner_nativeBurn;\[libjniburn_stripped.so\+0x[0-9a-f]+\] [0-9]+$' "$out" | total /dev/stdin)
main=$(grep 'JniBurner.main' "$out" | total /dev/stdin)
check "no debug file: [libjniburn_stripped.so+0x...] frames ($raw of $main), no burn_loop" \
	bash -c "[ $((raw * 100)) -ge $((main * 80)) ] && [ $main -gt 100 ] && ! grep -q burn_loop '$out'"
notes=$(grep -c "^flameagent: note: no symbols for $WORK/nodebug/libjniburn_stripped.so (stripped, no debug file found)" "$WORK/out.txt")
check "no debug file: one note naming the file and where its debug file goes ($notes)" \
	bash -c "[ $notes = 1 ] && grep -q 'put its debug file libjniburn_stripped.so.debug in $WORK/nodebug/.debug/' '$WORK/out.txt'"

# a debug file whose CRC does not match the debuglink is not used
mkdir -p "$WORK/nodebug/.debug"
cp "$TOP/build/test/native/.debug/libjniburn_stripped.so.debug" "$WORK/nodebug/.debug/"
printf 'x' >>"$WORK/nodebug/.debug/libjniburn_stripped.so.debug"
out=$WORK/badcrc.collapsed
run_java 60 "event=cpu,interval=5ms,file=$out" JniBurner "$WORK/nodebug/libjniburn_stripped.so" 1 || fail "JVM failed"
check "a debug file with the wrong CRC is ignored" bash -c "! grep -q burn_loop '$out' && grep -q 'note: no symbols' '$WORK/out.txt'"

# a debug file with the right CRC but a corrupt compressed .symtab: refused, said so, profiling goes on
mkdir -p "$WORK/corrupt/.debug"
dbg=$WORK/corrupt/.debug/libjniburn_stripped.so.debug
cp "$TOP/build/test/native/.debug/libjniburn_stripped.so.debug" "$dbg"
off=$(readelf -SW "$dbg" | awk '$2 == ".symtab" { print $5 }')
printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' | dd of="$dbg" bs=1 seek=$((0x$off + 40)) conv=notrunc 2>/dev/null
objcopy --remove-section=.gnu_debuglink --add-gnu-debuglink="$dbg" "$SLIB" "$WORK/corrupt/libjniburn_stripped.so"
out=$WORK/corrupt.collapsed
run_java 60 "event=cpu,interval=5ms,file=$out" JniBurner "$WORK/corrupt/libjniburn_stripped.so" 1 || fail "JVM failed"
check "a corrupt compressed .symtab in the debug file: [lib+0x...] frames and a note" bash -c "! grep -q burn_loop '$out' && \
	grep -q 'Java_JniBurner_nativeBurn;\[libjniburn_stripped.so+0x' '$out' && \
	grep -q 'note: no symbols for $WORK/corrupt/libjniburn_stripped.so: its debug file $dbg is unreadable (truncated or corrupt)' '$WORK/out.txt'"

# libc6-dbg installs libc's debug file by build-id: libc internals (not in .dynsym) get their names
libc=$(awk '$NF ~ /\/libc\.so\.6$/ { print $NF; exit }' /proc/self/maps)
bid=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID/ { print $3 }')
if [ -n "$bid" ] && [ -r "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" ]; then
	out=$WORK/libc.collapsed
	run_java 60 "event=wall,interval=10ms,file=$out" JniBurner "$LIB" 1 || fail "JVM failed"
	check "libc internals named from libc6-dbg (build-id): __futex_abstimed_wait_common" \
		grep -q '__futex_abstimed_wait_common' "$out"
fi

out=$WORK/demo.collapsed
run_java 60 "event=cpu,interval=2ms,threads,file=$out" -Xmx64m Demo 3 || fail "JVM failed"
check "GC threads show their C++ frames, demangled" grep -qE '^\[(GC Thread#[0-9]+|G1 [^]]*) tid=[0-9]+\];.*G1[A-Za-z]*::[A-Za-z_]+\(' "$out"
check "JIT compiler threads show the compiler's frames" grep -qE '^\[C[12] CompilerThre[^]]* tid=[0-9]+\];.*(Compile|C2Compiler|Compilation)[A-Za-z_]*::' "$out"
check "Java code in the VM: libjvm C++ frames above a Java frame" grep -qE '(Demo|java/[a-z/]+/[A-Za-z$]+)\.[a-zA-Z$0-9<>]+;[^ ;]*::' "$out"
finish
