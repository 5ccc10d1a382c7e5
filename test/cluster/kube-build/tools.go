//go:build tools

// Package tools pins the commands the cluster tests build; `go mod tidy` reads these imports.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
