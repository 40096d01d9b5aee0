//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	cdispecs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
)

// The CDI spec's enable-cuda-compat and disable-device-node-modification
// hooks under podman: what the container sees.

// hookIndex is the index of the spec-wide hook running subcommand name,
// -1 if none.
func hookIndex(s *cdispecs.Spec, name string) int {
	return slices.IndexFunc(s.ContainerEdits.Hooks, func(h *cdispecs.Hook) bool {
		return len(h.Args) > 1 && h.Args[1] == name
	})
}

// kernelProcCDIHook is kernelProcHook as a CDI createContainer hook: it
// bind-mounts the simulated host's proc/driver over the container's
// /proc/driver (the runtime has mounted the container's procfs by then,
// and createContainer hooks run in the container's mount namespace),
// as the NVIDIA kernel driver's /proc/driver/nvidia would be there.
func (c *cdiCase) kernelProcCDIHook(t *testing.T, rootfs string) *cdispecs.Hook {
	busybox := testutil.RequireCommand(t, "busybox")
	// The state is read to its end first: crun fails the container when a
	// hook exits before it has written the state ("writing to pipe: Broken
	// pipe"), which happened now and then under load.
	const script = `busybox cat >/dev/null; busybox mount -o bind "$1" "$2/proc/driver"`
	return &cdispecs.Hook{HookName: "createContainer", Path: busybox,
		Args: []string{"busybox", "sh", "-c", script, "kernel-proc", filepath.Join(c.host.ProcRoot, "driver"), rootfs},
		Env:  []string{"PATH=/usr/bin:/bin"}}
}

// TestCDIPodmanDeviceNodeModification runs podman with our spec, the
// simulated driver's procfs made the container's (a hook before ours) and
// the simulated host's procfs given to our hook as the host's
// (--proc-root): the container reads ModifyDeviceFiles: 0 from a
// read-only mount on params. Control: without our hook it reads the
// simulated host's ModifyDeviceFiles: 1.
func TestCDIPodmanDeviceNodeModification(t *testing.T) {
	for _, runtime := range []string{"runc", "crun"} {
		t.Run(runtime, func(t *testing.T) {
			requirePodman(t, runtime)
			c := newCDICase(t, uniqueClass())
			script := strings.Join([]string{probeFunc,
				"p params 'busybox grep ModifyDeviceFiles /proc/driver/nvidia/params'",
				"p mount \"busybox grep ' /proc/driver/nvidia/params ' /proc/self/mountinfo\"",
				"p gpus 'busybox ls /proc/driver/nvidia/gpus | busybox wc -l'"}, "\n")
			for _, withOurs := range []bool{true, false} {
				t.Run(map[bool]string{true: "our-hook", false: "without-our-hook"}[withOurs], func(t *testing.T) {
					rootfs := busyboxRootfs(t)
					c.rewrite(t, func(s *cdispecs.Spec) {
						s.ContainerEdits.Hooks = slices.DeleteFunc(s.ContainerEdits.Hooks, func(h *cdispecs.Hook) bool { return slices.Contains(h.Args, "kernel-proc") })
						s.ContainerEdits.Hooks = slices.Insert(s.ContainerEdits.Hooks, 0, c.kernelProcCDIHook(t, rootfs))
						i := hookIndex(s, "disable-device-node-modification")
						require.GreaterOrEqual(t, i, 0, "the spec has no disable-device-node-modification hook: %+v", s.ContainerEdits.Hooks)
						if !withOurs {
							s.ContainerEdits.Hooks = slices.Delete(s.ContainerEdits.Hooks, i, i+1)
						} else if !slices.Contains(s.ContainerEdits.Hooks[i].Args, "--proc-root") {
							s.ContainerEdits.Hooks[i].Args = append(s.ContainerEdits.Hooks[i].Args, "--proc-root", c.host.ProcRoot)
						}
					})
					out, stderr, err := podman(t, runtime, []string{"--device", c.qualified("0")}, rootfs, "/bin/busybox", "sh", "-c", script)
					require.NoError(t, err, "podman run (our hook %v): %s", withOurs, stderr)
					got := parseProbe(out)
					want := "ModifyDeviceFiles: 1"
					if withOurs {
						want = "ModifyDeviceFiles: 0"
					}
					assert.Equal(t, want, got["params"], "our hook %v: the container sees %q", withOurs, got)
					assert.Equal(t, "8", got["gpus"], "our hook %v: the container sees %q, want the 8 GPUs of the driver's procfs", withOurs, got)
					mounted := strings.Contains(got["mount"], " ro,nosuid,nodev,noexec")
					assert.Equal(t, withOurs, mounted, "our hook %v: params mount %q; want a ro,nosuid,nodev,noexec mount: %v", withOurs, got["mount"], withOurs)
				})
			}
		})
	}
}

// compatImage is busyboxRootfs with CUDA forward-compatibility libraries
// of version compat: /usr/local/cuda/compat/libcuda.so.<compat> (an ELF
// library whose SONAME is libcuda.so.1) and its libcuda.so.1 link.
func compatImage(t *testing.T, compat string) string {
	t.Helper()
	rootfs := busyboxRootfs(t)
	testutil.BuildTree(t, rootfs, "dir usr/local/cuda/compat\nsymlink usr/local/cuda/compat/libcuda.so.1 libcuda.so."+compat+"\n")
	lib := filepath.Join(rootfs, "usr/local/cuda/compat/libcuda.so."+compat)
	require.NoError(t, elfwriter.WriteFile(lib, elfwriter.Library("libcuda.so.1"), 0o755))
	return rootfs
}

// TestCDIPodmanCUDACompat runs podman with our spec on an image whose
// compat libcuda is newer than the simulated driver (major + 20): the
// loader in the container loads the compat libcuda.so.1
// (LD_TRACE_LOADED_OBJECTS, the loader's own answer) and glibc's
// ldconfig -p lists it first. With an older one (major - 15) the
// driver's is loaded and the compat dir is not in the cache.
func TestCDIPodmanCUDACompat(t *testing.T) {
	requirePodman(t, "crun")
	c := newCDICase(t, uniqueClass())
	require.GreaterOrEqual(t, hookIndex(c.spec, "enable-cuda-compat"), 0, "the spec has no enable-cuda-compat hook: %+v", c.spec.ContainerEdits.Hooks)
	major, err := strconv.Atoi(strings.Split(c.host.DriverVersion, ".")[0])
	require.NoError(t, err)
	const compatDir = "/usr/local/cuda/compat"
	for _, tc := range []struct {
		name, compat, loaded string
	}{
		{"newer", fmt.Sprintf("%d.86.10", major+20), compatDir + "/libcuda.so.1"},
		{"older", fmt.Sprintf("%d.104.05", major-15), "/usr/lib64/libcuda.so.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rootfs := compatImage(t, tc.compat)
			out, stderr, err := podman(t, "crun", []string{"--device", c.qualified("0"), "--env", "LD_TRACE_LOADED_OBJECTS=1"}, rootfs, "/cudaprog")
			require.NoError(t, err, "podman run: %s", stderr)
			assert.Contains(t, out, "libcuda.so.1 => "+tc.loaded+" (", "compat libcuda.so.%s, driver %s: the loader resolves\n%s\nwant libcuda.so.1 => %s", tc.compat, c.host.DriverVersion, out, tc.loaded)
			var libcuda []string
			for _, e := range testutil.LdconfigEntries(t, filepath.Join(rootfs, "etc/ld.so.cache")) {
				if strings.HasPrefix(e, "libcuda.so.1 (libc6,x86-64)") {
					libcuda = append(libcuda, e)
				}
			}
			inCache := slices.ContainsFunc(libcuda, func(e string) bool { return strings.Contains(e, compatDir) })
			msg := fmt.Sprintf("glibc ldconfig -p lists libcuda.so.1 as %q; want %s first, the compat dir listed: %v", libcuda, tc.loaded, tc.name == "newer")
			if assert.NotEmpty(t, libcuda, msg) {
				assert.True(t, strings.HasSuffix(libcuda[0], "=> "+tc.loaded), msg)
			}
			assert.Equal(t, tc.name == "newer", inCache, msg)
		})
	}
}
