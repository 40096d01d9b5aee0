package rootfs

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

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
	assert.Contains(t, strings.Join(asked, " "), "/usr/x", "MayCreate was asked about %q, want /usr/x among them", asked)
}

func closeIt(e *Entry, err error) error {
	if err != nil {
		return err
	}
	return e.Close()
}
