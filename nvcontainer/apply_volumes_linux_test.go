package nvcontainer

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		return
	}
	t.Logf("Apply: %v", err)
	if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), "volume mounted at "+strconv.Quote(tc.dir)) {
		t.Errorf("Apply = %v, want %v naming the volume at %q", err, tc.is, tc.dir)
	}
	if added := newMounts(before, c.MountInfo(t)); len(added) > 0 || layoutOf(t, c.HostRootfs) != tree {
		t.Errorf("a refused Apply changed the container: mounts %q", added)
	}
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
	if err := unix.Mount("tmpfs", host, "tmpfs", 0, "mode=755"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(host, unix.MNT_DETACH) })
}

// freshTmpfs mounts a new tmpfs over dir, as runc does on /dev.
func freshTmpfs(t *testing.T, c *container.Container, _, dir string) {
	t.Helper()
	containerExec(t, c, "mount", "-t", "tmpfs", "-o", "mode=755", "tmpfs", dir)
}

func containerExec(t *testing.T, c *container.Container, args ...string) {
	t.Helper()
	if out, err := c.Exec(t, args...); err != nil {
		t.Fatalf("%q in the container: %v: %s", args, err, out)
	}
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
		if out, err := exec.Command(testutil.RequireCommand(t, "mount"), args...).CombinedOutput(); err != nil {
			t.Fatalf("mount %q: %v: %s", args, err, out)
		}
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
	if !errors.Is(err, ErrSharedMount) || !strings.Contains(err.Error(), "mount at "+strconv.Quote(debianLayout.LibDir)) {
		t.Errorf("Apply = %v, want ErrSharedMount naming the volume at %q", err, debianLayout.LibDir)
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
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("peer container did not start: %q", line)
	}
	return cmd.Process.Pid
}

func nsenter(t *testing.T, pid int, args ...string) {
	t.Helper()
	argv := append([]string{"-t", strconv.Itoa(pid), "-m", container.Busybox}, args...)
	if out, err := exec.Command(testutil.RequireCommand(t, "nsenter"), argv...).CombinedOutput(); err != nil {
		t.Fatalf("nsenter %q: %v: %s", args, err, out)
	}
}
