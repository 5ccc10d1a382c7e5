#!/usr/bin/env bash
# Installs the Alto ERC-4337 bundler (the version package-lock.json pins) for the tests that run the service
# against an outside bundler. Alto is GPL-3.0 and ~380 MB with its dependency tree (OpenTelemetry, Sentry, its
# own fastify and zod), so it lives in a cache outside the repository, never in the service's node_modules or
# image; it only ever runs as a separate process.
#   ALTO_CACHE  (default ${XDG_CACHE_HOME:-$HOME/.cache}/agent-wallet/alto)
# Install scripts are denied (--ignore-scripts): msgpackr-extract's native build, which Alto does without (msgpackr
# falls back to JavaScript), and protobufjs's version check. Prints the path of the `alto` executable.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
recipe="$(cat "$here/install.sh" "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-16)"
cache="${ALTO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-wallet/alto}/$recipe"
bin="$cache/node_modules/.bin/alto"
if [[ -x "$bin" && -f "$cache/.installed" ]]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$cache"
cp "$here/package.json" "$here/package-lock.json" "$cache/"
start=$(date +%s)
(cd "$cache" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
echo "alto: installed in $(( $(date +%s) - start )) s, $(du -sh "$cache/node_modules" | cut -f1) in $cache" >&2
touch "$cache/.installed"
echo "$bin"
