//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	cdispecs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// rootlessScript prints, from inside a rootless container, the user's
// ids, what opening the GPU and control nodes gives (ENXIO: allowed, no
// driver behind them), the libcuda link in lib, the program that needs
// libcuda.so.1 and the owner and content of the masked driver params.
func rootlessScript(lib string) string {
	return "cd /\n" + probeFunc + `
p ids 'busybox id -u; busybox id -g'
p open0 'busybox head -c1 /dev/nvidia0'
p openctl 'busybox head -c1 /dev/nvidiactl'
p libcuda 'busybox readlink ` + lib + `/libcuda.so.1'
p cudaprog '/cudaprog; echo "exit $?"'
p procowner 'busybox stat -c "%u:%g" /proc/driver/nvidia/params'
p params 'busybox grep ModifyDeviceFiles /proc/driver/nvidia/params'
`
}

// rootlessCase is a rootless podman run: the user made for it, the
// simulated host and a rootfs owned by the user, as a rootless user's
// image is (podman maps the container's root to the user's own uid).
type rootlessCase struct {
	u      *rootlessUser
	host   *fakehost.Host
	rootfs string
	before container.Snapshot
}

func newRootlessCase(t *testing.T, u *rootlessUser, h *fakehost.Host) *rootlessCase {
	t.Helper()
	c := &rootlessCase{u: u, host: h, rootfs: busyboxRootfs(t)}
	require.NoError(t, chownTree(c.rootfs, u.uid, u.gid))
	reachable(t, c.rootfs, h.Root, h.ProcRoot, h.DevRoot)
	c.before = container.SnapshotTree(t, c.rootfs)
	return c
}

// check runs the container's checks, then those from outside: every
// entry created in the rootfs is the user's (the container's root), and
// the simulated host is as before.
func (c *rootlessCase) check(t *testing.T, out string, lib string, hostBefore container.Snapshot) {
	t.Helper()
	t.Logf("container output:\n%s", out)
	got := parseProbe(out)
	assert.Equal(t, "0|0", got["ids"], "ids in the container: want root, mapped to the user")
	assert.Contains(t, got["open0"], "No such device or address", "opening /dev/nvidia0: want ENXIO (opened)")
	assert.Contains(t, got["openctl"], "No such device or address", "opening /dev/nvidiactl: want ENXIO (opened)")
	assert.Equal(t, "libcuda.so."+c.host.DriverVersion, got["libcuda"], "libcuda.so.1 in %s", lib)
	assert.Equal(t, "exit 0", got["cudaprog"], "the program that needs libcuda.so.1")
	checkCreatedOwner(t, c.before, container.SnapshotTree(t, c.rootfs), c.u.uid, c.u.gid)
	assert.Empty(t, container.DiffSnapshots(hostBefore, container.SnapshotTree(t, c.host.Root)), "the simulated host's tree changed")
	assert.Empty(t, testutil.MountsBelow(t, c.rootfs), "mounts left below the rootfs")
	assert.Equal(t, "ModifyDeviceFiles: 0", got["params"], "the masked /proc/driver/nvidia/params")
	assert.Equal(t, "0:0", got["procowner"], "owner of the masked /proc/driver/nvidia/params: want the container's root")
}

// TestRootlessPodman runs podman 4.3 rootless, as an unprivileged user the
// test creates (subordinate ids in /etc/subuid and /etc/subgid, podman's
// user namespace made with newuidmap and newgidmap), and deletes the user
// afterwards:
//
//   - cdi: with the spec `nvidia-ctk cdi generate` wrote for a simulated
//     host, under crun and runc: our createContainer hooks run as the
//     container's root in the user namespace;
//   - hook: with our nvidia-container-runtime-hook as a prestart hook
//     (podman --hooks-dir), which runs in podman's user namespace: Apply
//     leaves out the device cgroup rules the kernel would refuse there
//     (before, the hook failed writing devices.allow and the container
//     did not start), and what it creates is the container root's.
//
// Inside, the GPU and control nodes open and the program that needs
// libcuda.so.1 runs; outside, what the start created in the rootfs is
// owned by the user, and the simulated host is unchanged. A rootless
// runtime binds each device from its own path on the host (it cannot
// mknod), so podman runs in a private mount namespace whose /dev has the
// simulated nodes (an overlay: the host's /dev is not changed).
func TestRootlessPodman(t *testing.T) {
	requirePodman(t, "crun")
	u := newRootlessUser(t)
	t.Run("cdi", func(t *testing.T) {
		for _, runtime := range []string{"crun", "runc"} {
			t.Run(runtime, func(t *testing.T) { runRootlessCDI(t, u, runtime) })
		}
	})
	t.Run("hook", func(t *testing.T) { runRootlessHook(t, u) })
}

// runRootlessCDI runs the CDI case with the kernel-procfs fixture (an OCI
// prestart hook, podman --hooks-dir) and disable-device-node-modification
// pointed at the simulated host's procfs, so that it has params to read
// and to mask.
func runRootlessCDI(t *testing.T, u *rootlessUser, runtime string) {
	requirePodman(t, runtime)
	cc := newCDICase(t, uniqueClass())
	cc.rewrite(t, func(s *cdispecs.Spec) {
		for _, h := range s.ContainerEdits.Hooks {
			if slices.Contains(h.Args, "disable-device-node-modification") {
				h.Args = append(h.Args, "--proc-root", cc.host.ProcRoot)
			}
		}
	})
	reachable(t, cc.hook)
	c := newRootlessCase(t, u, cc.host)
	hooksDir := t.TempDir()
	writeOCIHook(t, filepath.Join(hooksDir, "00-kernel-proc.json"), kernelProcHook(t, c.host, c.rootfs))
	reachable(t, hooksDir)
	hostBefore := container.SnapshotTree(t, c.host.Root)
	out, stderr, err := u.podman(t, runtime, podmanEnv{devRoot: c.host.DevRoot}, []string{"--hooks-dir", hooksDir},
		[]string{"--device", cc.qualified("0")}, c.rootfs, "/bin/busybox", "sh", "-c", rootlessScript("/usr/lib64"))
	require.NoError(t, err, "rootless podman run --device %s: %s", cc.qualified("0"), stderr)
	c.check(t, out, "/usr/lib64", hostBefore)
}

// runRootlessHook runs the container, where the host has the cgroup v1
// devices hierarchy, in a devices cgroup whose policy (allowing the GPU
// and control nodes, not nvidia-uvm) is the runtime's: our hook leaves it
// as it is, so the GPU opens and nvidia-uvm does not. On cgroup v2 the
// user's cgroup has no device program.
func runRootlessHook(t *testing.T, u *rootlessUser) {
	h := simHost(t, nil)
	c := newRootlessCase(t, u, h)
	hook := buildExample(t, "nvidia-container-runtime-hook", false)
	logFile := filepath.Join(u.home, "hook.log") // written by the hook, as the user
	config := hookConfig(t, h, []string{"debug = " + quote(logFile)})
	hooksDir := t.TempDir()
	writeOCIHook(t, filepath.Join(hooksDir, "00-kernel-proc.json"), kernelProcHook(t, h, c.rootfs))
	writeOCIHook(t, filepath.Join(hooksDir, "01-nvidia.json"), ourHook(hook, config, "prestart"))
	reachable(t, hook, config, hooksDir)
	cg := devicePolicyCgroup(t, u)
	var policy []byte
	if cg != "" {
		policy = readFile(t, filepath.Join(cg, "devices.list"))
	}
	hostBefore := container.SnapshotTree(t, h.Root)
	var env []string
	for _, e := range gpuEnv {
		env = append(env, "--env", e)
	}
	script := rootlessScript("/usr/lib/x86_64-linux-gnu") + "p openuvm 'busybox head -c1 /dev/nvidia-uvm'\n"
	out, stderr, err := u.podman(t, "crun", podmanEnv{devRoot: h.DevRoot, cgroup: cg}, []string{"--hooks-dir", hooksDir}, env,
		c.rootfs, "/bin/busybox", "sh", "-c", script)
	if err != nil {
		log, _ := os.ReadFile(logFile)
		require.NoError(t, err, "rootless podman run with our prestart hook (cgroup %q): %s\nhook log:\n%s", cg, stderr, log)
	}
	c.check(t, out, "/usr/lib/x86_64-linux-gnu", hostBefore)
	log := readFile(t, logFile)
	assert.Contains(t, string(log), "device cgroup left to the runtime: running in a user namespace",
		"the hook's log says it left the device cgroup to the runtime:\n%s", log)
	got := parseProbe(out)
	if cg != "" {
		assert.Contains(t, got["openuvm"], "Operation not permitted", "opening /dev/nvidia-uvm: want EPERM, the runtime's device policy")
		assert.Equal(t, string(policy), string(readFile(t, filepath.Join(cg, "devices.list"))), "the device policy of %s changed", cg)
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	return data
}

// writeOCIHook writes an OCI hooks 1.0.0 file (podman --hooks-dir) that
// runs h at prestart for every container.
func writeOCIHook(t *testing.T, file string, h specs.Hook) {
	t.Helper()
	data, err := json.Marshal(map[string]any{
		"version": "1.0.0", "hook": h, "when": map[string]bool{"always": true}, "stages": []string{"prestart"},
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, data, 0o644))
}
