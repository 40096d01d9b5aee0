//go:build e2e

package e2e

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakenvmllib"
)

// autoBackendConfig is hookConfig without its [nvc] backend line, as
// nvidia-container-runtime's users write it: discovery through procfs,
// NVML only for a fact procfs lacks.
func autoBackendConfig(t *testing.T, config string) string {
	t.Helper()
	data, err := os.ReadFile(config)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(config, []byte(strings.Replace(string(data), "backend = \"procfs\"\n", "", 1)), 0o644))
	return config
}

// markOwner is the owner of the file the fake nvmlInit wrote, which
// fails the test when NVML never started.
func markOwner(t *testing.T, mark string) [2]uint32 {
	t.Helper()
	fi, err := os.Stat(mark)
	require.NoError(t, err, "NVML not started")
	st := fi.Sys().(*syscall.Stat_t)
	return [2]uint32{st.Uid, st.Gid}
}

// TestHookNVMLHelper: the runtime hook ships built without cgo, and a
// container that requires arch>=8.0 (a fact only NVML knows) gets it from
// the helper nvc-nvml beside the hook, run as [nvidia-container-cli]
// user (the identity NVIDIA's hook passes as --user): by default
// 65534:65534, so the file the fake nvmlInit writes is that user's, not
// root's as in a hook that loads NVML itself.
func TestHookNVMLHelper(t *testing.T) {
	h := nvmlHost(t, nil)
	c := &runtimeCase{t: t, rt: requireRuntime(t, "runc"), host: h, hook: buildExample(t, "nvidia-container-runtime-hook", false)}
	for _, tc := range []struct {
		name  string
		cli   []string
		owner [2]uint32
	}{
		{"default user", nil, [2]uint32{65534, 65534}},
		{"user", []string{`user = "1234:4321"`}, [2]uint32{1234, 4321}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := autoBackendConfig(t, hookConfig(t, h, tc.cli))
			mark := initMark(t)
			hook := ourHook(c.hook, config, "prestart")
			hook.Env = append(hook.Env, fakenvmllib.EnvInitMark+"="+mark)
			_, bundle := c.start(t, []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
				"NVIDIA_REQUIRE_ARCH=arch>=8.0"}, "prestart", hook)
			got := c.probe(t, bundle, "", "")
			assert.Equal(t, "/usr/bin/nvidia-smi", got["smi"], "not configured: nvidia-smi")
			assert.Equal(t, tc.owner, markOwner(t, mark), "owner of the file nvmlInit wrote")
		})
	}
}
