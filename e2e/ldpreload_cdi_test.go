//go:build e2e

package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	cdispecs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/internal/testutil"
)

// TestLDPreloadCDIHooks is the NVIDIAScape check (CVE-2025-23266) for our
// CDI hooks: a container whose environment sets LD_PRELOAD to a library in
// its rootfs is run by podman with our generated spec. A createContainer
// hook runs in the rootfs, and one without an explicit env inherits the
// container's environment: a dynamically linked hook then runs the
// library's constructor as root on the host.
//
// Controls, so the test can fail: the container's own dynamically linked
// program does load the library, and a dynamically linked canary hook
// (the host's `true`) added without env loads it too. With the generated
// spec (explicit env on every hook, and the same env given to the
// canary), no hook loads it; with every env removed, as specs were before
// the fix, the canary loads it under runc but our hook, a static binary
// with no dynamic loader, still does not, and still does its work. (crun
// 1.8.1 runs an env-less hook with crun's own environment, in the bundle
// dir, so there the canary stays clean too; the runc run shows the leak.)
func TestLDPreloadCDIHooks(t *testing.T) {
	for _, runtime := range []string{"runc", "crun"} {
		t.Run(runtime, func(t *testing.T) {
			requirePodman(t, runtime)
			c := newCDICase(t, uniqueClass())
			canary := dynamicProgram(t, "dd")
			t.Run("generated-spec", func(t *testing.T) {
				env := c.spec.ContainerEdits.Hooks[0].Env
				c.rewrite(t, func(s *cdispecs.Spec) { addCanary(s, canary, env) })
				runs := c.runPreloaded(t, runtime)
				assert.NotContains(t, runs, canary, "with explicit hook envs, the library ran in hooks")
				assert.NotContains(t, runs, c.hook, "with explicit hook envs, the library ran in hooks")
			})
			t.Run("hooks-without-env", func(t *testing.T) {
				c.rewrite(t, func(s *cdispecs.Spec) {
					s.ContainerEdits.Hooks = slices.DeleteFunc(s.ContainerEdits.Hooks, func(h *cdispecs.Hook) bool { return h.Path == canary })
					for _, h := range s.ContainerEdits.Hooks {
						h.Env = nil
					}
					addCanary(s, canary, nil)
				})
				runs := c.runPreloaded(t, runtime)
				switch {
				case runtime == "crun" && !slices.Contains(runs, canary):
					// crun 1.8.1 gives an env-less hook its own environment and
					// the bundle as working directory: the leak needs runc.
					t.Logf("crun: the env-less canary did not see the container's environment")
				default:
					require.Contains(t, runs, canary, "control: the env-less canary hook %s did not load the library: the setup cannot show a leak", canary)
				}
				assert.NotContains(t, runs, c.hook, "our static hook loaded LD_PRELOAD")
			})
		})
	}
}

// addCanary appends a createContainer hook running path with env.
func addCanary(s *cdispecs.Spec, path string, env []string) {
	s.ContainerEdits.Hooks = append(s.ContainerEdits.Hooks,
		&cdispecs.Hook{HookName: "createContainer", Path: path, Args: canaryArgs, Env: env})
}

// runPreloaded runs the program that needs libcuda.so.1 with device 0 and
// LD_PRELOAD in the container's environment, checks that it ran (our hooks
// did their work) and loaded the library (the control), and returns every
// program that loaded it.
func (c *cdiCase) runPreloaded(t *testing.T, runtime string) []string {
	t.Helper()
	rootfs := busyboxRootfs(t)
	addPreloadLibrary(t, rootfs)
	opts := []string{"--device", c.qualified("0"), "--env", preloadEnv}
	out, stderr, err := podman(t, runtime, opts, rootfs, "/bin/busybox", "sh", "-c", `/cudaprog; echo "exit $?"`)
	require.NoError(t, err, "podman run: output %q\n%s", out, stderr)
	require.Equal(t, "exit 0", strings.TrimSpace(out), "podman run: output\n%s", stderr)
	runs := preloadRuns(t, rootfs)
	t.Logf("programs that ran the LD_PRELOAD library: %v", runs)
	require.Contains(t, runs, testutil.CUDAProgram, "control: %s in the container did not load %s", testutil.CUDAProgram, preloadEnv)
	return runs
}
