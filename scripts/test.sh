#!/usr/bin/env bash
# `npm test`: the lint, the type checks and the documentation site's build, then every Vitest
# project (the site is what the docs and browser tests read). The docs' generated inputs (the
# OpenAPI document, the engine catalogue, the --help texts, the recorded exchanges) are written
# once; then the two type checks and the site's build run at once, since none needs another's
# output and tsc keeps one core busy while Docusaurus waits on its bundler. Each step prints its
# time as it ends.
set -euo pipefail
cd "$(dirname "$0")/.."

timed() {
  local name=$1 started
  shift
  started=$(date +%s)
  "$@"
  printf 'npm test: %s took %d s\n' "$name" $(($(date +%s) - started))
}

# Runs `NAME COMMAND` pairs at once; each one's output is shown when it ends, whole, so the logs
# do not interleave. Fails, after all have ended, if any failed.
together() {
  local dir pids=() names=() failed=0 i
  dir=$(mktemp -d)
  while [ $# -gt 0 ]; do
    names+=("$1")
    bash -c "$2" >"$dir/${#names[@]}.log" 2>&1 &
    pids+=($!)
    shift 2
  done
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then status=ok; else status=FAILED; failed=1; fi
    printf '\n---- %s (%s)\n' "${names[$i]}" "$status"
    cat "$dir/$((i + 1)).log"
  done
  rm -rf "$dir"
  return $failed
}

timed lint npm run --silent lint
timed "the docs' generated inputs" npm run --silent generate -w packages/docs
timed "type checks and docs build" together \
  "type check" "npx tsc -p . --noEmit && npx tsc -p packages/docs --noEmit" \
  "docs build" "npm run --silent build:site -w packages/docs"
timed vitest npx vitest run
