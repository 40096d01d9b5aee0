package container

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func nsIno(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

func readHostMountinfo(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
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
			if nsIno(t, c.NSPath()) == nsIno(t, "/proc/self/ns/mnt") {
				t.Fatal("container shares the host mount namespace")
			}
			if m := c.MountAt(t, "/"); m == nil {
				t.Errorf("rootfs %q is not a mount point in the container", c.Rootfs)
			}
			if tc.opts.MountProc {
				if m := c.MountAt(t, "/proc"); m == nil || m.FSType != "proc" {
					t.Errorf("no procfs at %s/proc in the container: %+v", c.Rootfs, m)
				}
			}
			checkOwner(t, c, tc.opts.UID, tc.opts.GID)
			if tc.opts.PivotRoot {
				out, err := c.Exec(t, "cat", "/etc/os-release")
				if err != nil || out != "ID=test\n" {
					t.Errorf("cat /etc/os-release in the pivoted container = %q, %v", out, err)
				}
			}
			if after := readHostMountinfo(t); after != hostMounts {
				t.Errorf("host mount table changed:\nbefore:\n%s\nafter:\n%s", hostMounts, after)
			}
		})
	}
}

func checkOwner(t *testing.T, c *Container, uid, gid int) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/"+itoa(c.PID), &st); err != nil {
		t.Fatal(err)
	}
	if int(st.Uid) != uid || int(st.Gid) != gid {
		t.Errorf("/proc/%d owned by %d:%d, want %d:%d", c.PID, st.Uid, st.Gid, uid, gid)
	}
}

func TestPathSeesContainerMounts(t *testing.T) {
	c := Start(t, &Options{Spec: "dir mnt", MountProc: true})
	// A mount made inside the container is visible through Path, not on the host.
	if out, err := c.Exec(t, "mount", "-t", "tmpfs", "tmpfs", c.Rootfs+"/mnt"); err != nil {
		t.Fatalf("mount in container: %v: %s", err, out)
	}
	if out, err := c.Exec(t, "touch", c.Rootfs+"/mnt/inside"); err != nil {
		t.Fatalf("touch in container: %v: %s", err, out)
	}
	if _, err := os.Stat(c.Path("mnt/inside")); err != nil {
		t.Errorf("file on the container's tmpfs not visible through Path: %v", err)
	}
	if _, err := os.Stat(c.HostRootfs + "/mnt/inside"); err == nil {
		t.Error("file on the container's tmpfs visible on the host")
	}
}

func TestSnapshotDetectsChanges(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/a", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := SnapshotTree(t, dir)
	if d := DiffSnapshots(before, SnapshotTree(t, dir)); len(d) != 0 {
		t.Fatalf("unchanged tree differs: %q", d)
	}
	if err := os.WriteFile(dir+"/b", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir+"/a", 0o600); err != nil {
		t.Fatal(err)
	}
	d := strings.Join(DiffSnapshots(before, SnapshotTree(t, dir)), "\n")
	for _, want := range []string{"added b", "changed a:", "changed .:"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestDenySyscalls(t *testing.T) {
	if !InChild(t) {
		return
	}
	if err := DenySyscalls(unix.SYS_OPENAT2, unix.SYS_MOUNT_SETATTR); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { // another thread, started after the filter
		_, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH})
		done <- err
	}()
	if err := <-done; err != unix.ENOSYS {
		t.Errorf("openat2 = %v, want ENOSYS", err)
	}
	if err := unix.MountSetattr(-1, "", unix.AT_EMPTY_PATH, &unix.MountAttr{}); err != unix.ENOSYS {
		t.Errorf("mount_setattr = %v, want ENOSYS", err)
	}
	if _, err := os.Stat("/"); err != nil {
		t.Errorf("other syscalls denied too: %v", err)
	}
}
