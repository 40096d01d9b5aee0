package nvcontainer

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// The test fixtures: a simulated 8-GPU host (internal/fakehost, real
// device nodes), plans for it built the way libnvidia-container lays files
// out (until NewPlan lands, by hand here), and busybox rootfs trees in
// Debian and Fedora layouts holding a program that needs libcuda.so.1.

// testHost is a generated host and what discovery found on it.
type testHost struct {
	*fakehost.Host
	files *driver.Files
	devs  *devices.Host
}

func newTestHost(tb testing.TB) *testHost {
	tb.Helper()
	testutil.RequireRoot(tb)
	h, err := fakehost.Generate(tb.TempDir(), &fakehost.Options{RealNodes: true})
	if err != nil {
		tb.Fatal(err)
	}
	d, err := driver.Open(&driver.Options{Root: h.Root, ProcRoot: h.ProcRoot, DevRoot: h.DevRoot})
	if err != nil {
		tb.Fatal(err)
	}
	files, err := d.Files(capabilities.All)
	if err != nil {
		tb.Fatal(err)
	}
	devs, err := devices.Discover(&devices.Options{Backend: devices.Procfs, DriverRoot: h.Root, ProcRoot: h.ProcRoot, DevRoot: h.DevRoot})
	if err != nil {
		tb.Fatal(err)
	}
	return &testHost{Host: h, files: files, devs: devs}
}

// layouts of the container rootfs.
var (
	debianLayout = Layout{Debian: true, LibDir: "/usr/lib/x86_64-linux-gnu", Lib32Dir: "/usr/lib/i386-linux-gnu", BinDir: "/usr/bin"}
	fedoraLayout = Layout{LibDir: "/usr/lib64", Lib32Dir: "/usr/lib32", BinDir: "/usr/bin"}
)

var (
	fileOpts   = []string{"ro", "nosuid", "nodev"}
	deviceOpts = []string{"ro", "nosuid", "noexec"}
	procOpts   = []string{"ro", "nosuid", "nodev", "noexec"}
	ipcOpts    = []string{"nosuid", "nodev", "noexec"}
)

// testPlan plans every capability and the first n GPUs of h for a rootfs
// with layout l.
func (h *testHost) testPlan(tb testing.TB, l Layout, n int) *Plan {
	tb.Helper()
	p := &Plan{Version: PlanVersion, Layout: l, Capabilities: capabilities.All,
		Driver: PlanDriver{Root: h.Root, Version: h.DriverVersion}}
	p.Tmpfs = []Tmpfs{h.procTmpfs(tb)}
	h.addFiles(tb, p)
	h.addNodes(p, h.devs.ControlNodes)
	for _, g := range h.devs.GPUs[:n] {
		p.GPUs = append(p.GPUs, PlannedGPU{Index: g.Index, Minor: g.Minor, UUID: g.UUID, BusID: g.BusID})
		p.Tmpfs[0].Mounts = append(p.Tmpfs[0].Mounts, Mount{Kind: MountProc, Source: h.devs.HostPath(g.ProcDir),
			Target: g.ProcDir, Options: procOpts, Dir: true})
		h.addNodes(p, []devices.Node{g.Node})
	}
	p.LDCache.Dirs = []string{l.LibDir, l.Lib32Dir}
	return p
}

func (h *testHost) procTmpfs(tb testing.TB) Tmpfs {
	tb.Helper()
	t := Tmpfs{Target: "/proc/driver/nvidia", Mode: 0o555, Options: []string{"nosuid", "nodev", "noexec"}}
	for _, name := range []string{"params", "version", "registry"} {
		b, err := os.ReadFile(filepath.Join(h.ProcRoot, "driver/nvidia", name))
		if err != nil {
			tb.Fatal(err)
		}
		if name == "params" {
			b = []byte(strings.ReplaceAll(string(b), "ModifyDeviceFiles: 1", "ModifyDeviceFiles: 0"))
		}
		t.Files = append(t.Files, TmpfsFile{Name: name, Mode: 0o444, Content: string(b)})
	}
	return t
}

func (h *testHost) addFiles(tb testing.TB, p *Plan) {
	tb.Helper()
	l := p.Layout
	add := func(kind MountKind, fs []driver.File, dir func(driver.File) string, opts []string) {
		for _, f := range fs {
			st, err := os.Stat(f.HostPath)
			if err != nil {
				tb.Fatal(err)
			}
			p.Mounts = append(p.Mounts, Mount{Kind: kind, Source: f.HostPath, Target: dir(f), Options: opts, Dir: st.IsDir()})
			if f.Soname != "" && f.Soname != path.Base(f.Path) {
				p.Symlinks = append(p.Symlinks, Symlink{Path: path.Join(path.Dir(dir(f)), f.Soname), Target: path.Base(f.Path)})
			}
		}
	}
	in := func(d string) func(driver.File) string {
		return func(f driver.File) string { return path.Join(d, path.Base(f.Path)) }
	}
	at := func(f driver.File) string { return f.ContainerPath }
	add(MountBinary, h.files.Binaries, in(l.BinDir), fileOpts)
	add(MountLibrary, h.files.Libraries, in(l.LibDir), fileOpts)
	add(MountLibrary32, h.files.Libraries32, in(l.Lib32Dir), fileOpts)
	add(MountFirmware, h.files.Firmware, at, fileOpts)
	add(MountConfig, h.files.Configs, at, fileOpts)
	add(MountIPC, h.files.IPCs, at, ipcOpts)
	p.Symlinks = append(p.Symlinks, Symlink{Path: path.Join(l.LibDir, "libcuda.so"), Target: "libcuda.so.1"})
	p.Symlinks = slices.CompactFunc(p.Symlinks, func(a, b Symlink) bool { return a.Path == b.Path })
}

func (h *testHost) addNodes(p *Plan, nodes []devices.Node) {
	for _, n := range nodes {
		p.Mounts = append(p.Mounts, Mount{Kind: MountDevice, Source: h.devs.HostPath(n.Path), Target: n.Path,
			Options: deviceOpts, Device: &DeviceNumber{Major: n.Major, Minor: n.Minor}})
		p.CgroupRules = append(p.CgroupRules, DeviceRule{Type: "c", Major: n.Major, Minor: n.Minor, Access: "rw"})
	}
}

// cudaProg is a program that only exits 0, if the dynamic loader finds
// libcuda.so.1 (and, through it, libc.so.6).
const cudaProg = "/cudaprog"

// hostLoader and hostLibc are copied into every test rootfs: the program's
// interpreter, and what the fake libcuda needs.
const (
	hostLoader = "/lib64/ld-linux-x86-64.so.2"
	hostLibc   = "/lib/x86_64-linux-gnu/libc.so.6"
)

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

// newRootfs builds an image of layout l in a new temp dir.
func newRootfs(tb testing.TB, l Layout) string {
	tb.Helper()
	dir := tb.TempDir()
	testutil.BuildTree(tb, dir, rootfsSpec(l))
	copyHostFile(tb, hostLoader, filepath.Join(dir, hostLoader), 0o755)
	copyHostFile(tb, hostLibc, filepath.Join(dir, hostLibc), 0o755)
	prog := &elfwriter.Object{Interp: hostLoader, Needed: []string{"libcuda.so.1"}}
	if err := elfwriter.WriteFile(filepath.Join(dir, cudaProg), prog, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func copyHostFile(tb testing.TB, src, dst string, perm os.FileMode) {
	tb.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		testutil.Unavailable(tb, "needs the host's %s: %v", src, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(dst, data, perm); err != nil {
		tb.Fatal(err)
	}
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
	if err != nil {
		tb.Fatalf("running %s: %v: %s", cudaProg, err, out)
	}
	var rc int
	i := strings.LastIndex(out, "rc=")
	if i < 0 {
		tb.Fatalf("no exit status in %q", out)
	}
	fmt.Sscanf(out[i:], "rc=%d", &rc)
	return rc, out
}
