#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages the suite runs against when any is missing (asking sudo
# where not root; HEAPKIT_NO_INSTALL=1 installs nothing and lets the tests that need them
# skip), builds heapkit (into ./build unless BUILD_DIR says otherwise) and runs the whole
# test suite; ends with a plain "N passed, N failed, N skipped" line. Extra arguments go to
# `meson test`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${HEAPKIT_NO_INSTALL:-0}" != 1 ]; then
  ./tests/install-packages.sh
fi
build=${BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" --wrap-mode=nodownload ${HEAPKIT_MESON_ARGS:-}
fi
ninja -C "$build"
status=0
meson test -C "$build" --print-errorlogs "$@" || status=$?
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
counts = {"passed": 0, "failed": 0, "skipped": 0}
with open(sys.argv[1]) as log:
    for line in log:
        entry = json.loads(line)
        result = entry["result"]
        # What a test left out and why (a missing program, no root): on the console, not
        # only in meson's log. A skipped test's reason is its last line, whatever its form.
        said = [line for line in (entry.get("stdout") or "").splitlines() if line.strip()]
        for line in said:
            if line.startswith("SKIP"):
                print(f"{entry['name']}: {line}")
        if result == "SKIP" and said and not said[-1].startswith("SKIP"):
            print(f"{entry['name']}: SKIP: {said[-1]}")
        if result in ("OK", "EXPECTEDFAIL"):
            counts["passed"] += 1
        elif result == "SKIP":
            counts["skipped"] += 1
        else:
            counts["failed"] += 1
print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
PY
exit $status
