#!/usr/bin/env bash
# Checks that the agent exports only its JVMTI entry points.
set -u
extra=$(nm -D --defined-only "$1" | awk '{print $3}' | grep -v -E '^(Agent_OnLoad|Agent_OnAttach|Agent_OnUnload|JNI_On\w+|Java_\w+)$' | grep -v '^$')
if [ -n "$extra" ]; then echo "exports: $1 exports more than the agent entry points:"; echo "$extra"; exit 1; fi
echo "exports: ok"
