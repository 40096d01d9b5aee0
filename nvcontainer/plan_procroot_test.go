package nvcontainer_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// volumeView is what the container's process sees in its rootfs once the
// runtime has mounted volumes at /etc and /usr/local/cuda: a Debian image
// with a CUDA 12.8 compat dir.
const volumeView = `
file etc/debian_version "12.5\n"
file usr/local/cuda/compat/libcuda.so.570.86.10 "ELF"
`

// checkSeenByProcess fails t unless p was made from volumeView (Debian
// layout, compat libraries used) and hostPlan from the Fedora tree at the
// rootfs's own path.
func checkSeenByProcess(t *testing.T, p, hostPlan *nvcontainer.Plan) {
	t.Helper()
	if !p.Layout.Debian || !p.CUDACompat.Used || p.CUDACompat.Dir != "/usr/local/cuda/compat" ||
		len(p.LDCache.FirstDirs) != 1 || p.LDCache.FirstDirs[0] != "/usr/local/cuda/compat" {
		t.Errorf("as the process sees it: layout %+v, compat %+v, first dirs %v", p.Layout, p.CUDACompat, p.LDCache.FirstDirs)
	}
	if hostPlan.Layout.Debian || hostPlan.CUDACompat.Used {
		t.Errorf("at its path: layout %+v, compat %+v", hostPlan.Layout, hostPlan.CUDACompat)
	}
}

// TestPlanProcRoot: with a PID, the rootfs is inspected through
// <ProcRoot>/<PID>/root, here a stand-in procfs whose process 77 sees
// another tree at the rootfs's path; without a PID, at its path.
func TestPlanProcRoot(t *testing.T) {
	h := newTestHost(t, nil)
	rootfs := testutil.Tree(t, fedoraRootfs+"dir usr/local/cuda\n")
	seen := t.TempDir()
	testutil.BuildTree(t, filepath.Join(seen, rootfs), volumeView)
	proc := testutil.Tree(t, "symlink 77/root "+seen)
	req := compatRequest(request.CompatLdconfig)
	opts := &nvcontainer.PlanOptions{ProcRoot: proc}
	p, err := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{PID: 77, Rootfs: rootfs}, opts)
	if err != nil {
		t.Fatal(err)
	}
	hostPlan, err := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{Rootfs: rootfs}, opts)
	if err != nil {
		t.Fatal(err)
	}
	checkSeenByProcess(t, p, hostPlan)
	_, err = nvcontainer.NewPlan(h.host, req, nvcontainer.Container{PID: 78, Rootfs: rootfs}, opts)
	want := `container error: inspecting rootfs "` + rootfs + `" as process 78 sees it: open ` + filepath.Join(proc, "78/root", rootfs)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("unknown process: %v", err)
	}
}

// TestPlanSeesContainerMounts: in a live container (its own mount
// namespace, before pivot_root, as a prestart hook finds it) the runtime
// has mounted volumes at /etc and /usr/local/cuda; the plan for its PID
// sees them through /proc/PID/root, the host's view of the same path does
// not.
func TestPlanSeesContainerMounts(t *testing.T) {
	h := newTestHost(t, nil)
	c := container.Start(t, &container.Options{Spec: fedoraRootfs + "dir usr/local/cuda\n"})
	vols := testutil.Tree(t, volumeView)
	for _, dir := range []string{"etc", "usr/local/cuda"} {
		if out, err := c.Exec(t, "mount", "--bind", filepath.Join(vols, dir), filepath.Join(c.Rootfs, dir)); err != nil {
			t.Fatalf("mounting a volume at %s: %v\n%s", dir, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(c.HostRootfs, "etc/debian_version")); err == nil {
		t.Fatal("the volume is visible from the host's mount namespace")
	}
	req := compatRequest(request.CompatLdconfig)
	p, err := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{PID: c.PID, Rootfs: c.Rootfs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hostPlan, err := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{Rootfs: c.HostRootfs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSeenByProcess(t, p, hostPlan)
}
