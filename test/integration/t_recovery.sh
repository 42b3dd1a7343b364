#!/usr/bin/env bash
# Samples AsyncGetCallTrace cannot walk (megamorphic call stubs, arraycopy and string intrinsics, method
# prologues and epilogues, VM slow paths) are recovered by unwinding the stub or walking HotSpot's frames
# (hotspot.c): each phase's share matches the CPU time the app measures itself, error frames stay under
# 0.5 %, stub frames are named, and the summary reports failures by reason with the share recovered.
. "$(dirname "$0")/lib.sh"

# pct FILE REGEX: share of samples matching, one decimal
pct() { awk -v re="$2" '{ n = $NF; t += n; if ($0 ~ re) m += n } END { printf "%.1f\n", t ? 100 * m / t : 0 }' "$1"; }
# near A B TOL: |A-B| <= TOL, decimals allowed
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

# accuracy NAME ARGS...: each phase's share within 3 points of the CPU time the app measured itself,
# error frames at most 0.5 % of the thread's samples
accuracy() {
	local name=$1; shift
	local out=$WORK/$name.collapsed
	run_java 90 "event=cpu,interval=2ms,file=$out" StubHeavy "$@" || { fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"; return; }
	local main=$WORK/$name.main
	grep -E 'StubHeavy.main|^\[' "$out" > "$main"
	local errs; errs=$(pct "$main" '^\[')
	echo "info: $name: error frames ${errs}% of the main thread's samples; $(sed -n 's/^SHARE //p' "$WORK/out.txt") (truth)"
	check "$name: error frames at most 0.5% of samples (${errs}%; plain AGCT: ~70%)" near "$errs" 0 0.5
	for phase in megaCalls copyArrays stringOps; do
		local truth got
		truth=$(sed -nE "s/^SHARE .*$phase=([0-9.]+).*/\1/p" "$WORK/out.txt")
		got=$(pct "$main" "StubHeavy.$phase")
		check "$name: $phase within 3 points of the truth (${got}% vs ${truth}%)" near "$got" "${truth:-999}" 3
	done
	cp "$out" "$WORK/last.collapsed"
}
accuracy megamorphic 4
out=$WORK/last.collapsed
check "recovered stacks name the dispatch stub (itable/vtable stub)" grep -qE 'StubHeavy.megaCalls;(itable|vtable) stub [0-9]+$' "$out"
check "no [unknown_not_Java] left from allocation slow paths (anchor without a pc)" bash -c "! grep -q '^\[unknown_not_Java\];Runtime1::new_type_array' '$out'"
accuracy balanced 4 600000 400 30000

out=$WORK/stub.txt
run_java 60 "event=cpu,interval=2ms,summary,file=$out" StubHeavy 2 || fail "JVM failed"
check "summary reports the share recovered" grep -qE 'failed or cut walks: [0-9]+ .*recovered [0-9]+ \([0-9.]+% of them\)' "$out"
check "summary lists [unknown_Java] with its recovered count" grep -qE '^  \[unknown_Java\] unknown Java state: [0-9]+ .*recovered [1-9][0-9]*' "$out"
finish
