#!/usr/bin/env bash
# Installs the Debian packages the build and tests need, if they are missing. Safe to run again.
set -eu
cd "$(dirname "$0")/.."
need=()
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
for p in gcc make libunwind-dev zlib1g-dev binutils procps util-linux chromium libxml2-utils; do have "$p" || need+=("$p"); done
command -v node >/dev/null 2>&1 || need+=(nodejs npm)
if ! command -v javac >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then need+=(openjdk-17-jdk-headless); fi
if [ ${#need[@]} -gt 0 ]; then
	echo "install-deps: installing ${need[*]}"
	if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
# the browser test's one npm dependency (playwright-core drives Debian's chromium; no browser download)
if [ ! -d test/browser/node_modules/playwright-core ] && [ -f test/browser/package.json ]; then
	(cd test/browser && npm ci --no-audit --no-fund --loglevel=error 2>/dev/null || npm install --no-audit --no-fund --loglevel=error)
fi
echo "install-deps: ok"
