#!/usr/bin/env bash
# The sampler under stress: 1 ms cpu sampling plus wall and allocation events while compiled code is
# deoptimised all the time, classes are generated and unloaded, and the GC is busy. The JVM must live and
# end normally, and the profile must be written. STRESS_SECONDS (default 15) sets the length; `make stress`
# runs 300 s.
. "$(dirname "$0")/lib.sh"
secs=${STRESS_SECONDS:-15}
for opts in "event=cpu,interval=1ms,threads" "event=itimer,interval=1ms,alloc=64k,wall=5ms"; do
	out=$WORK/stress.jfr
	if run_java $((secs + 120)) "$opts,file=$out" -Xmx256m DeoptStress "$secs"; then
		check "$opts: the JVM lived $secs s and ended normally" grep -q '^DONE' "$WORK/out.txt"
	else
		fail "$opts: the JVM died (exit $?): $(grep -v '^ALIVE' "$WORK/out.txt" | tail -n 5)"
	fi
	check "$opts: the profile was written" test -s "$out"
done
finish
