#!/usr/bin/env bash
# Runs every lazuli test: formatting and vet checks, the main module's unit,
# engine-conformance, wire and fuzz-seed tests, and the SDK conformance
# module against both engines.
#
#   scripts/test.sh            # all tests
#   LAZULI_TARGETS=all scripts/test.sh   # conformance on all four targets
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...
(cd conformance && go vet ./...)

echo "== main module"
go test -count=1 -timeout 15m ./...

echo "== SDK conformance (targets: ${LAZULI_TARGETS:-default})"
(cd conformance && go test -count=1 -timeout 15m ./...)

echo "== all tests passed"
