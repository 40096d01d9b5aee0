package nvcontainer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

// devicesCgroup is a fresh cgroup v1 devices cgroup that denies every
// device; it is removed when the test ends.
type devicesCgroup string

func newDevicesCgroup(tb testing.TB) devicesCgroup {
	tb.Helper()
	testutil.RequireRoot(tb)
	if b, err := os.ReadFile("/proc/devices"); err == nil && strings.Contains(string(b), "\n195 ") {
		testutil.Unavailable(tb, "major 195 has a driver here; the EPERM/ENXIO test needs none")
	}
	mounts, err := mountinfo.GetMounts(func(m *mountinfo.Info) (bool, bool) {
		return m.FSType != "cgroup" || !strings.Contains(m.VFSOptions, "devices"), false
	})
	if err != nil || len(mounts) == 0 {
		testutil.Unavailable(tb, "needs a cgroup v1 devices hierarchy (%v)", err)
	}
	var b [6]byte
	rand.Read(b[:])
	dir := filepath.Join(mounts[0].Mountpoint, "nvc-apply-"+hex.EncodeToString(b[:]))
	require.NoError(tb, os.Mkdir(dir, 0o755))
	tb.Cleanup(func() { os.Remove(dir) })
	cg := devicesCgroup(dir)
	cg.write(tb, "devices.deny", "a")
	return cg
}

func (cg devicesCgroup) write(tb testing.TB, name, line string) {
	tb.Helper()
	require.NoError(tb, os.WriteFile(filepath.Join(string(cg), name), []byte(line), 0), "writing %q to %s", line, name)
}

func (cg devicesCgroup) list(tb testing.TB) string {
	tb.Helper()
	return readFile(tb, filepath.Join(string(cg), "devices.list"))
}

// open opens path for reading with busybox head from inside the cgroup
// and returns what went wrong ("ok" if nothing). With c, the process runs
// inside c's namespaces and path is inside its rootfs.
func (cg devicesCgroup) open(tb testing.TB, c *container.Container, path string) string {
	tb.Helper()
	cmd := container.Busybox + " head -c 1 " + path
	if c != nil {
		bb := container.Busybox
		if c.Rootfs == "/" {
			bb = "/" + container.InnerBusybox
		}
		cmd = "nsenter -t " + strconv.Itoa(c.PID) + " -m -p -r -w " + bb + " head -c 1 " + filepath.Join(c.Rootfs, path)
	}
	script := "echo $$ > " + filepath.Join(string(cg), "cgroup.procs") + " && exec " + cmd
	out, err := exec.Command(container.Busybox, "sh", "-c", script).CombinedOutput()
	switch s := string(out); {
	case err == nil:
		return "ok"
	case strings.Contains(s, "Operation not permitted"):
		return "EPERM"
	case strings.Contains(s, "No such device or address"):
		return "ENXIO"
	default:
		return s
	}
}

// TestApplyCgroupRules puts a container in a devices cgroup that denies
// everything and applies a plan for GPUs 0 and 1: opening their nodes then
// fails with ENXIO (allowed, no driver behind major 195) instead of EPERM,
// while GPU 5 stays EPERM.
func TestApplyCgroupRules(t *testing.T) {
	h := newTestHost(t)
	cg := newDevicesCgroup(t)
	c := startIn(t, fedoraLayout, true)
	cg.write(t, "cgroup.procs", strconv.Itoa(c.PID))
	gpu0, gpu5 := filepath.Join(h.DevRoot, "nvidia0"), filepath.Join(h.DevRoot, "nvidia5")
	require.Equal(t, "EPERM", cg.open(t, nil, gpu0), "before Apply, opening nvidia0 in the cgroup")
	p := h.testPlan(t, fedoraLayout, 2)
	require.NoError(t, p.Apply(context.Background(), ctrOf(c), nil))
	assert.Contains(t, cg.list(t), "c 195:0 rw", "devices.list")
	for path, want := range map[string]string{"/dev/nvidia0": "ENXIO", "/dev/nvidia1": "ENXIO", "/dev/nvidiactl": "ENXIO"} {
		assert.Equal(t, want, cg.open(t, c, path), "opening %s inside the container", path)
	}
	assert.Equal(t, "EPERM", cg.open(t, nil, gpu5), "opening nvidia5 (not planned)")
}
