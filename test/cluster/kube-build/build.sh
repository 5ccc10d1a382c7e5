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
# The binaries are reused only if this very recipe built them (a changed script or tools.go rebuilds; Go's
# build cache makes that a relink).
recipe="$(cat "$here/build.sh" "$here/tools.go" | sha256sum | cut -c1-16)"
if [[ -x "$bin/kube-apiserver" && -x "$bin/kubectl" && "$(cat "$bin/.recipe" 2>/dev/null)" == "$recipe" ]]; then
  echo "$bin"
  exit 0
fi

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
  # What hack/lib/version.sh stamps: without it both report v0.0.0-master, which kubectl version cannot parse
  # and a chart's kubeVersion constraint rejects.
  minor="${version#v1.}"; minor="${minor%%.*}"
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver >&2
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/kubectl" k8s.io/kubernetes/cmd/kubectl >&2
)
echo "$recipe" > "$bin/.recipe"
echo "$bin"
