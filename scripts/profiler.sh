#!/bin/sh
# async-profiler-compatible entry point (Hadoop, HBase and Ozone /prof servlets run
# $ASYNC_PROFILER_HOME/profiler.sh): hands every argument to flameattach, installed beside it as
# bin/flameattach (make install), or found in a build tree.
here=$(cd "$(dirname "$0")" && pwd)
for f in "$here/bin/flameattach" "$here/../build/bin/flameattach"; do
	[ -x "$f" ] && exec "$f" "$@"
done
echo "profiler.sh: cannot find flameattach next to $here (expected bin/flameattach)" >&2
exit 1
