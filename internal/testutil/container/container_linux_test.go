package container

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func nsIno(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(path, &st))
	return st.Ino
}

func readHostMountinfo(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	return string(data)
}

func TestStart(t *testing.T) {
	if !InPrivateMountNS(t) {
		return // the child compares mount tables in a namespace of its own
	}
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"hook-time", Options{Spec: "file etc/os-release \"ID=test\\n\"", MountProc: true}},
		{"pivoted", Options{Spec: "file etc/os-release \"ID=test\\n\"", MountProc: true, PivotRoot: true}},
		{"unprivileged-owner", Options{Spec: "dir etc", UID: 1234, GID: 4321}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hostMounts := readHostMountinfo(t)
			c := Start(t, &tc.opts)
			require.NotEqual(t, nsIno(t, "/proc/self/ns/mnt"), nsIno(t, c.NSPath()), "container shares the host mount namespace")
			assert.NotNil(t, c.MountAt(t, "/"), "rootfs %q is not a mount point in the container", c.Rootfs)
			if tc.opts.MountProc {
				if m := c.MountAt(t, "/proc"); assert.NotNil(t, m, "no procfs at %s/proc in the container", c.Rootfs) {
					assert.Equal(t, "proc", m.FSType, "no procfs at %s/proc in the container: %+v", c.Rootfs, m)
				}
			}
			checkOwner(t, c, tc.opts.UID, tc.opts.GID)
			if tc.opts.PivotRoot {
				out, err := c.Exec(t, "cat", "/etc/os-release")
				if assert.NoError(t, err, "cat /etc/os-release in the pivoted container") {
					assert.Equal(t, "ID=test\n", out, "cat /etc/os-release in the pivoted container")
				}
			}
			assert.Equal(t, hostMounts, readHostMountinfo(t), "host mount table changed")
		})
	}
}

func checkOwner(t *testing.T, c *Container, uid, gid int) {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat("/proc/"+itoa(c.PID), &st))
	assert.Equal(t, [2]int{uid, gid}, [2]int{int(st.Uid), int(st.Gid)}, "/proc/%d owner (uid, gid)", c.PID)
}

func TestPathSeesContainerMounts(t *testing.T) {
	c := Start(t, &Options{Spec: "dir mnt", MountProc: true})
	// A mount made inside the container is visible through Path, not on the host.
	out, err := c.Exec(t, "mount", "-t", "tmpfs", "tmpfs", c.Rootfs+"/mnt")
	require.NoError(t, err, "mount in container: %s", out)
	out, err = c.Exec(t, "touch", c.Rootfs+"/mnt/inside")
	require.NoError(t, err, "touch in container: %s", out)
	_, err = os.Stat(c.Path("mnt/inside"))
	assert.NoError(t, err, "file on the container's tmpfs not visible through Path")
	_, err = os.Stat(c.HostRootfs + "/mnt/inside")
	assert.Error(t, err, "file on the container's tmpfs visible on the host")
}

func TestSnapshotDetectsChanges(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(dir+"/a", []byte("x"), 0o644))
	before := SnapshotTree(t, dir)
	require.Empty(t, DiffSnapshots(before, SnapshotTree(t, dir)), "unchanged tree differs")
	require.NoError(t, os.WriteFile(dir+"/b", nil, 0o644))
	require.NoError(t, os.Chmod(dir+"/a", 0o600))
	d := strings.Join(DiffSnapshots(before, SnapshotTree(t, dir)), "\n")
	for _, want := range []string{"added b", "changed a:", "changed .:"} {
		assert.Contains(t, d, want, "diff")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestDenySyscalls(t *testing.T) {
	if !InChild(t) {
		return
	}
	require.NoError(t, DenySyscalls(unix.SYS_OPENAT2, unix.SYS_MOUNT_SETATTR))
	done := make(chan error)
	go func() { // another thread, started after the filter
		_, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH})
		done <- err
	}()
	assert.Equal(t, unix.ENOSYS, <-done, "openat2")
	assert.Equal(t, unix.ENOSYS, unix.MountSetattr(-1, "", unix.AT_EMPTY_PATH, &unix.MountAttr{}), "mount_setattr")
	_, err := os.Stat("/")
	assert.NoError(t, err, "other syscalls denied too")
}
