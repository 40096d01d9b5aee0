package nvcontainer

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// The test fixtures: a simulated 8-GPU host (internal/fakehost, real
// device nodes), plans for it built the way libnvidia-container lays files
// out (NewPlan), and busybox rootfs trees in
// Debian and Fedora layouts holding a program that needs libcuda.so.1.

// testHost is a generated host and what discovery found on it.
type testHost struct {
	*fakehost.Host
	host *Host
}

func newTestHost(tb testing.TB) *testHost {
	tb.Helper()
	return newTestHostWith(tb, &fakehost.Options{RealNodes: true})
}

// newTestHostWith generates a host with opts and discovers it (driver
// files and, through procfs, devices).
func newTestHostWith(tb testing.TB, opts *fakehost.Options) *testHost {
	tb.Helper()
	testutil.RequireRoot(tb)
	h, err := fakehost.Generate(tb.TempDir(), opts)
	require.NoError(tb, err)
	d, err := driver.Open(&driver.Options{Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}})
	require.NoError(tb, err)
	devs, err := devices.Discover(context.Background(), &devices.Options{Backend: devices.Procfs, Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}})
	require.NoError(tb, err)
	return &testHost{Host: h, host: &Host{Driver: d, Devices: devs}}
}

// layouts of the container rootfs, as NewPlan picks them.
var (
	debianLayout = Layout{Debian: true, LibDir: "/usr/lib/x86_64-linux-gnu", Lib32Dir: "/usr/lib/i386-linux-gnu", BinDir: "/usr/bin"}
	fedoraLayout = Layout{LibDir: "/usr/lib64", Lib32Dir: "/usr/lib32", BinDir: "/usr/bin"}
)

var (
	deviceOpts = []string{"ro", "nosuid", "noexec"}
	procOpts   = []string{"ro", "nosuid", "nodev", "noexec"}
)

// testPlan is NewPlan's plan for every capability and the first n GPUs of
// h, made for a rootfs of layout l (a template image; the plan fits every
// image of that layout).
func (h *testHost) testPlan(tb testing.TB, l Layout, n int) *Plan {
	tb.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	visible := strings.Join(ids, ",")
	if n == 0 {
		visible = "none"
	}
	req, err := request.FromEnv([]string{"NVIDIA_VISIBLE_DEVICES=" + visible, "NVIDIA_DRIVER_CAPABILITIES=all"})
	require.NoError(tb, err)
	p, err := NewPlan(h.host, req, Container{Rootfs: newRootfs(tb, l)}, nil)
	require.NoError(tb, err)
	require.Equal(tb, l.LibDir, p.Layout.LibDir, "NewPlan chose the layout %+v, want %+v", p.Layout, l)
	require.Equal(tb, l.BinDir, p.Layout.BinDir, "NewPlan chose the layout %+v, want %+v", p.Layout, l)
	return p
}

// cudaProg is a program that only exits 0, if the dynamic loader finds
// libcuda.so.1 (and, through it, libc.so.6): testutil.AddCUDAProgram's.
const cudaProg = testutil.CUDAProgram

// rootfsSpec is the image: Debian's has /etc/debian_version and the
// multiarch ld.so.conf; Fedora's lists /usr/lib64 in ld.so.conf, which
// Debian's loader (the one copied in) does not search by itself.
func rootfsSpec(l Layout) string {
	spec := "dir tmp\ndir proc\ndir dev\ndir usr/bin\nfile etc/ld.so.cache \"\"\n"
	if l.Debian {
		return spec + "file etc/debian_version \"12.5\\n\"\n" +
			"file etc/ld.so.conf \"include /etc/ld.so.conf.d/*.conf\\n\"\n" +
			"file etc/ld.so.conf.d/x86_64-linux-gnu.conf \"/usr/local/lib/x86_64-linux-gnu\\n/lib/x86_64-linux-gnu\\n/usr/lib/x86_64-linux-gnu\\n\"\n" +
			"dir usr/lib/x86_64-linux-gnu\n"
	}
	return spec + "file etc/redhat-release \"Fedora release 40\\n\"\n" +
		"file etc/ld.so.conf \"/usr/lib64\\n\"\n" + "dir usr/lib64\n"
}

// newRootfs builds an image of layout l in a new temp dir, with the
// host's loader and libc and cudaProg.
func newRootfs(tb testing.TB, l Layout) string {
	tb.Helper()
	dir := tb.TempDir()
	testutil.BuildTree(tb, dir, rootfsSpec(l))
	testutil.AddCUDAProgram(tb, dir)
	return dir
}

// startIn starts a test container on a new rootfs of layout l, pivoted or
// as an OCI hook sees it.
func startIn(tb testing.TB, l Layout, pivot bool) *container.Container {
	tb.Helper()
	return container.Start(tb, &container.Options{Rootfs: newRootfs(tb, l), PivotRoot: pivot})
}

func ctrOf(c *container.Container) Container {
	return Container{PID: c.PID, Rootfs: c.Rootfs}
}

// runProg runs cudaProg in c and returns its exit status.
func runProg(tb testing.TB, c *container.Container) (int, string) {
	tb.Helper()
	out, err := c.Exec(tb, "sh", "-c", fmt.Sprintf("chroot %s %s; echo rc=$?", c.Rootfs, cudaProg))
	require.NoError(tb, err, "running %s: %s", cudaProg, out)
	require.Contains(tb, out, "rc=", "no exit status")
	var rc int
	i := strings.LastIndex(out, "rc=")
	fmt.Sscanf(out[i:], "rc=%d", &rc)
	return rc, out
}
