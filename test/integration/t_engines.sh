#!/usr/bin/env bash
# cpu, ctimer and itimer each report CpuBurner's two hot methods within 5 percentage points of the
# CPU shares the app measured itself; the profile is written whole at JVM exit.
. "$(dirname "$0")/lib.sh"

for ev in cpu ctimer itimer; do
	out=$WORK/$ev.collapsed
	if ! run_java 60 "event=$ev,interval=5ms,file=$out" CpuBurner 4; then
		fail "$ev: JVM failed: $(tail -n 3 "$WORK/out.txt")"; continue
	fi
	[ -s "$out" ] || { fail "$ev: no profile written"; continue; }
	ls "$WORK" | grep -q '\.tmp\.' && fail "$ev: a temporary file was left behind"
	read -r heavy light < <(sed -nE 's/^SHARE burnHeavy=([0-9.]+) burnLight=([0-9.]+)/\1 \2/p' "$WORK/out.txt")
	heavy=${heavy%.*} light=${light%.*}
	main=$WORK/$ev.main
	grep 'CpuBurner.main' "$out" > "$main"
	n=$(total "$main")
	[ "$n" -ge 150 ] || { fail "$ev: only $n samples in CpuBurner.main"; continue; }
	ph=$(share "$main" 'CpuBurner.burnHeavy') pl=$(share "$main" 'CpuBurner.burnLight')
	check "$ev: burnHeavy ${ph}% vs measured ${heavy}% (±5)" within "$ph" "$heavy" 5
	check "$ev: burnLight ${pl}% vs measured ${light}% (±5)" within "$pl" "$light" 5
	check "$ev: frames are named java/class.method, root first" grep -qE '^([^ ]*;)?CpuBurner.main;CpuBurner.burnHeavy [0-9]+$' "$out"
done

# CPU timers below the scheduler tick: one signal stands for several expirations (ctimer: si_overrun;
# itimer: the process's CPU time since the previous signal), so `total` still adds up to the CPU time
# (the same fixed work measured by event=cpu), and a warning says samples come once per tick
for ev in cpu ctimer itimer; do
	run_java 60 "event=$ev,interval=1ms,total,summary,file=$WORK/total-$ev.txt" BenchWorkload 400000000 || fail "$ev: JVM failed"
	eval "t_$ev=\$(sed -nE 's/^total: *([0-9]+) ns/\1/p' '$WORK/total-$ev.txt')"
done
for ev in ctimer itimer; do
	eval "t=\${t_$ev:-0}"
	check "$ev at 1ms: total CPU time $t ns matches event=cpu's ${t_cpu:-?} ns (±25%)" \
		awk -v a="$t" -v b="${t_cpu:-0}" 'BEGIN { exit !(b > 0 && a > 0.75 * b && a < 1.25 * b) }'
done
# the warning is due where the tick is longer than 1 ms, which shows as far fewer samples than event=cpu
n_cpu=$(sed -nE 's/^samples: *([0-9]+)/\1/p' "$WORK/total-cpu.txt") n_it=$(sed -nE 's/^samples: *([0-9]+)/\1/p' "$WORK/total-itimer.txt")
if [ "${n_it:-0}" -lt $((${n_cpu:-0} / 2)) ]; then
	check "itimer at 1ms ($n_it samples, cpu $n_cpu): a warning that CPU timers fire at the kernel tick" \
		grep -q 'event=itimer,interval=1000us: the kernel checks CPU timers at its tick' "$WORK/out.txt"
fi

# perf_event_open refused (seccomp, paranoid): event=cpu falls back to CPU timers and says so
out=$WORK/fallback.collapsed
LD_PRELOAD=$TOP/build/test/native/libnoperf.so run_java 60 "event=cpu,interval=5ms,file=$out" CpuBurner 1 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
check "perf_event_open refused: a warning names the fallback" grep -q 'perf_event_open refused: Permission denied.*falling back to event=ctimer' "$WORK/out.txt"
check "perf_event_open refused: the profile is still there (ctimer)" grep -q 'CpuBurner.burnHeavy' "$out"

# an unprivileged user at perf_event_paranoid 2 samples user mode with perf_events, with a note
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 2 ]; then
	id fauser >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin fauser
	stage=$(mktemp -d /dev/shm/fa-user-XXXXXX 2>/dev/null || mktemp -d /var/tmp/fa-user-XXXXXX)
	cp -r "$APPS" "$stage/java" && cp "$AGENT" "$stage/" && chmod -R a+rwX "$stage"
	(cd "$stage" && setpriv --reuid=fauser --regid=fauser --clear-groups "$JAVA" -agentpath:"$stage/libflameagent.so"=event=cpu,interval=5ms,summary,file="$stage/u.txt" \
		-cp "$stage/java" CpuBurner 1 > "$stage/out.txt" 2>&1)
	check "unprivileged user: perf_events in user mode, with a note on kernel time" bash -c "grep -q 'allows user-mode sampling only' '$stage/out.txt' && grep -q 'perf_events cpu-clock per thread' '$stage/u.txt'"
	rm -rf "$stage"
fi
finish
