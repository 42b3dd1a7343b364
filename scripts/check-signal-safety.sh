#!/usr/bin/env bash
# Checks that signal-path objects call nothing outside the signal-path set and an allowlist.
set -u
allow='^(syscall|__errno_location|__stack_chk_fail|AsyncGetCallTrace|_GLOBAL_OFFSET_TABLE_)$'
# Functions of the [SIG] modules that run outside handlers only (set-up, waiting, teardown): no
# signal-path object may call them, even though they are defined in the set.
outside='^(perf_ring_init|perf_ring_register|perf_ring_unregister|calltrace_create|calltrace_destroy|calltrace_clear|calltrace_foreach|sampler_setup|sampler_log_setup|sampler_quiesce)$'
defined=$(for o in "$@"; do nm --defined-only "$o" | awk '{print $3}'; done | sort -u)
bad=0
for o in "$@"; do
	for s in $(nm -u "$o" | awk '{print $2}'); do
		if [[ $s =~ $outside ]]; then
			echo "check: $o calls $s, which runs outside signal handlers only"
			bad=1
		elif ! grep -qxF "$s" <<<"$defined" && ! [[ $s =~ $allow ]]; then
			echo "check: $o calls $s, which is not signal-safe (allowed: the [SIG] modules, syscall, __errno_location)"
			bad=1
		fi
	done
done
[ $bad -eq 0 ] && echo "signal-safety: ok ($# objects)"
exit $bad
