#!/usr/bin/env bash
# Samples AsyncGetCallTrace cannot walk (megamorphic call stubs, arraycopy stubs) are recovered by
# unwinding the stub or walking HotSpot's frames (hotspot.c): the summary reports failures by reason with the share recovered, stub frames are
# named, and the calling method's share moves toward the truth the app measures itself.
. "$(dirname "$0")/lib.sh"

out=$WORK/stub.collapsed
run_java 60 "event=cpu,interval=2ms,file=$out" StubHeavy 4 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
truth=$(sed -nE 's/^SHARE megaCalls=([0-9]+).*/\1/p' "$WORK/out.txt")
main=$WORK/main
grep -E 'StubHeavy.main|^\[' "$out" > "$main"
got=$(share "$main" 'StubHeavy.megaCalls')
errs=$(share "$out" '^\[unknown_Java\]')
echo "info: megaCalls ${got}% (truth ${truth}%), [unknown_Java] ${errs}% of samples"
check "recovered stacks name the dispatch stub (itable/vtable stub)" grep -qE 'StubHeavy.megaCalls;(itable|vtable) stub [0-9]+$' "$out"
check "megaCalls within 6 points of the truth (${got}% vs ${truth}%; plain AGCT: ~15%)" within "$got" "$truth" 6
check "[unknown_Java] under 5% of samples (${errs}%; plain AGCT: ~70%)" test "$errs" -lt 5
check "no [unknown_not_Java] left from allocation slow paths (anchor without a pc)" bash -c "! grep -q '^\[unknown_not_Java\];Runtime1::new_type_array' '$out'"

out=$WORK/stub.txt
run_java 60 "event=cpu,interval=2ms,summary,file=$out" StubHeavy 2 || fail "JVM failed"
check "summary reports the share recovered" grep -qE 'failed or cut walks: [0-9]+ .*recovered [0-9]+ \([0-9.]+% of them\)' "$out"
check "summary lists [unknown_Java] with its recovered count" grep -qE '^  \[unknown_Java\] unknown Java state: [0-9]+ .*recovered [1-9][0-9]*' "$out"
finish
