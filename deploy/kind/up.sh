#!/usr/bin/env bash
# Runs agent-wallet on a local kind cluster, for a machine WITH a Docker engine:
#
#   export BASE_PAYMASTER_SIGNER_KEY=0x… BASE_EXECUTOR_KEYS=0x…,0x…
#   deploy/kind/up.sh -f my-values.yaml
#
# my-values.yaml enables your chains and gives their testnet RPC URL and contract addresses (see
# values-kind.yaml). For each enabled chain the keys come from <CHAIN>_PAYMASTER_SIGNER_KEY and
# <CHAIN>_EXECUTOR_KEYS (comma-separated), unless its Secret already exists in the cluster; the service
# secret from AGENT_WALLET_SERVICE_SECRET, or a new random one on the first run. Nothing is created until
# every prerequisite, value and key is there; the script prints what is missing.
#
# Steps: check → kind create cluster (deploy/kind/cluster.yaml; reused if it exists) → docker build
# (deploy/Dockerfile) → kind load docker-image → Secrets → helm upgrade --install (the chart's CRDs come
# with the first install) → wait for the rollout. Re-run it after a code change: a new image rolls the pods.
#   KIND_CLUSTER      cluster name (default agent-wallet; the kubectl context is kind-<name>)
#   KIND_NODE_IMAGE   node image for a new cluster (default: your kind's; Kubernetes >= 1.27 is needed)
#   NAMESPACE         default agent-wallet
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
chart="$repo/charts/agent-wallet"
cluster="${KIND_CLUSTER:-agent-wallet}"
context="kind-$cluster"
namespace="${NAMESPACE:-agent-wallet}"
release=agent-wallet

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}

values=(-f "$here/values-kind.yaml")
while (($# > 0)); do
  case "$1" in
    -f | --values)
      [[ $# -ge 2 && -f "$2" ]] || { echo "up.sh: $1 needs a values file that exists" >&2; exit 2; }
      values+=(-f "$2")
      shift 2
      ;;
    -h | --help) usage; exit 0 ;;
    *) echo "up.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done

problems=()

# --- Tools.
need() { command -v "$1" >/dev/null 2>&1 || problems+=("$1 is not installed: $2"); }
need docker "https://docs.docker.com/engine/install/"
need kind "https://kind.sigs.k8s.io/docs/user/quick-start/#installation (or: go install sigs.k8s.io/kind@latest)"
need kubectl "https://kubernetes.io/docs/tasks/tools/"
need helm "https://helm.sh/docs/intro/install/ (or test/cluster/helm/tools.sh, which builds it from its Go module)"
if ((${#problems[@]} > 0)); then
  printf 'up.sh cannot start:\n' >&2
  printf '  - %s\n' "${problems[@]}" >&2
  exit 1
fi
docker info >/dev/null 2>&1 || { echo "up.sh: docker is installed, but no Docker engine answers (docker info failed)" >&2; exit 1; }

# --- Values: the chart itself says what an enabled chain lacks.
if ! config="$(helm template "$release" "$chart" --namespace "$namespace" "${values[@]}" --show-only templates/configmap.yaml 2>&1)"; then
  echo "up.sh: the chart refuses these values:" >&2
  printf '%s\n' "$config" >&2
  exit 1
fi
mapfile -t chains < <(sed -n 's/^ *- name: \(ethereum\|base\|arbitrum\)$/\1/p' <<<"$config")
((${#chains[@]} > 0)) || { echo "up.sh: no chain is enabled in the rendered config" >&2; exit 1; }

# --- Keys: from the environment, unless the cluster already has the Secret.
cluster_exists=false
kind get clusters 2>/dev/null | grep -qx "$cluster" && cluster_exists=true
secret_exists() {
  [[ "$cluster_exists" == true ]] && kubectl --context "$context" -n "$namespace" get secret "$1" >/dev/null 2>&1
}
# "<secret> <key>" × 3: where the chain's worker Deployment takes its paymaster signer key, its executor keys
# and the service secret from, read off the rendered chart, so a values file that renames them is followed.
worker_secret_refs() {
  helm template "$release" "$chart" --namespace "$namespace" "${values[@]}" --show-only templates/chain-worker.yaml |
    awk -v deploy="$release-worker-$1" '
      /^---/ { inside = 0 }
      /^kind:/ { kind = $2 }
      /^  name: / && kind == "Deployment" && $2 == deploy { inside = 1 }
      inside && $1 == "-" && $2 == "name:" { env = $3; next }
      inside && env != "" && $1 == "name:" { secret[env] = $2; next }
      inside && env != "" && $1 == "key:" { key[env] = $2; env = ""; next }
      END {
        s = "AGENT_WALLET_PAYMASTER_SIGNER_KEY"; e = "AGENT_WALLET_EXECUTOR_KEYS"; v = "AGENT_WALLET_SERVICE_SECRET"
        print secret[s], key[s], secret[e], key[e], secret[v], key[v]
      }'
}
key_re='^0x[0-9a-fA-F]{64}$'
declare -A secret_files=()
workdir="$(mktemp -d)"
trap 'rm -rf "$workdir"' EXIT
chmod 700 "$workdir"

for chain in "${chains[@]}"; do
  upper="${chain^^}"
  read -r secret signer_key executors_secret executors_key service_secret_name service_secret_key < <(worker_secret_refs "$chain")
  if [[ -z "$secret" || "$executors_secret" != "$secret" ]]; then
    # The chart allows one Secret per chain holding both keys; up.sh creates exactly that.
    problems+=("$chain: up.sh expects both keys in one Secret (chains.$chain.keys.existingSecret)")
    continue
  fi
  if secret_exists "$secret"; then
    echo "up.sh: $chain: Secret $secret exists, kept"
    continue
  fi
  signer_var="${upper}_PAYMASTER_SIGNER_KEY"
  executors_var="${upper}_EXECUTOR_KEYS"
  signer="${!signer_var:-}"
  executors="${!executors_var:-}"
  if [[ ! "$signer" =~ $key_re ]]; then
    problems+=("$signer_var: the $chain paymaster's verifyingSigner private key (0x + 64 hex)")
  fi
  if [[ -z "$executors" ]]; then
    problems+=("$executors_var: comma-separated private keys of funded $chain executor accounts (0x + 64 hex each)")
  else
    IFS=',' read -ra keys <<<"$executors"
    for k in "${keys[@]}"; do
      k="${k// /}"
      [[ "$k" =~ $key_re ]] || { problems+=("$executors_var: '${k:0:6}…' is not 0x + 64 hex"); break; }
    done
  fi
  mkdir -p "$workdir/$secret"
  if [[ -e "$workdir/$secret/$signer_key" || -e "$workdir/$secret/$executors_key" ]]; then
    problems+=("$chain: Secret $secret already holds another chain's $signer_key or $executors_key: give each chain its own key names")
  fi
  printf '%s' "$signer" >"$workdir/$secret/$signer_key"
  printf '%s' "$executors" >"$workdir/$secret/$executors_key"
  secret_files["$secret"]=1
done

if [[ -z "${service_secret_name:-}" ]]; then
  problems+=("the chart's chain workers name no service secret Secret (serviceSecret.existingSecret)")
elif ! secret_exists "$service_secret_name"; then
  service_secret="${AGENT_WALLET_SERVICE_SECRET:-}"
  if [[ -z "$service_secret" ]]; then
    service_secret="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
    generated_service_secret=true
  elif ((${#service_secret} < 32)); then
    problems+=("AGENT_WALLET_SERVICE_SECRET: at least 32 characters")
  fi
  mkdir -p "$workdir/$service_secret_name"
  printf '%s' "$service_secret" >"$workdir/$service_secret_name/$service_secret_key"
  secret_files["$service_secret_name"]=1
fi

if ((${#problems[@]} > 0)); then
  printf 'up.sh: set these and run again (nothing was created):\n' >&2
  printf '  - %s\n' "${problems[@]}" >&2
  exit 1
fi

if [[ "${generated_service_secret:-false}" == true ]]; then
  echo "up.sh: AGENT_WALLET_SERVICE_SECRET unset: a new random service secret goes into Secret $service_secret_name."
  echo "       Every wallet address derives from it: back it up before you fund any wallet."
fi

# --- Cluster, image, Secrets, release.
if [[ "$cluster_exists" == false ]]; then
  # From the repository's root: cluster.yaml mounts deploy/kind/audit-policy.yaml by a relative path.
  (cd "$repo" && kind create cluster --name "$cluster" --config "$here/cluster.yaml" ${KIND_NODE_IMAGE:+--image "$KIND_NODE_IMAGE"})
fi

echo "up.sh: building the image (context: the repository root)"
DOCKER_BUILDKIT=1 docker build -f "$repo/deploy/Dockerfile" -t agent-wallet:dev "$repo"
# A tag per image content: the pods roll when the code changed, and only then.
tag="dev-$(docker image inspect -f '{{.Id}}' agent-wallet:dev | sed 's/^sha256://' | cut -c1-12)"
docker tag agent-wallet:dev "agent-wallet:$tag"
kind load docker-image "agent-wallet:$tag" --name "$cluster"

kubectl --context "$context" create namespace "$namespace" --dry-run=client -o yaml | kubectl --context "$context" apply -f -
for secret in "${!secret_files[@]}"; do
  # From files, not --from-literal: keys never appear on a command line.
  kubectl --context "$context" -n "$namespace" create secret generic "$secret" --from-file="$workdir/$secret" \
    --dry-run=client -o yaml | kubectl --context "$context" -n "$namespace" apply -f -
done

if ! helm upgrade --install "$release" "$chart" --kube-context "$context" --namespace "$namespace" "${values[@]}" \
  --set image.tag="$tag" --wait --timeout 5m; then
  echo "up.sh: the release did not become ready in 5 minutes. Look at:" >&2
  echo "  kubectl --context $context -n $namespace get pods" >&2
  echo "  kubectl --context $context -n $namespace logs deploy/$release-worker-${chains[0]}" >&2
  exit 1
fi

cat <<EOF

agent-wallet runs on kind cluster '$cluster' (kubectl context $context), namespace $namespace:
  curl -s http://127.0.0.1:8080/health
  kubectl --context $context -n $namespace exec deploy/$release-gateway -- node bin/agent-wallet.js keys create --kube --mode sponsored
  kubectl --context $context -n $namespace get exr
Remove it all: kind delete cluster --name $cluster
EOF
