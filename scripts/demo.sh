#!/usr/bin/env bash
# make demo: profiles the bundled Demo app with the agent and writes the richest outputs available
# into build/demo/.
set -eu
cd "$(dirname "$0")/.."
JAVA=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
AGENT=$PWD/build/lib/libflameagent.so
mkdir -p build/demo
# every format: the interactive HTML flame graph (open it in a browser; ann: frame kinds _[j] _[i] _[0]
# _[1] _[k]), SVG, JFR (jfr print / JMC),
# collapsed stacks and the text summary
formats="html svg jfr collapsed summary"
for f in $formats; do
	case $f in
	html) opts="file=build/demo/profile.html,threads,ann" ;;
	svg) opts="file=build/demo/profile.svg,ann" ;;
	jfr) opts="file=build/demo/profile.jfr,threads" ;;
	collapsed) opts="file=build/demo/profile.collapsed,threads" ;;
	summary) opts="file=build/demo/summary.txt,summary,flat=15,traces=5" ;;
	esac
	"$JAVA" -agentpath:"$AGENT=start,event=cpu,interval=5ms,$opts" -cp build/java Demo 4 > /dev/null
done
echo "demo: wrote $(ls build/demo | sed 's|^|build/demo/|' | tr '\n' ' ')"
[ -f build/demo/summary.txt ] && sed -n '1,40p' build/demo/summary.txt
