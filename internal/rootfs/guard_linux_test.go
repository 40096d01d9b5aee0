package rootfs

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

var errRefused = errors.New("refused")

// TestMayCreate: where Options.MayCreate refuses a directory, nothing is
// created in it by any call (a directory, a placeholder, a link, a node,
// WriteFile's and ReplaceSymlink's temporaries), the refusal is the error,
// and what is already there is still used as it is; elsewhere creation
// goes on.
func TestMayCreate(t *testing.T) {
	dir := testutil.Tree(t, `dir vol
file vol/lib "image"
symlink vol/link lib
symlink vol/old elsewhere
dir usr`)
	before := container.SnapshotTree(t, dir+"/vol")
	var asked []string
	r := openRoot(t, dir, &Options{MayCreate: func(_ int, d string) error {
		asked = append(asked, d)
		if strings.HasPrefix(d+"/", "/vol/") {
			return errRefused
		}
		return nil
	}})
	refused := map[string]func() error{
		"mkdir":   func() error { return closeIt(r.MkdirAll("/vol/new/deeper", 0o755)) },
		"file":    func() error { return closeIt(r.CreateFile("/vol/new", 0o644)) },
		"symlink": func() error { return closeIt(r.Symlink("lib", "/vol/new")) },
		"mknod":   func() error { return closeIt(r.Mknod("/vol/null", 0o666, 1, 3)) },
		"write":   func() error { return r.WriteFile("/vol/lib", []byte("new"), 0o644) },
		"relink":  func() error { return closeIt(r.ReplaceSymlink("lib", "/vol/old")) },
	}
	for name, f := range refused {
		assert.ErrorIs(t, f(), errRefused, "%s in a refused directory", name)
	}
	kept := map[string]func() error{
		"existing file":    func() error { return closeIt(r.CreateFile("/vol/lib", 0o644)) },
		"existing link":    func() error { return closeIt(r.Symlink("lib", "/vol/link")) },
		"same soname link": func() error { return closeIt(r.ReplaceSymlink("lib", "/vol/link")) },
		"existing dir":     func() error { return closeIt(r.MkdirAll("/vol", 0o755)) },
		"elsewhere":        func() error { return closeIt(r.CreateFile("/usr/x/y", 0o644)) },
	}
	for name, f := range kept {
		assert.NoError(t, f(), name)
	}
	d := container.DiffSnapshots(before, container.SnapshotTree(t, dir+"/vol"))
	assert.Empty(t, d, "created in the refused directory:\n%s", strings.Join(d, "\n"))
	assert.Contains(t, asked, "/usr", "MayCreate was asked about %q, want /usr among them", asked)
	assert.NotContains(t, asked, "/usr/x", "MayCreate was asked about %q: /usr/x, made in the allowed /usr on its mount, is allowed too", asked)
}

// TestMayCreateMountedOver: a directory Root creates in an allowed one is
// not asked about while it is on the same mount; one that something was
// mounted on between its mkdirat and its openat (a race of the image's
// processes) is, and its refusal holds.
func TestMayCreateMountedOver(t *testing.T) {
	dir := testutil.Tree(t, "dir usr")
	if !container.InPrivateMountNS(t) {
		return
	}
	t.Cleanup(func() { unix.Unmount(dir+"/usr/vol", unix.MNT_DETACH) })
	var asked []string
	r := openRoot(t, dir, &Options{KeepDirs: true, MayCreate: func(fd int, d string) error {
		asked = append(asked, d)
		var sfs unix.Statfs_t
		if err := unix.Fstatfs(fd, &sfs); err != nil || sfs.Type == unix.TMPFS_MAGIC {
			return errRefused // the "volume"
		}
		return nil
	}})
	r.opts.fault = func(op, p string) error {
		if op == "openat" && p == "/usr/vol" {
			return unix.Mount("tmpfs", dir+p, "tmpfs", 0, "")
		}
		return nil
	}
	require.NoError(t, closeIt(r.CreateFile("/usr/same/deeper/f", 0o644)))
	assert.Equal(t, []string{"/usr"}, asked, "MayCreate asked about")
	err := closeIt(r.CreateFile("/usr/vol/f", 0o644))
	assert.ErrorIs(t, err, errRefused, "a file in a directory mounted over")
	assert.Equal(t, []string{"/usr", "/usr/vol"}, asked, "MayCreate asked about")
	assert.NoFileExists(t, dir+"/usr/vol/f", "created in the mount")
}

func closeIt(e *Entry, err error) error {
	if err != nil {
		return err
	}
	return e.Close()
}
