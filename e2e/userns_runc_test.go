//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// usernsRoot is the host uid and gid of root in the user-namespaced
// containers, mapped with 65536 ids.
const usernsRoot = 100000

// usernsScript prints, from inside, the container user's ids, whether it
// can open the injected node (ENXIO: allowed by the mode and the device
// cgroup, no driver behind it), the owner of the masked
// /proc/driver/nvidia files, the libcuda link and the program that needs
// libcuda.so.1 through the loader cache.
const usernsScript = "cd /\n" + probeFunc + `
p ids 'busybox id -u; busybox id -g'
p open0 'busybox head -c1 /dev/nvidia0'
p opengpu2 'busybox head -c1 /dev/nvidia2'
p openctl 'busybox head -c1 /dev/nvidiactl'
p procowner 'busybox stat -c "%u:%g" /proc/driver/nvidia /proc/driver/nvidia/params /proc/driver/nvidia/gpus'
p params 'busybox grep ModifyDeviceFiles /proc/driver/nvidia/params'
p libcuda 'busybox readlink /usr/lib/x86_64-linux-gnu/libcuda.so.1'
p cudaprog '/cudaprog; echo "exit $?"'
`

// TestUserNamespaceRunc runs runc (as root) with a user namespace, the
// container's root mapped to host uid and gid 100000 (65536 ids), and our
// hook at prestart on a simulated DGX A100, the rootfs owned by the mapped
// root as a user-namespaced image is. From inside, root opens the
// injected nodes and runs the program that needs libcuda.so.1; the masked
// /proc/driver/nvidia is the container root's. From outside, everything
// the start created in the rootfs (placeholders, parent dirs, links,
// ld.so.cache) is owned by 100000:100000, never by the host's root, and
// the simulated host's tree and mounts are unchanged.
//
// Before the hook created files as the container's owner (setfsuid), it
// could not create its placeholders in runc's /dev at all: that tmpfs
// belongs to the container's user namespace, where the host's root is
// unmapped (EOVERFLOW); its /proc/driver/nvidia tmpfs was the host
// root's (65534:65534 inside).
func TestUserNamespaceRunc(t *testing.T) {
	rt := requireRuntime(t, "runc")
	host := simHost(t, nil)
	hook := buildExample(t, "nvidia-container-runtime-hook", false)
	config := hookConfig(t, host, nil)
	rootfs := busyboxRootfs(t)
	require.NoError(t, chownTree(rootfs, usernsRoot, usernsRoot))
	reachable(t, rootfs)
	hooks := &specs.Hooks{Prestart: []specs.Hook{kernelProcHook(t, host, rootfs), ourHook(hook, config, "prestart")}}
	bundle := newBundle(t, rootfs, usernsScript, gpuEnv, hooks)
	editBundle(t, bundle, func(s *specs.Spec) {
		s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace})
		s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: usernsRoot, Size: 65536}}
		s.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: usernsRoot, Size: 65536}}
	})
	hostBefore, mountsBefore := container.SnapshotTree(t, host.Root), testutil.MountsBelow(t, host.Root)
	before := container.SnapshotTree(t, rootfs)

	out, stderr, code := rt.run(t, bundle, "nvc-userns-"+randomHex(), "", "")
	require.Equal(t, 0, code, "runc run with a user namespace: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	t.Logf("container output:\n%s", out)
	got := parseProbe(out)
	checks := []struct {
		key, want string
		ok        bool
	}{
		{"ids", "0|0: the container's root", got["ids"] == "0|0"},
		{"open0", "ENXIO: opened (mode and device cgroup allow it)", strings.Contains(got["open0"], "No such device or address")},
		{"opengpu2", "ENXIO: opened", strings.Contains(got["opengpu2"], "No such device or address")},
		{"openctl", "ENXIO: opened", strings.Contains(got["openctl"], "No such device or address")},
		{"procowner", "0:0 three times: the masked files are the container root's", got["procowner"] == "0:0|0:0|0:0"},
		{"params", "ModifyDeviceFiles: 0", got["params"] == "ModifyDeviceFiles: 0"},
		{"libcuda", "libcuda.so." + host.DriverVersion, got["libcuda"] == "libcuda.so."+host.DriverVersion},
		{"cudaprog", "exit 0: the loader found libcuda.so.1 through our cache", got["cudaprog"] == "exit 0"},
	}
	for _, ck := range checks {
		assert.True(t, ck.ok, "in the container, %s = %q; want %s", ck.key, got[ck.key], ck.want)
	}
	checkCreatedOwner(t, before, container.SnapshotTree(t, rootfs), usernsRoot, usernsRoot)
	checkCacheListsLibcuda(t, rootfs, "/usr/lib/x86_64-linux-gnu")
	assert.Empty(t, container.DiffSnapshots(hostBefore, container.SnapshotTree(t, host.Root)), "the simulated host's tree changed")
	assert.Equal(t, mountsBefore, testutil.MountsBelow(t, host.Root), "mounts below the simulated host")
	assert.Empty(t, testutil.MountsBelow(t, rootfs), "mounts left below the rootfs")
}
