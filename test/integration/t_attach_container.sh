#!/usr/bin/env bash
# A JVM "in a container": its own pid and mount namespaces, a private /tmp, the agent's build directory
# hidden from it, running as an unprivileged user. flameattach, as root on the "host", attaches with the
# host pid, makes the agent visible inside (a copy in the target's /tmp) and brings the result back to
# the caller's path.
. "$(dirname "$0")/lib.sh"
FA=$TOP/build/bin/flameattach
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || ! command -v setpriv >/dev/null; then
	echo "skip: needs root, unshare and setpriv"
	finish; exit
fi
id fauser >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin fauser
JDK=$(dirname "$(dirname "$JAVA")")
# inside: a fresh tmpfs on /tmp with the test classes (staged outside /tmp, which the checkout may be
# under), the build tree's lib directory hidden when it is still visible
stage=$(mktemp -d /dev/shm/fa-stage-XXXXXX 2>/dev/null || mktemp -d /var/tmp/fa-stage-XXXXXX)
cp "$APPS"/*.class "$stage"/
chmod -R a+rX "$stage"
env --default-signal=QUIT unshare --pid --mount --fork --mount-proc --propagation private sh -c "
	mount -t tmpfs tmpfs /tmp && mkdir /tmp/app && cp '$stage'/*.class /tmp/app/ && chmod -R a+rX /tmp/app &&
	{ [ ! -d '$TOP/build/lib' ] || mount -t tmpfs tmpfs '$TOP/build/lib'; } &&
	exec setpriv --reuid=fauser --regid=fauser --clear-groups '$JAVA' -cp /tmp/app CpuBurner 120" > "$WORK/jvm.log" 2>&1 &
_pids+=($!)
JPID=
for i in $(seq 100); do
	JPID=$(pgrep -u fauser -f 'CpuBurner 120' | head -n 1)
	[ -n "$JPID" ] && grep -q READY "$WORK/jvm.log" && break
	sleep 0.1
done
if [ -z "$JPID" ]; then fail "container JVM did not start: $(tail -n 3 "$WORK/jvm.log")"; finish; exit; fi
_pids+=("$JPID")
nspid=$(awk '/^NStgid/ { print $NF }' /proc/"$JPID"/status)
check "the JVM has its own pid namespace (host pid $JPID, inside $nspid)" test "$nspid" != "$JPID"
check "the agent library is not visible inside the target" test ! -e "/proc/$JPID/root$TOP/build/lib/libflameagent.so"
"$FA" "$JPID" -d 2 -f "$WORK/container.html" 2> "$WORK/err.txt"; rc=$?
check "attach into the container succeeds ($rc): $(tail -n 1 "$WORK/err.txt")" test $rc -eq 0
check "the result lands at the caller's path with the hot method" grep -q 'CpuBurner.burnHeavy' "$WORK/container.html"
check "the agent was copied into the target's /tmp" bash -c "ls /proc/$JPID/root/tmp/ | grep -q '^libflameagent-.*\.so$'"
check "no temporary output left in the target's /tmp" bash -c "! ls /proc/$JPID/root/tmp/ | grep -q '^flameagent-'"
kill -9 "$JPID" 2>/dev/null
rm -rf "$stage"
finish
