package nvcontainer_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	assert.True(t, p.Layout.Debian, "as the process sees it: layout %+v", p.Layout)
	assert.True(t, p.CUDACompat.Used, "as the process sees it: compat %+v", p.CUDACompat)
	assert.Equal(t, "/usr/local/cuda/compat", p.CUDACompat.Dir, "as the process sees it: compat %+v", p.CUDACompat)
	assert.Equal(t, []string{"/usr/local/cuda/compat"}, p.LDCache.FirstDirs, "as the process sees it: first dirs")
	assert.False(t, hostPlan.Layout.Debian, "at its path: layout %+v", hostPlan.Layout)
	assert.False(t, hostPlan.CUDACompat.Used, "at its path: compat %+v", hostPlan.CUDACompat)
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
	require.NoError(t, err)
	hostPlan, err := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{Rootfs: rootfs}, opts)
	require.NoError(t, err)
	checkSeenByProcess(t, p, hostPlan)
	_, err = nvcontainer.NewPlan(h.host, req, nvcontainer.Container{PID: 78, Rootfs: rootfs}, opts)
	want := `container error: inspecting rootfs "` + rootfs + `" as process 78 sees it: open ` + filepath.Join(proc, "78/root", rootfs)
	require.Error(t, err, "unknown process")
	assert.True(t, strings.HasPrefix(err.Error(), want), "unknown process: %v, want %s...", err, want)
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
		out, err := c.Exec(t, "mount", "--bind", filepath.Join(vols, dir), filepath.Join(c.Rootfs, dir))
		require.NoError(t, err, "mounting a volume at %s:\n%s", dir, out)
	}
	_, err := os.Stat(filepath.Join(c.HostRootfs, "etc/debian_version"))
	require.Error(t, err, "the volume is visible from the host's mount namespace")
	req := compatRequest(request.CompatLdconfig)
	p, err := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{PID: c.PID, Rootfs: c.Rootfs}, nil)
	require.NoError(t, err)
	hostPlan, err := nvcontainer.NewPlan(h.host, req, nvcontainer.Container{Rootfs: c.HostRootfs}, nil)
	require.NoError(t, err)
	checkSeenByProcess(t, p, hostPlan)
}
