//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// podmanHooksDir writes an OCI hooks.d dir for podman, one prestart entry
// per hook, always applied, run in order (podman sorts the entries by file
// name): the shape of the oci-nvidia-hook.json NVIDIA's toolkit installs.
func podmanHooksDir(t *testing.T, hooks ...specs.Hook) string {
	t.Helper()
	dir := t.TempDir()
	for i, h := range hooks {
		entry := map[string]any{
			"version": "1.0.0",
			"hook":    map[string]any{"path": h.Path, "args": h.Args, "env": h.Env},
			"when":    map[string]any{"always": true},
			"stages":  []string{"prestart"},
		}
		data, err := json.Marshal(entry)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d-hook.json", i)), data, 0o644))
	}
	return dir
}

// TestPodmanHookUnmetRequirement runs a CUDA image's environment
// (NVIDIA_REQUIRE_CUDA above the simulated driver's CUDA) under podman
// with our runtime hook from a hooks dir (the toolkit's podman front door
// without CDI): the hook refuses with libnvidia-container's requirement
// error and the container's command never runs. The same container
// without the requirement runs (the control: the hook let it through).
func TestPodmanHookUnmetRequirement(t *testing.T) {
	requirePodman(t, "runc")
	h := simHost(t, nil)
	hook := buildExample(t, "nvidia-container-runtime-hook", false)
	logFile := filepath.Join(t.TempDir(), "hook.log")
	config := hookConfig(t, h, []string{"debug = " + quote(logFile)})
	for _, tc := range []struct {
		name string
		env  []string
		ran  bool
	}{
		{"unmet", []string{"NVIDIA_REQUIRE_CUDA=cuda>=99.0"}, false},
		{"met", []string{"NVIDIA_REQUIRE_CUDA=cuda>=11.0"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []string{"-e", "NVIDIA_VISIBLE_DEVICES=0", "-e", "NVIDIA_DRIVER_CAPABILITIES=utility"}
			for _, e := range tc.env {
				opts = append(opts, "-e", e)
			}
			rootfs := busyboxRootfs(t)
			hooksDir := podmanHooksDir(t, kernelProcHook(t, h, rootfs), ourHook(hook, config, "prestart"))
			stdout, stderr, err := podmanGlobal(t, "runc", []string{"--hooks-dir", hooksDir}, opts, rootfs,
				"/bin/busybox", "sh", "-c", "echo ran; busybox ls /dev/nvidia0")
			log, _ := os.ReadFile(logFile)
			const msg = "requirement error: unsatisfied condition: cuda>=99.0"
			if tc.ran {
				require.NoError(t, err, "podman run: stderr %q, hook log %q", stderr, log)
				assert.Contains(t, stdout, "ran\n/dev/nvidia0", "the container's command and the node the hook gave it")
				return
			}
			why := "podman run with an unmet NVIDIA_REQUIRE_CUDA: stdout %q, stderr %q, hook log %q; want a failed hook and no container"
			require.Error(t, err, why, stdout, stderr, log)
			assert.NotContains(t, stdout, "ran", why, stdout, stderr, log)
			assert.Contains(t, stderr+string(log), msg, why, stdout, stderr, log)
		})
	}
}

// TestPodmanCDIRequirementNotChecked pins the CDI front door's answer to
// the same CUDA image environment: a CDI spec carries no requirement and
// its hooks check none, so podman with --device runs the container
// whatever NVIDIA_REQUIRE_CUDA says, as with NVIDIA's toolkit (whose cdi
// and jit-cdi modes do not check requirements either; ours does in
// jit-cdi, which plans the devices, see TestContainerd).
func TestPodmanCDIRequirementNotChecked(t *testing.T) {
	requirePodman(t, "runc")
	c := newCDICase(t, uniqueClass())
	stdout, stderr, err := podman(t, "runc", []string{"--device", c.qualified("0"), "-e", "NVIDIA_REQUIRE_CUDA=cuda>=99.0"},
		busyboxRootfs(t), "/bin/busybox", "sh", "-c", "echo ran; busybox ls /dev/nvidia0")
	require.NoError(t, err, "podman run --device %s: %s", c.qualified("0"), stderr)
	assert.Equal(t, "ran\n/dev/nvidia0\n", stdout)
}
