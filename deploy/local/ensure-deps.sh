#!/usr/bin/env bash
# Installs the npm dependencies when they are missing or older than package-lock.json, so
# `npm start` and `npm test` work on a fresh clone. Fast (no npm call) when they are current.
set -euo pipefail
cd "$(dirname "$0")/../.."
marker=node_modules/.package-lock.json
if [ ! -f "$marker" ] || [ package-lock.json -nt "$marker" ]; then
  echo "ensure-deps: installing npm dependencies (npm ci)" >&2
  npm ci --no-audit --no-fund
fi
