#!/usr/bin/env bash
# The HTML and SVG flame graphs in a real browser (Debian chromium driven by playwright-core): hover,
# click zoom, reset, regex search with matched share, icicle and reversed views, tree view, no script
# errors, no script injection through frame names; the SVG is well-formed XML.
. "$(dirname "$0")/lib.sh"
BROWSER_DIR=$TOP/test/browser
if ! command -v node >/dev/null || [ ! -x /usr/bin/chromium ] || [ ! -d "$BROWSER_DIR/node_modules/playwright-core" ]; then
	fail "browser test needs node, /usr/bin/chromium and test/browser/node_modules (run scripts/install-deps.sh)"
	finish; exit
fi
shots=$TOP/build/screenshots/$JDK_TAG
mkdir -p "$shots"

# a fixture with a hostile frame name, written by the unit test's writer
(cd "$TOP" && FA_RENDER_DIR=$WORK build/test/test_out) > /dev/null 2>&1
# Main.inner: 50 of the fixture's 102 samples = 49.02 %
node "$BROWSER_DIR/flamegraph.test.mjs" "$WORK/fixture.html" "$WORK/fixture.svg" Main.inner "$shots" 49.02 > "$WORK/fixture.txt" 2>&1
sed 's/^/    /' "$WORK/fixture.txt"
check "fixture pages pass in chromium" bash -c "! grep -q '^FAIL' '$WORK/fixture.txt' && grep -q '^ok   svg: no script errors' '$WORK/fixture.txt'"

# a real profile of the Demo app
run_java 60 "event=cpu,interval=2ms,file=$WORK/demo.html" Demo 2 || fail "JVM failed: $(tail -n 3 "$WORK/out.txt")"
run_java 60 "event=cpu,interval=2ms,file=$WORK/demo.svg" Demo 2 || fail "JVM failed"
node "$BROWSER_DIR/flamegraph.test.mjs" "$WORK/demo.html" "$WORK/demo.svg" Demo.matrixKernel "$shots" > "$WORK/demo.txt" 2>&1
sed 's/^/    /' "$WORK/demo.txt"
check "Demo profile pages pass in chromium" bash -c "! grep -q '^FAIL' '$WORK/demo.txt' && grep -q '^ok   svg: no script errors' '$WORK/demo.txt'"
if command -v xmllint >/dev/null; then
	check "the SVG is well-formed XML" xmllint --noout "$WORK/demo.svg" "$WORK/fixture.svg"
fi
check "the HTML page is self-contained (no http:// or https:// resources)" bash -c "! grep -qE '(src|href)=\"https?:' '$WORK/demo.html'"
finish
