package nvcli_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvcli"
)

// TestContainerStandalone: without --pid, ROOTFS/proc must be the root
// of a procfs mount. Each rootfs is a test container's, seen from here
// through /proc/PID/root (its mounts included): a real procfs mounted
// there is accepted; what an image can ship (a tree of files shaped like
// /proc/<ppid>, a symlink to the host's /proc) and a bind of a procfs
// subdirectory are refused.
func TestContainerStandalone(t *testing.T) {
	fakeProc := "file proc/" + strconv.Itoa(os.Getppid()) + "/cgroup \"0::/host.slice\\n\"\nsymlink proc/" + strconv.Itoa(os.Getppid()) + "/ns/mnt /proc/1/ns/mnt\n"
	tests := []struct {
		name string
		opts container.Options
		bind bool // bind-mount the procfs's 1 dir over ROOTFS/proc
		err  string
	}{
		{"procfs mounted", container.Options{MountProc: true}, false, ""},
		{"a tree of files", container.Options{Spec: fakeProc}, false, "not procfs"},
		{"a symlink to the host's /proc", container.Options{Spec: "symlink proc /proc\n"}, false, "not procfs"},
		{"no proc", container.Options{Spec: "dir etc\n"}, false, "no such file"},
		{"a procfs subdirectory", container.Options{MountProc: true}, true, "not procfs's root directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := container.Start(t, &tt.opts)
			if tt.bind {
				out, err := c.Exec(t, "mount", "--bind", c.Rootfs+"/proc/1", c.Rootfs+"/proc")
				require.NoError(t, err, "bind: %s", out)
			}
			rootfs := c.Path("/")
			ctr, proc, err := nvcli.Container(0, rootfs)
			if tt.err == "" {
				require.NoError(t, err)
				assert.Equal(t, os.Getppid(), ctr.PID, "want the parent")
				assert.Equal(t, rootfs, ctr.Rootfs)
				assert.Equal(t, filepath.Join(rootfs, "proc"), proc, "want ROOTFS/proc")
				return
			}
			require.ErrorContains(t, err, tt.err, "got %+v, %q", ctr, proc)
			require.ErrorContains(t, err, "input error: standalone mode (no --pid)")
			if tt.err != "no such file" {
				assert.ErrorIs(t, err, nvcli.ErrNotProcfs)
			}
			_, _, err = nvcli.Container(os.Getpid(), rootfs)
			assert.NoError(t, err, "with a PID the rootfs's proc is not read")
		})
	}
}

func TestContainer(t *testing.T) {
	ctr, proc, err := nvcli.Container(42, "/run/ctr/rootfs")
	require.NoError(t, err, "--pid=42")
	assert.Equal(t, nvcontainer.Container{PID: 42, Rootfs: "/run/ctr/rootfs"}, ctr, "--pid=42")
	assert.Empty(t, proc, "--pid=42")
	// Standalone mode: TestContainerStandalone.
	for _, bad := range []string{"", "rootfs", "/", "//", "/.."} {
		t.Run(strconv.Quote(bad), func(t *testing.T) {
			_, _, err := nvcli.Container(1, bad)
			assert.ErrorIs(t, err, nvcontainer.ErrInvalidRootfs)
			assert.EqualError(t, err, "input error: invalid rootfs directory")
		})
	}
}

// TestCheckContainer: configure's checks before planning. As root, a
// process of this mount namespace (this test) is an input error; a child
// that dropped root gets the permission error first.
func TestCheckContainer(t *testing.T) {
	testutil.RequireRoot(t)
	err := nvcli.CheckContainer(nvcontainer.Container{PID: os.Getpid(), Rootfs: "/"}, "")
	var ce *nvcli.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, nvcli.PrefixInput, ce.Prefix, "%v", err)
	out, err := runAsNobody(t)
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "permission error: configure needs root (CAP_SYS_ADMIN); use --dry-run to see the plan\n"+
		"ErrPermission true, fs.ErrPermission true\n", string(out))
}

// runAsNobody runs a copy of the test binary (in a dir others can read)
// as uid and gid 65534, where TestMain runs checkUnprivileged, and
// returns its output.
func runAsNobody(t *testing.T) ([]byte, error) {
	self, err := os.Executable()
	require.NoError(t, err)
	dir, err := os.MkdirTemp("", "nvcli-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	data, err := os.ReadFile(self)
	require.NoError(t, err)
	bin := filepath.Join(dir, "nvcli.test")
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), checkUnprivilegedEnv+"=1")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	return cmd.CombinedOutput()
}

// checkUnprivilegedEnv makes TestMain run checkUnprivileged instead of
// the tests.
const checkUnprivilegedEnv = "NVCLI_TEST_CHECK_UNPRIVILEGED"

func TestMain(m *testing.M) {
	if os.Getenv(checkUnprivilegedEnv) == "1" {
		checkUnprivileged()
		return
	}
	os.Exit(m.Run())
}

// checkUnprivileged prints CheckContainer's error for a caller without
// root and what it matches.
func checkUnprivileged() {
	err := nvcli.CheckContainer(nvcontainer.Container{PID: 1, Rootfs: "/"}, "")
	fmt.Printf("%v\nErrPermission %v, fs.ErrPermission %v\n", err, errors.Is(err, nvcontainer.ErrPermission), errors.Is(err, fs.ErrPermission))
}
