#!/usr/bin/env bash
# Builds helm and kubeconform from their Go modules (pinned), for the chart checks (check.sh).
# The binaries are cached outside the repository, so a second run only checks they are there.
#   HELM_VERSION         (default v3.22.0)
#   KUBECONFORM_VERSION  (default v0.8.0)
#   TOOLS_CACHE          (default ${XDG_CACHE_HOME:-$HOME/.cache}/agent-wallet/tools)
# Prints the directory holding the binaries.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
helm_version="${HELM_VERSION:-v3.22.0}"
kubeconform_version="${KUBECONFORM_VERSION:-v0.8.0}"
cache="${TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-wallet/tools}"
bin="$cache/helm-$helm_version-kubeconform-$kubeconform_version/bin"
# Reused only if this very recipe built them: a changed pin or script builds anew.
recipe="$(sha256sum "$here/tools.sh" | cut -c1-16)"
if [[ -x "$bin/helm" && -x "$bin/kubeconform" && "$(cat "$bin/.recipe" 2>/dev/null)" == "$recipe" ]]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$bin"
# Neither module has replace directives, so `go install module@version` builds exactly the pinned release
# with the dependency versions its own go.mod and go.sum fix. The -X flags stamp what helm's Makefile stamps
# in a release build: its version, and the Kubernetes version of its client-go (v0.N → 1.N), which is what
# `helm template` assumes without --kube-version and what `helm lint` checks deprecated APIs against
# (unstamped, both say 1.20 and a chart's kubeVersion constraint fails).
export CGO_ENABLED=0 GOBIN="$bin" GOFLAGS=-mod=mod
helm_gomod="$(go mod download -json "helm.sh/helm/v3@$helm_version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
k8s_minor="$(awk '$1 == "k8s.io/client-go" { split($2, v, "."); print v[2] }' "$helm_gomod")"
[[ "$k8s_minor" =~ ^[0-9]+$ ]] || { echo "cannot read client-go's version from $helm_gomod" >&2; exit 1; }
helm_ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  helm_ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
done
go install -trimpath -ldflags "$helm_ldflags" "helm.sh/helm/v3/cmd/helm@$helm_version" >&2
go install -trimpath -ldflags "-s -w -X main.version=$kubeconform_version" \
  "github.com/yannh/kubeconform/cmd/kubeconform@$kubeconform_version" >&2
echo "$recipe" > "$bin/.recipe"
echo "$bin"
