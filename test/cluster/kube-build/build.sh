#!/usr/bin/env bash
# Builds kube-apiserver and kubectl from their Go modules (pinned), for the cluster tests.
# The binaries are cached outside the repository, so a second run only checks they are there.
#   KUBE_VERSION  (default v1.30.14; etcd 3.4 from Debian fits kube-apiserver <= 1.30)
#   KUBE_CACHE    (default ${XDG_CACHE_HOME:-$HOME/.cache}/agent-wallet/kube)
# Prints the directory holding the binaries.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="${KUBE_VERSION:-v1.30.14}"
cache="${KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-wallet/kube}/$version"
bin="$cache/bin"
if [[ -x "$bin/kube-apiserver" && -x "$bin/kubectl" ]]; then echo "$bin"; exit 0; fi

work="$cache/src"
mkdir -p "$work" "$bin"
staging="v0.${version#v1.}"
# A wrapper module: k8s.io/kubernetes refers to its staging modules by local path (./staging/src/k8s.io/...),
# which only works inside its own repository; here each is mapped to its published v0.x release.
kmod="$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
{
  echo "module agentwallet.dev/kube-build"
  echo
  echo "go 1.22"
  echo
  echo "require k8s.io/kubernetes $version"
  echo
  grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$kmod" | awk -v v="$staging" '{print "replace " $1 " => " $1 " " v}'
} > "$work/go.mod"
cp "$here/tools.go" "$work/tools.go"
(
  cd "$work"
  export GOFLAGS=-mod=mod
  go mod tidy >&2
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver >&2
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/kubectl" k8s.io/kubernetes/cmd/kubectl >&2
)
echo "$bin"
