// Butler's Argo CD health checks judged by Argo CD's own code, as a user installs them. `deno task test:gitops`
// copies this file into an Argo CD source tree (ARGOCD_SRC, util/lua) and runs it there with `go test`, beside
// Argo CD's own TestLuaHealthScript (which it runs over our resource_customizations, copied into that tree).
//
// Here the checks come from manifests/argocd/argocd-cm.yaml, read by Argo CD's SettingsManager exactly as the
// application controller reads argocd-cm (keys resource.customizations.health.<group_kind>), and each runs in
// Argo CD's Lua VM with the libraries Argo CD gives custom scripts (useOpenLibs unset: base and table only).
// Every case of every health_test.yaml must give its health status and message.
//
// This file is not part of any Go module of the Butler repository; it compiles only inside Argo CD's: the latest
// release (v3.5.x, whose gitops-engine module is github.com/argoproj/argo-cd/gitops-engine) and the main branch
// (github.com/argoproj/argo-cd/gitops-engine/v3). It names no package of gitops-engine, so the same file builds in
// both: a health status is compared as the JSON Argo CD writes into an Application's status.
package lua_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
)

func TestButlerHealthAsConfigured(t *testing.T) {
	root := os.Getenv("BUTLER_ROOT")
	require.NotEmpty(t, root, "BUTLER_ROOT: the Butler repository")

	var cm corev1.ConfigMap
	raw, err := os.ReadFile(filepath.Join(root, "manifests/argocd/argocd-cm.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(raw, &cm))
	// argocd-cm as a user merges it, beside the Secret Argo CD keeps.
	cm.Namespace = "argocd"
	secret := &corev1.Secret{}
	secret.Name = "argocd-secret"
	secret.Namespace = "argocd"
	secret.Labels = map[string]string{"app.kubernetes.io/part-of": "argocd"}
	secret.Data = map[string][]byte{"server.secretkey": []byte("test")}
	mgr := settings.NewSettingsManager(context.Background(), fake.NewClientset(&cm, secret), "argocd")
	overrides, err := mgr.GetResourceOverrides()
	require.NoError(t, err)

	dirs, err := filepath.Glob(filepath.Join(root, "manifests/argocd/resource_customizations/butler.butlerlabs.dev/*"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		kind := filepath.Base(dir)
		override, ok := overrides["butler.butlerlabs.dev/"+kind]
		require.True(t, ok, "argocd-cm has no health check for %s", kind)
		require.False(t, override.UseOpenLibs, "%s: Argo CD's default library restrictions", kind)

		var cases struct {
			Tests []struct {
				InputPath    string         `json:"inputPath"`
				HealthStatus map[string]any `json:"healthStatus"`
			} `json:"tests"`
		}
		raw, err := os.ReadFile(filepath.Join(dir, "health_test.yaml"))
		require.NoError(t, err)
		require.NoError(t, yaml.Unmarshal(raw, &cases))
		require.NotEmpty(t, cases.Tests, kind)
		for _, c := range cases.Tests {
			t.Run(kind+"/"+c.InputPath, func(t *testing.T) {
				raw, err := os.ReadFile(filepath.Join(dir, c.InputPath))
				require.NoError(t, err)
				obj := map[string]any{}
				require.NoError(t, yaml.Unmarshal(raw, &obj))
				u := &unstructured.Unstructured{Object: obj}
				vm := lua.VM{ResourceOverrides: overrides}
				script, useOpenLibs, err := vm.GetHealthScript(u)
				require.NoError(t, err)
				require.False(t, useOpenLibs)
				vm.UseOpenLibs = useOpenLibs
				got, err := vm.ExecuteHealthLua(u, script)
				require.NoError(t, err)
				require.NotNil(t, got)
				assert.Equal(t, c.HealthStatus, asJSON(t, got))
			})
		}
	}
}

// asJSON is a value as its JSON object: a health status as Argo CD stores it (`status`, and `message` when set).
func asJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	out := map[string]any{}
	require.NoError(t, json.Unmarshal(raw, &out))
	return out
}
