package rootfs

import (
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	if !assert.NoError(t, syscall.Lstat(p, &st)) {
		return
	}
	assert.Equal(t, typ, uint32(st.Mode&syscall.S_IFMT), "%s: mode %#o, want type %#o", p, st.Mode, typ)
	if typ != syscall.S_IFLNK {
		assert.Equal(t, perm, uint32(st.Mode&0o7777), "%s: mode %#o, want perm %#o", p, st.Mode, perm)
	}
	assert.Equal(t, o, Owner{UID: int(st.Uid), GID: int(st.Gid)}, "%s: owner", p)
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
	require.NoError(t, err)
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
		assert.True(t, e.Created(), "%s: Created() = false for a new entry", e.Path())
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
	data, _ := os.ReadFile(in(rootfs, "etc/ld.so.cache"))
	assert.Equal(t, "cache", string(data), "etc/ld.so.cache holds")
	fi := lstat(t, in(rootfs, "dev/nvidiactl"))
	assert.Equal(t, unix.Mkdev(195, 255), uint64(fi.Sys().(*syscall.Stat_t).Rdev), "dev/nvidiactl, want 195:255")
	// Existing entries of the right type are accepted, not re-created.
	for _, e := range creations(t, r, umask) {
		assert.False(t, e.Created(), "%s: Created() = true for an existing entry", e.Path())
		e.Close()
	}
}

func TestCreateInvalidPaths(t *testing.T) {
	r := openRoot(t, t.TempDir(), nil)
	for _, p := range []string{"", "/", ".", "a/..", "../.."} {
		t.Run(strconv.Quote(p), func(t *testing.T) {
			_, err := r.CreateFile(p, 0o644)
			assert.ErrorIs(t, err, ErrInvalidPath, "CreateFile(%q)", p)
		})
	}
}

func TestProcessOwner(t *testing.T) {
	c := container.Start(t, &container.Options{UID: 1234, GID: 4321})
	o, err := ProcessOwner("", c.PID)
	require.NoError(t, err)
	assert.Equal(t, Owner{1234, 4321}, o, "ProcessOwner")
	_, err = ProcessOwner("", -1)
	assert.ErrorIs(t, err, fs.ErrNotExist, "ProcessOwner(-1)")
}

// TestInsideContainerNamespace does what Apply does: from the host, enter
// the container's mount namespace and create files in its rootfs, owned by
// the container's owner.
func TestInsideContainerNamespace(t *testing.T) {
	for _, pivot := range []bool{false, true} {
		t.Run(map[bool]string{false: "chroot", true: "pivoted"}[pivot], func(t *testing.T) { insideContainerNamespace(t, pivot) })
	}
}

func insideContainerNamespace(t *testing.T, pivot bool) {
	c := container.Start(t, &container.Options{UID: 1000, GID: 1000, PivotRoot: pivot, Spec: "dir usr/lib"})
	n, err := ns.OpenPID("", c.PID)
	require.NoError(t, err)
	defer n.Close()
	o, err := ProcessOwner("", c.PID)
	require.NoError(t, err)
	var u undo.Stack
	err = n.Run(func() error {
		r, err := Open(c.Rootfs, &Options{Owner: &o, Undo: &u})
		if err != nil {
			return err
		}
		defer r.Close()
		return closeEntry(r.CreateFile("usr/lib/x86_64-linux-gnu/libcuda.so.1", 0o644))
	})
	require.NoError(t, err, "pivot %v", pivot)
	wantStat(t, c.Path("usr/lib/x86_64-linux-gnu/libcuda.so.1"), syscall.S_IFREG, 0o644, o)
	mustUndo(t, &u) // fd-based: works from the host namespace
	assert.False(t, exists(in(c.HostRootfs, "usr/lib/x86_64-linux-gnu")), "pivot %v: undo left usr/lib/x86_64-linux-gnu", pivot)
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
			assert.True(t, exists(in(rootfs, tc.want)), "lib/second is not at %s", tc.want)
		})
	}
}
