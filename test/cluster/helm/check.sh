#!/usr/bin/env bash
# The chart's static checks, for CI and for anyone changing charts/agent-wallet:
#   1. helm lint --strict: default values, the minimal values, every optional feature on;
#   2. helm template with the default values fails, saying what to set (no half-configured install);
#   3. helm template | kubeconform -strict, against JSON schemas made here from Kubernetes' own OpenAPI
#      document (kubeconform's default is to download them from GitHub, which this network does not reach).
# helm and kubeconform come from tools.sh (built once, cached). Exits non-zero on the first failure.
#   KUBE_VERSION   the Kubernetes version to validate against (default v1.30.14, as test/cluster/kube-build)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
chart="$repo/charts/agent-wallet"
kube_version="${KUBE_VERSION:-v1.30.14}"
bin="$("$here/tools.sh")"
helm="$bin/helm"
kubeconform="$bin/kubeconform"

# The schemas: api/openapi-spec/swagger.json of the k8s.io/kubernetes module (the module the API server of
# the cluster tests is built from, so usually already in Go's module cache), converted once per version and
# converter.
recipe="$(sha256sum "$here/openapiSchemas.ts" | cut -c1-16)"
schemas="${TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-wallet/tools}/kube-schemas/$kube_version-$recipe"
if [[ ! -s "$schemas/deployment-apps-v1.json" ]]; then
  kdir="$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$kube_version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  [[ -f "$kdir/api/openapi-spec/swagger.json" ]] || { echo "no api/openapi-spec/swagger.json in k8s.io/kubernetes@$kube_version" >&2; exit 1; }
  rm -rf "$schemas.tmp"
  node "$repo/bin/run-ts.js" "$here/openapiSchemas.ts" "$kdir/api/openapi-spec/swagger.json" "$schemas.tmp"
  rm -rf "$schemas" && mv "$schemas.tmp" "$schemas"
fi

echo "== helm lint"
"$helm" lint --strict "$chart"
for values in minimal full; do
  "$helm" lint --strict "$chart" -f "$here/values-$values.yaml"
done

echo "== helm template refuses the default values"
if out="$("$helm" template aw "$chart" 2>&1)"; then
  echo "helm template rendered the default values; it must ask for a chain instead" >&2
  exit 1
fi
grep -q 'no chain is enabled' <<<"$out" || { echo "unexpected failure with the default values: $out" >&2; exit 1; }

echo "== kubeconform -strict rejects what it must (the schemas are strict, not permissive)"
bad='{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"replica":2,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":"80"}]}]}}}}'
if rejected="$("$kubeconform" -strict -schema-location "$schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" <<<"$bad" 2>&1)"; then
  echo "kubeconform accepted a Deployment with an unknown field and a string port: the schemas are not strict" >&2
  exit 1
fi
for expected in "additional properties 'replica' not allowed" "containerPort"; do
  grep -q "$expected" <<<"$rejected" || { echo "kubeconform's rejection does not mention $expected: $rejected" >&2; exit 1; }
done

echo "== helm template | kubeconform -strict (Kubernetes $kube_version)"
for values in minimal full; do
  echo "-- values-$values.yaml"
  # ServiceMonitor and PrometheusRule are the Prometheus Operator's kinds: their schemas live in that project,
  # which no registry we reach serves; the server-side dry run (chart.test.ts) does not know them either.
  # Skipped, by name only; chart.test.ts checks the PrometheusRule's content.
  "$helm" template aw "$chart" --namespace agents --include-crds --kube-version "$kube_version" \
    -f "$here/values-$values.yaml" |
    "$kubeconform" -strict -summary -skip ServiceMonitor,PrometheusRule \
      -schema-location "$schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json"
done
