#!/usr/bin/env bash
# loop= rotates the profile into numbered files named from %{ENV} and %n{MAX}; timeout= ends the
# session; an unset %{VAR} gets a warning and a stable fallback name.
. "$(dirname "$0")/lib.sh"

EXEC_ID=exec-7 run_java 60 "event=cpu,interval=5ms,loop=2s,file=$WORK/%{EXEC_ID}-%n{10}.collapsed" CpuBurner 7 \
	|| fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
n=$(ls "$WORK"/exec-7-*.collapsed 2>/dev/null | wc -l)
check "loop=2s over ~7 s leaves at least 3 files ($n)" test "$n" -ge 3
check "the first interval's file has samples of burnHeavy" grep -q burnHeavy "$WORK/exec-7-0.collapsed"
c0=$(total "$WORK/exec-7-0.collapsed")
check "an interval holds about 2 s of samples ($c0 at 5 ms)" test "$c0" -gt 200 -a "$c0" -lt 600

run_java 60 "event=cpu,interval=5ms,timeout=1s,file=$WORK/t.collapsed" CpuBurner 4 || fail "JVM failed"
c=$(total "$WORK/t.collapsed")
check "timeout=1s ends the session after about 1 s ($c samples at 5 ms)" test "$c" -gt 100 -a "$c" -lt 300

unset FA_SURELY_UNSET
run_java 60 "event=cpu,file=$WORK/x-%{FA_SURELY_UNSET}.collapsed" CpuBurner 0.5 || fail "JVM failed"
check "unset %{VAR}: stable fallback file name" test -s "$WORK/x-FA_SURELY_UNSET-unset.collapsed"
check "unset %{VAR}: a warning names the variable" grep -q 'environment variable FA_SURELY_UNSET is not set' "$WORK/out.txt"
finish
