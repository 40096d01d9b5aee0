//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/fakenvmllib"
	"github.com/go-nvc/nvc/internal/testutil"
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

// TestRuntimeJitNVMLHelper: nvidia-container-runtime ships built without
// cgo, and in jit-cdi mode a container that requires arch>=8.0 on GPU 0
// gets the fact from the helper nvc-nvml beside the runtime, run as
// 65534:65534: the container starts, with GPU 0.
func TestRuntimeJitNVMLHelper(t *testing.T) {
	testutil.RequireRoot(t)
	mark := initMark(t)
	c := &modesCase{rt: requireRuntime(t, "runc"), host: nvmlHost(t, &fakehost.Options{Layout: fakehost.Fedora, RealNodes: true}),
		wrapper: buildExample(t, "nvidia-container-runtime", false), bin: t.TempDir(), tmp: t.TempDir(),
		env: []string{fakenvmllib.EnvInitMark + "=" + mark}}
	require.NoError(t, os.Symlink(staticExample(t, "nvidia-cdi-hook"), filepath.Join(c.bin, "nvidia-cdi-hook")))
	config := autoBackendConfig(t, hookConfig(t, c.host, nil, "[nvidia-container-runtime]", `mode = "jit-cdi"`, `runtimes = ["runc"]`))
	env := []string{"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,utility", "NVIDIA_REQUIRE_ARCH=arch>=8.0"}
	bundle := newBundle(t, busyboxRootfs(t), modesProbe, env, &specs.Hooks{})
	out, stderr, code := c.run(t, bundle, strings.ToLower(testName(t)), config)
	require.Equal(t, 0, code, "runc through the wrapper: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	got := parseProbe(out)
	assert.True(t, strings.HasPrefix(got["dev0"], "c"), "/dev/nvidia0: %q", got["dev0"])
	assert.Equal(t, [2]uint32{65534, 65534}, markOwner(t, mark), "owner of the file nvmlInit wrote")
}
