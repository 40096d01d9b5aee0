package rootfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/ns"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/internal/undo"
)

// wantStat checks type, permissions and owner of p (not followed).
func wantStat(t *testing.T, p string, typ uint32, perm uint32, o Owner) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Error(err)
		return
	}
	if st.Mode&syscall.S_IFMT != typ || (typ != syscall.S_IFLNK && st.Mode&0o7777 != perm) {
		t.Errorf("%s: mode %#o, want type %#o perm %#o", p, st.Mode, typ, perm)
	}
	if int(st.Uid) != o.UID || int(st.Gid) != o.GID {
		t.Errorf("%s: owner %d:%d, want %d:%d", p, st.Uid, st.Gid, o.UID, o.GID)
	}
}

// creations runs every kind of creation under a strict umask on a
// confined thread (so the umask is that thread's only).
func creations(t *testing.T, r *Root) []*Entry {
	t.Helper()
	var entries []*Entry
	err := ns.Current().Run(func() error {
		unix.Umask(0o077)
		for _, mk := range []func() (*Entry, error){
			func() (*Entry, error) { return r.MkdirAll("a/b/c", 0o711) },
			func() (*Entry, error) { return r.CreateFile("d/libcuda.so.1", 0o640) },
			func() (*Entry, error) { return r.Mknod("dev/nvidiactl", 0o666, 195, 255) },
			func() (*Entry, error) { return r.Symlink("libcuda.so.1", "d/libcuda.so") },
		} {
			e, err := mk()
			if err != nil {
				return err
			}
			entries = append(entries, e)
		}
		return r.WriteFile("etc/ld.so.cache", []byte("cache"), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func TestCreateOwnerAndModes(t *testing.T) {
	testutil.RequireRoot(t)
	rootfs := t.TempDir()
	o := Owner{UID: 1234, GID: 4321}
	r := openRoot(t, rootfs, &Options{Owner: &o})
	for _, e := range creations(t, r) {
		if !e.Created() {
			t.Errorf("%s: Created() = false for a new entry", e.Path())
		}
		e.Close()
	}
	wantStat(t, in(rootfs, "a"), syscall.S_IFDIR, 0o755, o)
	wantStat(t, in(rootfs, "a/b"), syscall.S_IFDIR, 0o755, o)
	wantStat(t, in(rootfs, "a/b/c"), syscall.S_IFDIR, 0o711, o)
	wantStat(t, in(rootfs, "d/libcuda.so.1"), syscall.S_IFREG, 0o640, o)
	wantStat(t, in(rootfs, "dev/nvidiactl"), syscall.S_IFCHR, 0o666, o)
	wantStat(t, in(rootfs, "d/libcuda.so"), syscall.S_IFLNK, 0, o)
	wantStat(t, in(rootfs, "etc/ld.so.cache"), syscall.S_IFREG, 0o644, o)
	if data, _ := os.ReadFile(in(rootfs, "etc/ld.so.cache")); string(data) != "cache" {
		t.Errorf("etc/ld.so.cache holds %q", data)
	}
	if fi := lstat(t, in(rootfs, "dev/nvidiactl")); fi.Sys().(*syscall.Stat_t).Rdev != unix.Mkdev(195, 255) {
		t.Errorf("dev/nvidiactl is %#x, want 195:255", fi.Sys().(*syscall.Stat_t).Rdev)
	}
	// Existing entries of the right type are accepted, not re-created.
	for _, e := range creations(t, r) {
		if e.Created() {
			t.Errorf("%s: Created() = true for an existing entry", e.Path())
		}
		e.Close()
	}
}

func TestCreateInvalidPaths(t *testing.T) {
	r := openRoot(t, t.TempDir(), nil)
	for _, p := range []string{"", "/", ".", "a/..", "../.."} {
		if _, err := r.CreateFile(p, 0o644); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("CreateFile(%q) = %v, want ErrInvalidPath", p, err)
		}
	}
}

func TestProcessOwner(t *testing.T) {
	c := container.Start(t, &container.Options{UID: 1234, GID: 4321})
	o, err := ProcessOwner("", c.PID)
	if err != nil {
		t.Fatal(err)
	}
	if o != (Owner{1234, 4321}) {
		t.Errorf("ProcessOwner = %+v, want 1234:4321", o)
	}
	if _, err := ProcessOwner("", -1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ProcessOwner(-1) = %v, want ErrNotExist", err)
	}
}

// TestInsideContainerNamespace does what Apply does: from the host, enter
// the container's mount namespace and create files in its rootfs, owned by
// the container's owner.
func TestInsideContainerNamespace(t *testing.T) {
	for _, pivot := range []bool{false, true} {
		c := container.Start(t, &container.Options{UID: 1000, GID: 1000, PivotRoot: pivot, Spec: "dir usr/lib"})
		n, err := ns.OpenPID("", c.PID)
		if err != nil {
			t.Fatal(err)
		}
		defer n.Close()
		o, err := ProcessOwner("", c.PID)
		if err != nil {
			t.Fatal(err)
		}
		var u undo.Stack
		err = n.Run(func() error {
			r, err := Open(c.Rootfs, &Options{Owner: &o, Undo: &u})
			if err != nil {
				return err
			}
			defer r.Close()
			return closeEntry(r.CreateFile("usr/lib/x86_64-linux-gnu/libcuda.so.1", 0o644))
		})
		if err != nil {
			t.Fatalf("pivot %v: %v", pivot, err)
		}
		wantStat(t, c.Path("usr/lib/x86_64-linux-gnu/libcuda.so.1"), syscall.S_IFREG, 0o644, o)
		mustUndo(t, &u) // fd-based: works from the host namespace
		if exists(in(c.HostRootfs, "usr/lib/x86_64-linux-gnu")) {
			t.Errorf("pivot %v: undo left usr/lib/x86_64-linux-gnu", pivot)
		}
	}
}
