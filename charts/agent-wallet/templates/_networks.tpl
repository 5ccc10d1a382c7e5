{{/*
A chain's values over its shipped network file (networks/<network>.yaml, the same files `agent-wallet serve
--network` and `doctor --network` read): a value the operator sets wins, an empty or absent one takes the file's
(sprig merge). The file holds no secrets and nothing only the operator knows (rpcUrl, paymaster, beneficiary,
treasury). Called with (dict "root" $ "name" <chain> "chain" <its values>); returns the merged chain as JSON.
*/}}
{{- define "agent-wallet.networkChain" -}}
{{- $chain := deepCopy .chain }}
{{- with .chain.network }}
{{- $file := printf "networks/%s.yaml" . }}
{{- $raw := $.root.Files.Get $file }}
{{- if not $raw }}{{ fail (printf "chains.%s.network: %s is not a shipped network (charts/agent-wallet/networks/)" $.name .) }}{{ end }}
{{- $shipped := fromYaml $raw }}
{{- if ne $shipped.name $.name }}{{ fail (printf "chains.%s.network: %s is a configuration of chain %s" $.name . $shipped.name) }}{{ end }}
{{- $chain = merge $chain (omit $shipped "name") }}
{{- end }}
{{- toJson $chain }}
{{- end }}
