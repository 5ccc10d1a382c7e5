{{/* Names: <release>-agent-wallet, or <release> when the release name already contains the chart name. */}}
{{- define "agent-wallet.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "agent-wallet.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* A component's resource name; the suffix is kept whole so names stay distinct (fullname is cut instead). */}}
{{- define "agent-wallet.componentName" -}}
{{- $root := index . 0 }}{{ $suffix := index . 1 }}
{{- $base := include "agent-wallet.fullname" $root | trunc (int (sub 62 (len $suffix))) | trimSuffix "-" }}
{{- printf "%s-%s" $base $suffix }}
{{- end }}

{{- define "agent-wallet.workerName" -}}
{{- include "agent-wallet.componentName" (list .root (printf "worker-%s" .chain)) }}
{{- end }}

{{- define "agent-wallet.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "agent-wallet.selectorLabels" -}}
app.kubernetes.io/name: {{ include "agent-wallet.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "agent-wallet.labels" -}}
helm.sh/chart: {{ include "agent-wallet.chart" . }}
{{ include "agent-wallet.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: agent-wallet
{{- end }}

{{/* (list $ "gateway") → the labels selecting that component's pods. */}}
{{- define "agent-wallet.componentSelectorLabels" -}}
{{ include "agent-wallet.selectorLabels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "agent-wallet.componentLabels" -}}
{{ include "agent-wallet.labels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "agent-wallet.workerSelectorLabels" -}}
{{ include "agent-wallet.componentSelectorLabels" (list .root "chain-worker") }}
agentwallet.dev/chain: {{ .chain }}
{{- end }}

{{- define "agent-wallet.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "agent-wallet.leaseName" -}}
{{- default (include "agent-wallet.componentName" (list . "controller")) .Values.controller.leaseName }}
{{- end }}

{{- define "agent-wallet.redisUrl" -}}
{{- if .Values.redis.internal.enabled }}
{{- printf "redis://%s:6379" (include "agent-wallet.componentName" (list . "redis")) }}
{{- else }}
{{- required "redis.url is required (or redis.internal.enabled=true for kind/dev)" .Values.redis.url }}
{{- end }}
{{- end }}

{{/* Enabled chains, sorted by name: {"ethereum": {...}}. Fails when none is enabled. */}}
{{- define "agent-wallet.enabledChains" -}}
{{- $enabled := dict }}
{{- range $name, $chain := .Values.chains }}
{{- if $chain.enabled }}{{ $_ := set $enabled $name (include "agent-wallet.networkChain" (dict "root" $ "name" $name "chain" $chain) | fromJson) }}{{ end }}
{{- end }}
{{- if not $enabled }}
{{- fail "no chain is enabled: set chains.<ethereum|base|arbitrum>.enabled=true with its rpcUrl, paymaster, beneficiary, treasury and keys.existingSecret" }}
{{- end }}
{{- toJson $enabled }}
{{- end }}

{{/* The environment every role shares: where the config is, who the pod is, the Redis password, where traces go. */}}
{{- define "agent-wallet.commonEnv" -}}
- name: AGENT_WALLET_CONFIG
  value: /etc/agent-wallet/config.yaml
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- if and .Values.redis.auth.existingSecret (not .Values.redis.internal.enabled) }}
- name: AGENT_WALLET_REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.auth.existingSecret }}
      key: {{ .Values.redis.auth.key }}
{{- end }}
{{- if .Values.tracing.enabled }}
{{- /* The standard OTEL_ variables: each role names itself (service.name agent-wallet-<role>, src/lib/tracing.ts). */}}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ required "tracing.endpoint is required with tracing.enabled" .Values.tracing.endpoint | quote }}
- name: OTEL_TRACES_SAMPLER
  value: parentbased_traceidratio
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ .Values.tracing.sampleRatio | toString | quote }}
{{- end }}
{{- end }}

{{/* The x402 settler's key, for the chain workers: each owns the settler's nonces on its chain and sends the settlements. */}}
{{- define "agent-wallet.x402Env" -}}
{{- if .Values.payments.x402.existingSecret }}
- name: AGENT_WALLET_X402_SETTLER_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.payments.x402.existingSecret }}
      key: {{ .Values.payments.x402.key }}
{{- end }}
{{- end }}

{{/* The faucet account's key, for the chain workers: each sends a faucet's drips on its chain, within its faucetCap. */}}
{{- define "agent-wallet.faucetEnv" -}}
{{- if .Values.payments.faucet.existingSecret }}
- name: AGENT_WALLET_FAUCET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.payments.faucet.existingSecret }}
      key: {{ .Values.payments.faucet.key }}
{{- end }}
{{- end }}

{{/* The config file, and a writable /tmp (tsx caches compiled sources there) under a read-only root. */}}
{{- define "agent-wallet.volumes" -}}
- name: config
  configMap:
    name: {{ include "agent-wallet.componentName" (list . "config") }}
- name: tmp
  emptyDir:
    sizeLimit: 256Mi
{{- end }}

{{- define "agent-wallet.volumeMounts" -}}
- name: config
  mountPath: /etc/agent-wallet
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- end }}

{{/* Pod annotations that roll the pods when the rendered config changes. */}}
{{- define "agent-wallet.checksumAnnotations" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- end }}

{{- /* Prometheus's namespaces may scrape every role's metrics port. */}}
{{- define "agent-wallet.metricsPeer" -}}
{{- if .Values.networkPolicy.metricsNamespaceSelector -}}
- from:
    - namespaceSelector:
        {{- toYaml .Values.networkPolicy.metricsNamespaceSelector | nindent 8 }}
  ports:
    - port: metrics
      protocol: TCP
{{- end }}
{{- end }}

{{/* A Prometheus duration ("10m", "1h30m") in seconds, for expressions that compare with time(). */}}
{{- define "agent-wallet.durationSeconds" -}}
{{- $unit := dict "ms" 0.001 "s" 1 "m" 60 "h" 3600 "d" 86400 "w" 604800 "y" 31536000 }}
{{- $total := 0.0 }}
{{- range regexFindAll "[0-9]+(ms|s|m|h|d|w|y)" . -1 }}
{{- $n := regexFind "^[0-9]+" . | float64 }}
{{- $u := trimPrefix (regexFind "^[0-9]+" .) . }}
{{- $total = addf $total (mulf $n (get $unit $u)) }}
{{- end }}
{{- $total }}
{{- end }}
