#!/usr/bin/env bash
# `npm test`'s vitest part (docs/testing.md): the core suite in two runs. Unit files share their
# fork's module graph (--no-isolate: 85 files took 95 s and 72 s of CPU isolated, 34 s and 21 s
# shared, same load; they are pure, so nothing leaks). Integration and cluster files run nodes
# with process-wide state (the drain, metrics) and stay isolated, one fork per file. The last
# line counts both runs (SHARDLINE_TEST_SUMMARY_CARRY, test/support/summaryReporter.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
carry="$(mktemp)"
trap 'rm -f "$carry"' EXIT
export SHARDLINE_TEST_SUMMARY_CARRY="$carry"
npx vitest run --project unit --no-isolate "$@"
npx vitest run --project integration --project cluster "$@"
