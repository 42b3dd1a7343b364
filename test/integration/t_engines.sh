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
finish
