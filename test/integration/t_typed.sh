#!/usr/bin/env bash
# Typed Java frames (ann): the HotSpot frame walker tells JIT-compiled (_[j]), inlined (_[i]),
# interpreted (_[0]) and C1-compiled (_[1]) frames apart, where AsyncGetCallTrace reports every frame as
# compiled. TypedFrames.hot() inlines mix() under C2 (not with CompileCommand=dontinline); -Xint interprets everything; TieredStopAtLevel=1
# stops at C1. JFR records the same kinds. DebugNonSafepoints is turned on by the agent.
. "$(dirname "$0")/lib.sh"
JFR=$(dirname "$JAVA")/jfr

out=$WORK/c2.collapsed
run_java 60 "event=cpu,interval=2ms,ann,file=$out" TypedFrames 3 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
grep 'TypedFrames.hot_' "$out" > "$WORK/hot" || true
inl=$(share "$WORK/hot" 'TypedFrames.hot_\[j\];TypedFrames.mix_\[i\] [0-9]+$')
jit=$(share "$WORK/hot" 'TypedFrames.hot_\[j\]')
echo "info: C2: hot() compiled in ${jit}% of its samples, mix() inlined in ${inl}%"
check "C2: hot() is _[j] (${jit}% of its samples)" test "$jit" -ge 90
check "C2: mix() inlined into hot() is _[i] (${inl}% of hot's samples)" test "$inl" -ge 20

out=$WORK/noinline.collapsed
run_java 60 "event=cpu,interval=2ms,ann,file=$out" -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,TypedFrames::mix \
	TypedFrames 3 || fail "JVM failed"
grep 'TypedFrames.hot_' "$out" > "$WORK/hot" || true
own=$(share "$WORK/hot" 'TypedFrames.hot_\[j\];TypedFrames.mix_\[j\] [0-9]+$')
check "dontinline: mix() is its own compiled frame, _[j] (${own}% of hot's samples)" test "$own" -ge 20
check "dontinline: mix() is never _[i]" bash -c "! grep -q 'TypedFrames.mix_\[i\]' '$out'"

out=$WORK/int.collapsed
run_java 60 "event=cpu,interval=2ms,ann,file=$out" -Xint TypedFrames 2 || fail "JVM failed"
grep 'TypedFrames.hot_' "$out" > "$WORK/hot" || true
int=$(share "$WORK/hot" 'TypedFrames.main_\[0\];TypedFrames.hot_\[0\]')
check "-Xint: main and hot are interpreted, _[0] (${int}% of hot's samples)" test "$int" -ge 95
check "-Xint: mix interpreted too" grep -qE 'TypedFrames.hot_\[0\];TypedFrames.mix_\[0\] [0-9]+$' "$out"
check "-Xint: no compiled or inlined Java frame" bash -c "! grep -E '^[^ ]*TypedFrames' '$out' | grep -qE '_\[[ji1]\]'"

out=$WORK/c1.collapsed
run_java 60 "event=cpu,interval=2ms,ann,file=$out" -XX:TieredStopAtLevel=1 TypedFrames 3 || fail "JVM failed"
grep 'TypedFrames.hot_' "$out" > "$WORK/hot" || true
c1=$(share "$WORK/hot" 'TypedFrames.hot_\[1\]')
check "TieredStopAtLevel=1: hot() is C1-compiled, _[1] (${c1}% of its samples)" test "$c1" -ge 90

out=$WORK/typed.jfr
run_java 60 "event=cpu,interval=2ms,file=$out" TypedFrames 3 || fail "JVM failed"
"$JFR" print --json --events jdk.ExecutionSample "$out" > "$WORK/print.json" 2>&1
check "JFR: inlined, compiled and interpreted frame types" bash -c "grep -q '\"type\": \"Inlined\"' '$WORK/print.json' && grep -q '\"type\": \"JIT compiled\"' '$WORK/print.json' && grep -q '\"type\": \"Interpreted\"' '$WORK/print.json'"

run_java 60 "event=cpu,file=$WORK/x.collapsed" -XX:+UnlockDiagnosticVMOptions -XX:+PrintFlagsFinal -version || fail "JVM failed"
check "the agent turns DebugNonSafepoints on" grep -qE 'bool DebugNonSafepoints += true' "$WORK/out.txt"
finish
