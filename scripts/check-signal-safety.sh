#!/usr/bin/env bash
# Checks that signal-path objects call nothing outside the signal-path set and an allowlist.
set -u
allow='^(syscall|__errno_location|__stack_chk_fail|AsyncGetCallTrace|_GLOBAL_OFFSET_TABLE_)$'
defined=$(for o in "$@"; do nm --defined-only "$o" | awk '{print $3}'; done | sort -u)
bad=0
for o in "$@"; do
	for s in $(nm -u "$o" | awk '{print $2}'); do
		if ! grep -qxF "$s" <<<"$defined" && ! [[ $s =~ $allow ]]; then
			echo "check: $o calls $s, which is not signal-safe (allowed: the [SIG] modules, syscall, __errno_location)"
			bad=1
		fi
	done
done
[ $bad -eq 0 ] && echo "signal-safety: ok ($# objects)"
exit $bad
