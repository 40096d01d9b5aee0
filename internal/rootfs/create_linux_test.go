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

// creations runs every kind of creation under umask on a confined thread
// (so the umask is that thread's only).
func creations(t *testing.T, r *Root, umask int) []*Entry {
	t.Helper()
	var entries []*Entry
	err := ns.Current().Run(func() error {
		unix.Umask(umask)
		for _, mk := range []func() (*Entry, error){
			func() (*Entry, error) { return r.MkdirAll("a/b/c", 0o711) },
			func() (*Entry, error) { return r.CreateFile("d/libcuda.so.1", 0o640) },
			func() (*Entry, error) { return r.CreateFile("d/setuid", fs.ModeSetuid|0o755) },
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

// TestCreateOwnerAndModes: whatever the umask and whoever creates them,
// entries get exactly the asked mode (set-id bits included, after the
// chown that could clear them) and the Root's owner, also when the owner
// is the creator and the umask strips nothing (nothing is set again then).
func TestCreateOwnerAndModes(t *testing.T) {
	testutil.RequireRoot(t)
	for _, tc := range []struct {
		name  string
		owner Owner
		umask int
		keep  bool
	}{
		{"other owner, umask 077", Owner{UID: 1234, GID: 4321}, 0o077, false},
		{"other owner, umask 077, kept dirs", Owner{UID: 1234, GID: 4321}, 0o077, true},
		{"creator, umask 0", Owner{UID: os.Getuid(), GID: os.Getgid()}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) { createOwnerAndModes(t, tc.owner, tc.umask, tc.keep) })
	}
}

func createOwnerAndModes(t *testing.T, o Owner, umask int, keep bool) {
	rootfs := t.TempDir()
	r := openRoot(t, rootfs, &Options{Owner: &o, KeepDirs: keep})
	for _, e := range creations(t, r, umask) {
		if !e.Created() {
			t.Errorf("%s: Created() = false for a new entry", e.Path())
		}
		e.Close()
	}
	wantStat(t, in(rootfs, "a"), syscall.S_IFDIR, 0o755, o)
	wantStat(t, in(rootfs, "a/b"), syscall.S_IFDIR, 0o755, o)
	wantStat(t, in(rootfs, "a/b/c"), syscall.S_IFDIR, 0o711, o)
	wantStat(t, in(rootfs, "d/libcuda.so.1"), syscall.S_IFREG, 0o640, o)
	wantStat(t, in(rootfs, "d/setuid"), syscall.S_IFREG, 0o4755, o)
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
	for _, e := range creations(t, r, umask) {
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

// TestKeepDirs: with KeepDirs a parent is resolved once and pinned, so a
// directory replaced after the first entry (here by a symlink elsewhere in
// the root) still receives the next ones; ForgetDirs, or no KeepDirs,
// resolves afresh and follows the symlink, inside the root.
func TestKeepDirs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		keep   bool
		forget bool
		want   string
	}{
		{"fresh", false, false, "other/second"},
		{"kept", true, false, "lib.old/second"},
		{"kept, forgotten", true, true, "other/second"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rootfs := testutil.Tree(t, "dir lib\ndir other")
			r := openRoot(t, rootfs, &Options{KeepDirs: tc.keep})
			must(t, closeEntry(r.CreateFile("lib/first", 0o644)))
			must(t, os.Rename(in(rootfs, "lib"), in(rootfs, "lib.old")))
			must(t, os.Symlink("/other", in(rootfs, "lib")))
			if tc.forget {
				r.ForgetDirs()
			}
			must(t, closeEntry(r.CreateFile("lib/second", 0o644)))
			if !exists(in(rootfs, tc.want)) {
				t.Errorf("lib/second is not at %s", tc.want)
			}
		})
	}
}
