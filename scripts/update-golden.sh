#!/usr/bin/env bash
# Regenerates test/golden/ from the writers; review the diff before committing.
set -eu
cd "$(dirname "$0")/.."
make -s build/test/test_out
FA_UPDATE_GOLDEN=1 build/test/test_out
git --no-pager diff --stat -- test/golden || true
