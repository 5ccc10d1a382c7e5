#!/usr/bin/env bash
# What the tests need besides npm packages, made present before `npm test` runs (npm's pretest hook):
# - redis-server and etcd from Debian's packages (installed with apt-get when missing and we may), Debian's
#   chromium, the headless browser the faucet page's test drives (test/e2e/faucetPage.test.ts, via playwright-core:
#   no browser download), and tmux, the terminal the CLI's live progress is read from (test/e2e/cliClient.test.ts);
# - kube-apiserver and kubectl built from their Go modules (test/cluster/kube-build/build.sh), and helm and
#   kubeconform likewise (test/cluster/helm/tools.sh); cached in ~/.cache/agent-wallet, so only the first run
#   pays the few minutes of the Go builds;
# - the Alto ERC-4337 bundler from npm at the version test/alto/package-lock.json pins (test/alto/install.sh),
#   install scripts denied, into the same cache: ~25 s and ~380 MB the first time.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v etcd >/dev/null || missing+=(etcd-server)
command -v chromium >/dev/null || missing+=(chromium)
# The CLI's `status --watch` is tested in a real terminal: tmux runs it and the test reads the pane.
command -v tmux >/dev/null || missing+=(tmux)
if ((${#missing[@]})); then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "test-deps: installing ${missing[*]} (Debian packages)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
  elif command -v sudo >/dev/null && command -v apt-get >/dev/null; then
    echo "test-deps: installing ${missing[*]} with sudo apt-get" >&2
    sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "test-deps: the tests need ${missing[*]}; install them (Debian: apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi
# Debian starts a redis-server service on install; the tests run their own on free ports and need none.

if ! command -v go >/dev/null; then
  echo "test-deps: the cluster tests build kube-apiserver from its Go modules and need Go (https://go.dev/dl)" >&2
  exit 1
fi
bin="$(bash test/cluster/kube-build/build.sh)"
# The Alto bundler the outside-bundler tests run (GPL-3.0, ~380 MB): into the cache, never into node_modules.
alto="$(bash test/alto/install.sh)"
tools="$(bash test/cluster/helm/tools.sh)"
echo "test-deps: redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'), etcd $(etcd --version | sed -n 's/etcd Version: //p'), $(chromium --version 2>/dev/null), kube-apiserver in $bin, helm in $tools, alto at $alto" >&2
