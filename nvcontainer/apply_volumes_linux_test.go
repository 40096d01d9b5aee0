package nvcontainer

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// volumeSpec is a host directory a runtime gives a container as a volume.
const volumeSpec = `file libfoo.so.1 "host library"
file notes "host file"
dir  sub
`

// volumeCase is a mount the runtime made in the container over a target
// directory of the plan.
type volumeCase struct {
	name  string
	tmpfs bool                                                         // the host directory is a tmpfs, mounted before the container starts
	dir   string                                                       // the target directory it covers, in the rootfs
	mount func(t *testing.T, c *container.Container, host, dir string) // makes the mount, in the container
	plan  func(t *testing.T, h *testHost) *Plan
	is    error // Apply must fail with it; nil: succeed
}

// TestApplyVolumes: Apply creates nothing in a volume (a host directory,
// a host tmpfs bind-mounted into the container), where it would stay on
// the host, and says which volume; it still creates device placeholders in
// a tmpfs the runtime made for the container (/dev), and mounts onto a
// file that is already in a volume. On a refusal, the volume's host
// directory, the host's mount table and the container are unchanged.
func TestApplyVolumes(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	h := newTestHost(t)
	full := func(t *testing.T, h *testHost) *Plan { return h.testPlan(t, debianLayout, 2) }
	lib := debianLayout.LibDir
	cases := []volumeCase{
		{name: "host-dir-over-libdir", dir: lib, mount: bindHost, plan: full, is: ErrVolume},
		{name: "host-dir-over-dev", dir: "/dev", mount: bindHost, plan: full, is: ErrVolume},
		{name: "host-tmpfs-over-dev", dir: "/dev", tmpfs: true, mount: bindHost, plan: full, is: ErrVolume},
		{name: "host-dir-existing-file", dir: lib, mount: bindHost, plan: existingFilePlan},
		{name: "fresh-tmpfs-over-dev", dir: "/dev", mount: freshTmpfs, plan: full},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, h) })
	}
}

func (tc *volumeCase) run(t *testing.T, h *testHost) {
	p := tc.plan(t, h)
	host := testutil.Tree(t, volumeSpec)
	if tc.tmpfs {
		mountHostTmpfs(t, host)
	}
	c := startIn(t, debianLayout, false)
	tc.mount(t, c, host, filepath.Join(c.Rootfs, tc.dir))
	state := recordHost(t, host)
	before, tree := c.MountInfo(t), layoutOf(t, c.HostRootfs)
	err := p.Apply(context.Background(), ctrOf(c), nil)
	state.check(t)
	if tc.is == nil {
		require.NoError(t, err, "Apply")
		return
	}
	t.Logf("Apply: %v", err)
	if assert.ErrorIs(t, err, tc.is, "Apply, want %v naming the volume at %q", tc.is, tc.dir) {
		assert.ErrorContains(t, err, "volume mounted at "+strconv.Quote(tc.dir), "Apply, want %v naming the volume at %q", tc.is, tc.dir)
	}
	assert.Empty(t, newMounts(before, c.MountInfo(t)), "a refused Apply changed the container: mounts")
	assert.Equal(t, tree, layoutOf(t, c.HostRootfs), "a refused Apply changed the container's tree")
}

// bindHost bind-mounts host over dir in the container.
func bindHost(t *testing.T, c *container.Container, host, dir string) {
	t.Helper()
	containerExec(t, c, "mount", "--bind", host, dir)
}

// mountHostTmpfs mounts a tmpfs on host in the host's namespace (as a
// runtime's /dev/shm or a Kubernetes secret volume), whose root bindHost
// then gives the container.
func mountHostTmpfs(t *testing.T, host string) {
	t.Helper()
	require.NoError(t, unix.Mount("tmpfs", host, "tmpfs", 0, "mode=755"))
	t.Cleanup(func() { unix.Unmount(host, unix.MNT_DETACH) })
}

// freshTmpfs mounts a new tmpfs over dir, as runc does on /dev.
func freshTmpfs(t *testing.T, c *container.Container, _, dir string) {
	t.Helper()
	containerExec(t, c, "mount", "-t", "tmpfs", "-o", "mode=755", "tmpfs", dir)
}

func containerExec(t *testing.T, c *container.Container, args ...string) {
	t.Helper()
	out, err := c.Exec(t, args...)
	require.NoError(t, err, "%q in the container: %s", args, out)
}

// existingFilePlan mounts a host library onto libfoo.so.1, which the
// volume already has: nothing is created there.
func existingFilePlan(t *testing.T, _ *testHost) *Plan {
	src := testutil.Tree(t, `file lib "driver library"`)
	return &Plan{Version: PlanVersion, Mounts: []Mount{{Kind: MountLibrary, Source: filepath.Join(src, "lib"),
		Target: debianLayout.LibDir + "/libfoo.so.1", Options: []string{"ro", "nosuid", "nodev"}}}}
}

// TestApplySharedVolume: a volume with shared propagation, a peer of a
// host mount, over a target directory. A mount there would propagate to
// the host (and stay there after the container is gone); Apply refuses
// it, naming the volume, and the host's mount table is unchanged.
func TestApplySharedVolume(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	host := testutil.Tree(t, volumeSpec)
	for _, args := range [][]string{{"--bind", host, host}, {"--make-shared", host}} {
		out, err := exec.Command(testutil.RequireCommand(t, "mount"), args...).CombinedOutput()
		require.NoError(t, err, "mount %q: %s", args, out)
	}
	t.Cleanup(func() { unix.Unmount(host, unix.MNT_DETACH) })
	rootfs := newRootfs(t, debianLayout)
	pid := startPeerContainer(t)
	lib := filepath.Join(rootfs, debianLayout.LibDir)
	nsenter(t, pid, "mount", "--bind", host, lib)
	state := recordHost(t, host)
	err := existingFilePlan(t, nil).Apply(context.Background(), Container{PID: pid, Rootfs: rootfs}, nil)
	state.check(t)
	t.Logf("Apply: %v", err)
	if assert.ErrorIs(t, err, ErrSharedMount, "Apply, want ErrSharedMount naming the volume at %q", debianLayout.LibDir) {
		assert.ErrorContains(t, err, "mount at "+strconv.Quote(debianLayout.LibDir), "Apply, want ErrSharedMount naming the volume")
	}
}

// startPeerContainer starts a process in a new mount namespace that keeps
// the host's propagation (unshare --propagation unchanged): its copy of a
// shared host mount is that mount's peer. It is stopped when t ends.
func startPeerContainer(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(testutil.RequireCommand(t, "unshare"), "--mount", "--propagation", "unchanged",
		container.Busybox, "sh", "-c", "echo ready; read x")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	require.Equal(t, "ready\n", line, "peer container did not start")
	return cmd.Process.Pid
}

func nsenter(t *testing.T, pid int, args ...string) {
	t.Helper()
	argv := append([]string{"-t", strconv.Itoa(pid), "-m", container.Busybox}, args...)
	out, err := exec.Command(testutil.RequireCommand(t, "nsenter"), argv...).CombinedOutput()
	require.NoError(t, err, "nsenter %q: %s", args, out)
}
