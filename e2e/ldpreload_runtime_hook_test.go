//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
)

// TestLDPreloadRuntimeHook is the LD_PRELOAD check for the prestart path:
// runc (and crun) run a GPU container whose environment sets LD_PRELOAD,
// with nvidia-container-runtime-hook (static as it ships, but its NVML
// helper nvc-nvml is not, and a cgo build loads NVML itself) registered as
// nvidia-container-runtime registers it, with an explicit env. LD_PRELOAD names the library twice: as /proc/self/cwd/… (found in
// the container, and by a createContainer hook, which runs in the rootfs)
// and by its host path (found by any hook on the host).
//
// Controls: the container's program loads the library; a dynamic canary
// createContainer hook without env loads it (runc gives such hooks the
// container's environment). A dynamic canary prestart hook without env
// shows whether the prestart stage sees the environment at all. The
// runtime hook must not load it, and must still configure the container.
func TestLDPreloadRuntimeHook(t *testing.T) {
	for _, name := range []string{"runc", "crun"} {
		t.Run(name, func(t *testing.T) {
			c := &runtimeCase{t: t, rt: requireRuntime(t, name), host: simHost(t, nil),
				hook: buildExample(t, "nvidia-container-runtime-hook", false)}
			config := hookConfig(t, c.host, nil)
			prestartCanary, createCanary := dynamicProgram(t, "dd"), dynamicProgram(t, "dd")
			rootfs, bundle := c.start(t, gpuEnv, "prestart", ourHook(c.hook, config, "prestart"),
				specs.Hook{Path: prestartCanary, Args: canaryArgs})
			addPreloadLibrary(t, rootfs)
			editBundle(t, bundle, func(s *specs.Spec) {
				s.Process.Env = append(s.Process.Env, preloadEnv+" "+filepath.Join(rootfs, preloadName))
				s.Hooks.CreateContainer = append(s.Hooks.CreateContainer, specs.Hook{Path: createCanary, Args: canaryArgs})
			})
			got := c.probe(t, bundle, "", "")
			runs := slices.Concat(preloadRuns(t, rootfs), preloadRuns(t, bundle))
			t.Logf("programs that ran the LD_PRELOAD library: %v", runs)
			const msg = "the runtime hook did not configure the container: cudaprog %q, /dev/nvidia0 %q"
			assert.True(t, strings.HasSuffix(got["cudaprog"], "exit 0"), msg, got["cudaprog"], got["dev0"])
			assert.True(t, strings.HasPrefix(got["dev0"], "c"), msg, got["cudaprog"], got["dev0"])
			require.Contains(t, runs, testutil.CUDAProgram, "control: %s in the container did not load the library", testutil.CUDAProgram)
			if name == "runc" {
				require.Contains(t, runs, createCanary, "control: the env-less createContainer canary did not load the library")
			}
			t.Logf("the env-less prestart canary loaded it: %v", slices.Contains(runs, prestartCanary))
			assert.NotContains(t, runs, c.hook, "nvidia-container-runtime-hook loaded the container's LD_PRELOAD")
		})
	}
}

// editBundle changes the bundle's config.json.
func editBundle(t testing.TB, bundle string, change func(*specs.Spec)) {
	t.Helper()
	spec := readSpec(t, bundle)
	change(spec)
	data, err := json.MarshalIndent(spec, "", "\t")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(bundle, "config.json"), data, 0o644))
}
