package rootfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/internal/undo"
)

// hostSpec is the sentinel tree standing for the host: every hostile
// layout points into it, and it must never change.
const hostSpec = `
file etc/passwd "root:x:0:0::/root:/bin/sh\n"
file etc/ld.so.cache "host cache"
dir  lib
file lib/libc.so.6 "host libc"
dir  dev
dir  usr/bin
file usr/bin/nvidia-smi "host binary"
dir  proc/driver
`

var resolvers = []struct {
	name string
	r    Resolver
}{
	{"openat2", ResolveOpenat2},
	{"pathrs-lite", ResolvePathrsLite},
}

// sentinel is a host tree that a test proves unchanged at its end.
type sentinel struct {
	dir    string
	before container.Snapshot
}

func newSentinel(t *testing.T) *sentinel {
	t.Helper()
	s := &sentinel{dir: testutil.Tree(t, hostSpec)}
	s.before = container.SnapshotTree(t, s.dir)
	t.Cleanup(func() {
		d := container.DiffSnapshots(s.before, container.SnapshotTree(t, s.dir))
		assert.Empty(t, d, "host tree %s changed:\n%s", s.dir, strings.Join(d, "\n"))
	})
	return s
}

// expand replaces {{HOST}} with the sentinel's absolute path and {{UP}}
// with enough "../" to climb from any rootfs to "/".
func (s *sentinel) expand(spec string) string {
	up := strings.Repeat("../", 32)
	return strings.NewReplacer("{{HOST}}", s.dir, "{{UP}}", up).Replace(spec)
}

func openRoot(t *testing.T, dir string, opts *Options) *Root {
	t.Helper()
	r, err := Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

func lstat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	return fi
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func in(root, p string) string {
	return filepath.Join(root, p)
}

func mustUndo(t *testing.T, u *undo.Stack) {
	t.Helper()
	require.NoError(t, u.Undo())
}
