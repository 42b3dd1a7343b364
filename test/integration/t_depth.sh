#!/usr/bin/env bash
# jstackdepth cuts a 1000-deep recursion with an explicit [truncated] frame; N/M keeps the root frames.
. "$(dirname "$0")/lib.sh"

out=$WORK/d100.collapsed
run_java 60 "jstackdepth=100,file=$out" DeepRecursion 2 1000 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
deep=$WORK/deep
grep 'burnAtBottom' "$out" > "$deep"
check "deep samples recorded" test "$(total "$deep")" -gt 50
check "every deep stack has at most 100 Java frames + [truncated]" awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); j = 0; for (i = 1; i <= n; i++) if (f[i] ~ /\.|^\[truncated\]$/ && f[i] !~ /::|\(/) j++; if (j > 101) exit 1 }' "$deep"
check "deep stacks start with [truncated]" awk '$0 !~ /^\[truncated\];/ { exit 1 }' "$deep"

out=$WORK/d50-10.collapsed
run_java 60 "jstackdepth=50/10,file=$out" DeepRecursion 2 1000 || fail "JVM failed"
check "jstackdepth=50/10 keeps main at the root and burnAtBottom at the leaf" grep -qE '^DeepRecursion.main;(DeepRecursion.recurse;){9}\[truncated\];(DeepRecursion.recurse;){39}DeepRecursion.burnAtBottom [0-9]+$' "$out"

out=$WORK/full.collapsed
run_java 60 "file=$out" DeepRecursion 2 1000 || fail "JVM failed"
check "default depth keeps the whole 1003-frame stack" grep -qE '^DeepRecursion.main;(DeepRecursion.recurse;){1001}DeepRecursion.burnAtBottom [0-9]+$' "$out"
finish
