#!/usr/bin/env bash
# Spark-like executors: three JVMs profiled from their first second with loop=2s into numbered JFR files
# named from an environment variable; one killed with SIGKILL mid-interval keeps its completed intervals;
# all merged into one flame graph (totals add up; one root per executor with --label-by-file); task
# threads folded by stage.
. "$(dirname "$0")/lib.sh"
JFR=$(dirname "$JAVA")/jfr
FC=$TOP/build/bin/flameconv
pids=()
for id in 1 2 3; do
	EXEC_ID=$id "$JAVA" -agentpath:"$AGENT"=event=cpu,interval=10ms,threads,loop=2s,file="$WORK/exec-%{EXEC_ID}-%n{10}.jfr" \
		-cp "$APPS" SparkLike 7 1 > "$WORK/exec-$id.log" 2>&1 &
	pids+=($!)
	_pids+=($!)
done
sleep 5
kill -9 "${pids[2]}"
wait "${pids[0]}" "${pids[1]}" 2>/dev/null
for id in 1 2; do
	n=$(ls "$WORK"/exec-$id-*.jfr 2>/dev/null | wc -l)
	check "executor $id left at least 3 interval files ($n)" test "$n" -ge 3
	ok=1
	for f in "$WORK"/exec-$id-*.jfr; do "$JFR" summary "$f" > /dev/null 2>&1 || ok=0; done
	check "executor $id: every file reads with jfr summary" test $ok -eq 1
done
n=$(ls "$WORK"/exec-3-*.jfr 2>/dev/null | wc -l)
ok=1
for f in "$WORK"/exec-3-*.jfr; do "$JFR" summary "$f" | grep -q jdk.ExecutionSample || ok=0; done
check "the SIGKILLed executor kept its $n completed intervals, all readable" test "$n" -ge 2 -a $ok -eq 1
check "no temporary files left behind" bash -c "! ls '$WORK' | grep -q '\.tmp\.'"

sum=0
for f in "$WORK"/exec-*.jfr; do
	"$FC" "$f" "$WORK/one.collapsed" 2>/dev/null
	sum=$((sum + $(total "$WORK/one.collapsed")))
done
"$FC" "$WORK"/exec-*.jfr "$WORK/job.html" 2> "$WORK/fc.txt"
check "one flame graph for the job: its total equals the sum of the inputs ($sum)" grep -q "Wrote $WORK/job.html: $sum samples" "$WORK/fc.txt"
"$FC" --label-by-file "$WORK"/exec-*.jfr "$WORK/job.collapsed" 2>/dev/null
roots=$(cut -d';' -f1 "$WORK/job.collapsed" | sort -u | tr '\n' ' ')
check "--label-by-file: one root per executor ($roots)" test "$roots" = "[exec-1] [exec-2] [exec-3] "
"$FC" --threads --group-threads=stage "$WORK"/exec-1-*.jfr "$WORK/stages.collapsed" 2>/dev/null
check "task threads fold into one frame per stage" grep -qE '^\[Executor task launch worker \(stage 1\.0\)\];' "$WORK/stages.collapsed"
stage_roots=$(grep -c '' <(cut -d';' -f1 "$WORK/stages.collapsed" | grep 'Executor task launch worker (stage' | sort -u))
check "a few stage roots, not one per task ($stage_roots)" test "$stage_roots" -ge 2 -a "$stage_roots" -le 20
check "the hot task methods are there" bash -c "grep -q 'SparkLike.mapPartition' '$WORK/stages.collapsed' && grep -q 'SparkLike.shuffleWrite' '$WORK/stages.collapsed'"
finish
