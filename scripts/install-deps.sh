#!/usr/bin/env bash
# Installs the Debian packages the build and tests need, if they are missing. Safe to run again.
set -eu
need=()
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
for p in gcc make libunwind-dev zlib1g-dev binutils procps util-linux; do have "$p" || need+=("$p"); done
if ! command -v javac >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then need+=(openjdk-17-jdk-headless); fi
if [ ${#need[@]} -gt 0 ]; then
	echo "install-deps: installing ${need[*]}"
	if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
echo "install-deps: ok"
