#!/usr/bin/env bash
# Merged stacks: native frames above the Java ones (a JNI library burning CPU in a named C function),
# JVM-internal threads with their C++ frames (demangled), libjvm frames under Java code in the VM,
# cstack=no, the lib prefix, and no launcher frames below the first Java frame.
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

out=$WORK/demo.collapsed
run_java 60 "event=cpu,interval=2ms,threads,file=$out" -Xmx64m Demo 3 || fail "JVM failed"
check "GC threads show their C++ frames, demangled" grep -qE '^\[(GC Thread#[0-9]+|G1 [^]]*) tid=[0-9]+\];.*G1[A-Za-z]*::[A-Za-z_]+\(' "$out"
check "JIT compiler threads show the compiler's frames" grep -qE '^\[C[12] CompilerThre[^]]* tid=[0-9]+\];.*(Compile|C2Compiler|Compilation)[A-Za-z_]*::' "$out"
check "Java code in the VM: libjvm C++ frames above a Java frame" grep -qE '(Demo|java/[a-z/]+/[A-Za-z$]+)\.[a-zA-Z$0-9<>]+;[^ ;]*::' "$out"
finish
