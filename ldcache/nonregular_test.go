package ldcache_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// openWatch reports IN_OPEN events on one file through inotify.
type openWatch struct {
	fd   int
	path string
}

// watchOpens starts watching p for IN_OPEN; the watch ends with tb. It
// also watches IN_CLOSE, so that inotify, which merges an event with an
// identical one queued last, reports each open.
func watchOpens(tb testing.TB, p string) *openWatch {
	tb.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		testutil.RequireKernel(tb, "inotify", err)
	}
	tb.Cleanup(func() { unix.Close(fd) })
	if _, err := unix.InotifyAddWatch(fd, p, unix.IN_OPEN|unix.IN_CLOSE); err != nil {
		tb.Fatalf("watching %s: %v", p, err)
	}
	return &openWatch{fd: fd, path: p}
}

// opens returns the number of IN_OPEN events since the last call.
func (w *openWatch) opens(tb testing.TB) int {
	tb.Helper()
	n := 0
	buf := make([]byte, 4096)
	for {
		m, err := unix.Read(w.fd, buf)
		if err == unix.EAGAIN {
			return n
		}
		if err != nil {
			tb.Fatalf("reading inotify events: %v", err)
		}
		for b := buf[:m]; len(b) >= unix.SizeofInotifyEvent; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
			if ev.Mask&unix.IN_OPEN != 0 {
				n++
			}
			b = b[unix.SizeofInotifyEvent+int(ev.Len):]
		}
	}
}

// provesWatch opens the node itself and checks the watch saw it, so that a
// silent watch cannot pass the test. A socket cannot be opened at all.
func (w *openWatch) provesWatch(tb testing.TB, kind string) {
	tb.Helper()
	if kind == "socket" {
		return
	}
	fd, err := unix.Open(w.path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		tb.Fatalf("control open of %s: %v", w.path, err)
	}
	unix.Close(fd)
	if w.opens(tb) == 0 {
		tb.Fatalf("inotify saw no IN_OPEN for the control open of %s", w.path)
	}
}

// nonRegularKinds are the node types planted where a file is read: the
// null device (1:3, harmless to open, but any device node would be
// opened the same way), a FIFO and a socket.
var nonRegularKinds = map[string]string{
	"char":   "char %s 1 3",
	"fifo":   "fifo %s",
	"socket": "socket %s",
}

func plant(tb testing.TB, root, kind, p string) string {
	tb.Helper()
	testutil.BuildTree(tb, root, strings.ReplaceAll(nonRegularKinds[kind], "%s", p))
	return filepath.Join(root, p)
}

// TestBuildNeverOpensNonRegularConf: an ld.so.conf, or a file an include
// glob matches, that is a device node, FIFO or socket is never opened
// (no IN_OPEN on it: opening a device as the host's root acts on it
// outside the container's device cgroup) and is skipped, so the cache is
// what glibc's ldconfig writes when it ignores the file (it warns about a
// socket, and reads a null device as empty).
func TestBuildNeverOpensNonRegularConf(t *testing.T) {
	testutil.RequireRoot(t)
	for kind := range nonRegularKinds {
		for _, where := range []string{"conf", "include"} {
			t.Run(kind+"/"+where, func(t *testing.T) {
				root := testutil.Tree(t, `
file etc/debian_version "12\n"
file etc/ld.so.conf.d/10-good.conf "/opt/good\n"
`)
				writeLibs(t, root, []lib{{"opt/good/libgood.so.1", x64("libgood.so.1")}})
				node := "etc/ld.so.conf"
				if where == "include" {
					testutil.BuildTree(t, root, `file etc/ld.so.conf "include /etc/ld.so.conf.d/*.conf\n"`)
					node = "etc/ld.so.conf.d/05-node.conf"
				}
				w := watchOpens(t, plant(t, root, kind, node))
				c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{NoLinks: true})
				require.NoError(t, err, "Build")
				require.Zero(t, w.opens(t), "Build opened the %s at %s", kind, node)
				w.provesWatch(t, kind)
				got := c.Find("libgood.so.1", ldcache.ArchX8664)
				assert.Equal(t, where == "include", len(got) == 1, "libgood.so.1 entries %+v; want one only when the good file is included", got)
				if kind != "fifo" { // glibc's ldconfig blocks opening a FIFO
					sameAsGlibc(t, root, c)
				}
			})
		}
	}
}

// sameAsGlibc checks that c encodes to the bytes glibc's ldconfig writes
// for root.
func sameAsGlibc(t *testing.T, root string, c *ldcache.Cache) {
	t.Helper()
	want, g := glibcWrites(t, root)
	c.Generator = g.Generator
	got, err := c.MarshalBinary()
	require.NoError(t, err, "MarshalBinary")
	assert.True(t, bytes.Equal(got, want), "cache differs from glibc's (%d and %d bytes)", len(got), len(want))
}

// TestUpdateMuslNeverOpensNonRegularPathFile: a musl path file that is a
// device node, FIFO or socket is never opened; Update replaces it with a
// regular file holding the directories and musl's defaults.
func TestUpdateMuslNeverOpensNonRegularPathFile(t *testing.T) {
	testutil.RequireRoot(t)
	for kind := range nonRegularKinds {
		t.Run(kind, func(t *testing.T) {
			root := testutil.Tree(t, "file lib/ld-musl-x86_64.so.1 \"x\"\n")
			p := plant(t, root, kind, "etc/ld-musl-x86_64.path")
			w := watchOpens(t, p)
			require.NoError(t, ldcache.Update(context.Background(), root, &ldcache.UpdateOptions{Dirs: []string{"/drv"}, GOARCH: "amd64"}), "Update")
			require.Zero(t, w.opens(t), "Update opened the %s path file", kind)
			got, err := os.ReadFile(p)
			if assert.NoError(t, err, "path file") {
				assert.Equal(t, "/drv\n/lib\n/usr/local/lib\n/usr/lib\n", string(got), "path file")
			}
		})
	}
}

// TestOpenInRootRefusesNonRegularCache: a cache path that is a device
// node, FIFO or socket is refused without being opened.
func TestOpenInRootRefusesNonRegularCache(t *testing.T) {
	testutil.RequireRoot(t)
	for kind := range nonRegularKinds {
		t.Run(kind, func(t *testing.T) {
			root := testutil.Tree(t, "dir etc\n")
			w := watchOpens(t, plant(t, root, kind, "etc/ld.so.cache"))
			_, err := ldcache.OpenInRoot(root, "/etc/ld.so.cache")
			require.ErrorContains(t, err, "not a regular file", "OpenInRoot")
			require.Zero(t, w.opens(t), "OpenInRoot opened the %s", kind)
			w.provesWatch(t, kind)
		})
	}
}

// TestOpenInRootMissing: a missing cache keeps its errno.
func TestOpenInRootMissing(t *testing.T) {
	root := testutil.Tree(t, "dir etc\n")
	_, err := ldcache.OpenInRoot(root, "/etc/ld.so.cache")
	require.ErrorIs(t, err, os.ErrNotExist, "OpenInRoot")
}
