#!/usr/bin/env bash
# flameconv on the agent's own output: collapsed -> html/svg/tree/collapsed/text; merging three
# "executors" keeps the sum of samples; --label-by-file gives each its own root; gzip input; --diff;
# thread-name grouping of Spark-like task threads; bad input and bad paths get clear messages.
. "$(dirname "$0")/lib.sh"
FC=$TOP/build/bin/flameconv

for i in 1 2 3; do
	run_java 60 "event=cpu,interval=5ms,threads,file=$WORK/exec-$i.collapsed" CpuBurner 1 || fail "JVM $i failed"
done
sum=$(( $(total "$WORK/exec-1.collapsed") + $(total "$WORK/exec-2.collapsed") + $(total "$WORK/exec-3.collapsed") ))
"$FC" --threads "$WORK"/exec-?.collapsed "$WORK/merged.collapsed" 2>/dev/null
check "merge: total samples equal the sum of the inputs ($sum)" test "$(total "$WORK/merged.collapsed")" -eq "$sum"
"$FC" --label-by-file "$WORK"/exec-?.collapsed "$WORK/labelled.collapsed" 2>/dev/null
roots=$(cut -d';' -f1 "$WORK/labelled.collapsed" | sort -u | tr '\n' ' ')
check "--label-by-file: one root per input ($roots)" test "$roots" = "[exec-1] [exec-2] [exec-3] "
"$FC" "$WORK"/exec-?.collapsed "$WORK/merged.html" 2>/dev/null
check "html output from three inputs" grep -q 'CpuBurner.burnHeavy' "$WORK/merged.html"
"$FC" --title "Three executors" "$WORK"/exec-1.collapsed "$WORK/one.svg" 2>/dev/null
check "svg output with a title" grep -q '>Three executors</text>' "$WORK/one.svg"
"$FC" -o tree "$WORK"/exec-1.collapsed "$WORK/tree.html" 2>/dev/null
check "tree output" grep -q 'CpuBurner.burnHeavy' "$WORK/tree.html"
"$FC" -o summary "$WORK"/exec-1.collapsed - > "$WORK/summary.txt" 2>/dev/null
check "text output to stdout" grep -qE "^samples: +$(total "$WORK/exec-1.collapsed")$" "$WORK/summary.txt"
gzip -c "$WORK/exec-1.collapsed" > "$WORK/exec-1.collapsed.gz"
"$FC" "$WORK/exec-1.collapsed.gz" "$WORK/from-gz.collapsed" 2>/dev/null
check "gzip input reads the same" test "$(total "$WORK/from-gz.collapsed")" -eq "$(total "$WORK/exec-1.collapsed")"
cat "$WORK/exec-1.collapsed" | "$FC" - "$WORK/stdin.collapsed" 2>/dev/null
check "stdin input" test "$(total "$WORK/stdin.collapsed")" -eq "$(total "$WORK/exec-1.collapsed")"

# differential: base = only burnLight, new = the whole profile
grep burnLight "$WORK/exec-1.collapsed" > "$WORK/base.collapsed"
"$FC" --diff "$WORK/base.collapsed" "$WORK/exec-2.collapsed" "$WORK/diff.collapsed" 2>/dev/null
check "--diff collapsed: two counts per line" awk 'NF < 2 || $(NF-1) !~ /^[0-9]+$/ || $NF !~ /^[0-9]+$/ { exit 1 }' "$WORK/diff.collapsed"
"$FC" --diff "$WORK/base.collapsed" "$WORK/exec-2.collapsed" "$WORK/diff.svg" 2>/dev/null
check "--diff svg: burnHeavy grew (red), burnLight shrank (blue)" bash -c "grep -A0 'burnHeavy (' '$WORK/diff.svg' | grep -q 'fill=\"rgb(255,' && grep 'burnLight (' '$WORK/diff.svg' | grep -qE 'fill=\"rgb\([0-9]+,[0-9]+,255\)'"
"$FC" --diff "$WORK/base.collapsed" "$WORK/exec-2.collapsed" "$WORK/diff.html" 2>/dev/null
check "--diff html" grep -q '"diff":1' "$WORK/diff.html"

# Spark-like thread names fold by stage
printf '%s\n' '[Executor task launch worker for task 1.0 in stage 3.0 (TID 11) tid=5];Task.run 4' \
	'[Executor task launch worker for task 2.0 in stage 3.0 (TID 12) tid=6];Task.run 6' \
	'[Executor task launch worker for task 7.0 in stage 4.0 (TID 17) tid=7];Task.run 1' > "$WORK/spark.collapsed"
"$FC" --group-threads=stage "$WORK/spark.collapsed" "$WORK/staged.collapsed" 2>/dev/null
check "--group-threads=stage folds task threads by stage" grep -qxF '[Executor task launch worker (stage 3.0)];Task.run 10' "$WORK/staged.collapsed"

"$FC" "$WORK/nope.collapsed" "$WORK/x.html" 2> "$WORK/err.txt"; rc=$?
check "missing input: exit 1 and a message naming it" bash -c "[ $rc -eq 1 ] && grep -q 'cannot read $WORK/nope.collapsed' '$WORK/err.txt'"
"$FC" "$WORK/exec-1.collapsed" /nonexistent-dir/x.html 2> "$WORK/err.txt"; rc=$?
check "unwritable output: exit 4 and a message naming it" bash -c "[ $rc -eq 4 ] && grep -q 'cannot write /nonexistent-dir/x.html' '$WORK/err.txt'"
printf 'a;b 5\nbroken line\nc;d x\nanother\n' > "$WORK/mal.collapsed"
"$FC" "$WORK/mal.collapsed" "$WORK/mal.out.collapsed" 2> "$WORK/err.txt"; rc=$?
check "malformed lines are skipped, counted and reported ($rc)" bash -c "[ $rc -eq 0 ] && grep -q 'ignored 3 malformed lines' '$WORK/err.txt' && grep -qx 'a;b 5' '$WORK/mal.out.collapsed'"
: > "$WORK/empty.collapsed"
"$FC" "$WORK/empty.collapsed" "$WORK/empty.html" 2> "$WORK/err.txt"; rc=$?
check "empty input: an error, non-zero exit, no output file ($rc)" bash -c "[ $rc -ne 0 ] && grep -q 'no samples in the input' '$WORK/err.txt' && [ ! -e '$WORK/empty.html' ]"
head -c 2000 /bin/ls > "$WORK/foreign.bin"
"$FC" "$WORK/foreign.bin" "$WORK/foreign.html" 2> "$WORK/err.txt"; rc=$?
check "a foreign binary file: a clear error naming it ($rc)" bash -c "[ $rc -ne 0 ] && grep -q 'foreign.bin: binary data: not a collapsed stack file' '$WORK/err.txt' && [ ! -e '$WORK/foreign.html' ]"
check "nothing half-written is left" bash -c "! ls '$WORK' | grep -q '\.tmp\.'"

# known diff: base a=80 b=20, new a=50 b=50 -> b grew (red), a shrank (blue); two counts per line
printf 'main;a 80\nmain;b 20\n' > "$WORK/kb.collapsed"
printf 'main;a 50\nmain;b 50\n' > "$WORK/kn.collapsed"
"$FC" --diff "$WORK/kb.collapsed" "$WORK/kn.collapsed" "$WORK/kd.collapsed" 2>/dev/null
check "known diff: two-count lines" bash -c "grep -qx 'main;a 80 50' '$WORK/kd.collapsed' && grep -qx 'main;b 20 50' '$WORK/kd.collapsed'"
"$FC" --diff "$WORK/kb.collapsed" "$WORK/kn.collapsed" "$WORK/kd.svg" 2>/dev/null
check "known diff: b (+30 points of self share) full red, a (-30) full blue" bash -c "grep '<title>b (' '$WORK/kd.svg' | grep -q 'fill=\"rgb(255,0,0)\"' && grep '<title>a (' '$WORK/kd.svg' | grep -q 'fill=\"rgb(0,0,255)\"'"
finish
