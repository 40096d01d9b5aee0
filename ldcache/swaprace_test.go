package ldcache_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// Swap races: a process sharing a scanned directory (a sidecar on a
// shared volume) exchanges a library with a device node or FIFO
// (renameat2 RENAME_EXCHANGE, so the name is always one or the other)
// while Build or Update runs. Whatever the listing said, the node must
// never be opened (inotify sees no IN_OPEN on it: an O_PATH open is no
// open) and the cache never holds it.
const (
	swapRounds  = 300              // Builds (and Updates) per kind
	swapTimeout = 20 * time.Second // the racer stops at the latest then
)

// swapper exchanges a and b in a directory until stopped.
type swapper struct {
	stop  atomic.Bool
	swaps atomic.Int64
	wg    sync.WaitGroup
}

func startSwapper(tb testing.TB, dir, a, b string) *swapper {
	tb.Helper()
	d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	s := &swapper{}
	deadline := time.Now().Add(swapTimeout)
	s.wg.Go(func() {
		defer unix.Close(d)
		for !s.stop.Load() && time.Now().Before(deadline) {
			if err := unix.Renameat2(d, a, d, b, unix.RENAME_EXCHANGE); err != nil {
				tb.Errorf("exchanging %s and %s: %v", a, b, err)
				return
			}
			s.swaps.Add(1)
		}
	})
	return s
}

func (s *swapper) halt() int64 {
	s.stop.Store(true)
	s.wg.Wait()
	return s.swaps.Load()
}

// swapRoot is a Debian root with one scanned directory, /opt/swap: a
// real library libswap.so.1, the node .node (not a library name, so the
// scan never looks at it by itself), and libslow.so.1, an absolute
// symlink to libswap.so.1 that the scan resolves through the root.
func swapRoot(t *testing.T, kind string) (root, node string) {
	t.Helper()
	root = testutil.RootTree(t, `
file etc/debian_version "12\n"
file etc/ld.so.conf "/opt/swap\n"
symlink opt/swap/libslow.so.1 /opt/swap/libswap.so.1
`)
	writeLibs(t, root, []lib{
		{"opt/swap/libswap.so.1", x64("libswap.so.1")},
		{"opt/swap/libother.so.1", x64("libother.so.1")},
	})
	return root, plant(t, root, kind, "opt/swap/.node")
}

// TestBuildSwapRaceNeverOpensNode: while a racer exchanges a library
// with a FIFO or a character device, no Build or Update ever opens the
// node, and each cache holds only regular libraries.
func TestBuildSwapRaceNeverOpensNode(t *testing.T) {
	for _, kind := range []string{"fifo", "char"} {
		t.Run(kind, func(t *testing.T) {
			root, node := swapRoot(t, kind)
			w := watchOpens(t, node)
			sw := startSwapper(t, filepath.Join(root, "opt/swap"), "libswap.so.1", ".node")
			opened, rounds := 0, 0
			for ; rounds < swapRounds && !sw.stop.Load(); rounds++ {
				var c *ldcache.Cache
				var err error
				if rounds%4 == 3 {
					err = ldcache.Update(context.Background(), root, &ldcache.UpdateOptions{Links: true})
					if err == nil {
						c, err = ldcache.OpenInRoot(root, "/etc/ld.so.cache")
					}
				} else {
					c, err = ldcache.Build(context.Background(), root, &ldcache.BuildOptions{NoLinks: true})
				}
				if err != nil {
					sw.halt()
					require.NoError(t, err, "round %d", rounds)
				}
				opened += w.opens(t)
				assert.Len(t, c.Find("libother.so.1", ldcache.ArchX8664), 1, "round %d: libother.so.1 entries, want one", rounds)
				for _, e := range c.Entries {
					assert.Contains(t, []string{"libother.so.1", "libswap.so.1", "libslow.so.1"}, e.Name, "round %d: unexpected entry %+v", rounds, e)
				}
			}
			swaps := sw.halt()
			opened += w.opens(t)
			require.Zero(t, opened, "the %s swapped with a library was opened in %d rounds (%d swaps)", kind, rounds, swaps)
			require.NotZero(t, swaps, "the racer never swapped")
			restore(t, node, filepath.Join(root, "opt/swap/libswap.so.1"))
			w.provesWatch(t, kind)
			t.Logf("%d rounds, %d swaps, no open", rounds, swaps)
		})
	}
}

// restore puts the node back at its own name if the racer left the
// regular file other there, so that provesWatch opens the node.
func restore(t *testing.T, node, other string) {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Lstat(node, &st), node)
	if st.Mode&unix.S_IFMT == unix.S_IFREG {
		require.NoError(t, unix.Renameat2(unix.AT_FDCWD, node, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE), "exchange %s and %s", node, other)
	}
}

// TestBuildSwapRaceConf: the same race on ld.so.conf and on an included
// file: exchanged with a FIFO, neither is ever opened for reading, and
// every Build returns.
func TestBuildSwapRaceConf(t *testing.T) {
	for _, which := range []string{"etc/ld.so.conf", "etc/ld.so.conf.d/a.conf"} {
		t.Run(filepath.Base(which), func(t *testing.T) {
			root := testutil.RootTree(t, `
file etc/debian_version "12\n"
file etc/ld.so.conf "include /etc/ld.so.conf.d/*.conf\n"
file etc/ld.so.conf.d/a.conf "/opt/good\n"
`)
			writeLibs(t, root, []lib{{"opt/good/libgood.so.1", x64("libgood.so.1")}})
			dir := filepath.Dir(filepath.Join(root, which))
			node := plant(t, root, "fifo", filepath.Join(filepath.Dir(which), ".node"))
			w := watchOpens(t, node)
			sw := startSwapper(t, dir, filepath.Base(which), ".node")
			opened, rounds := 0, 0
			for ; rounds < swapRounds/3 && !sw.stop.Load(); rounds++ {
				if _, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{NoLinks: true}); err != nil {
					sw.halt()
					require.NoError(t, err, "round %d", rounds)
				}
				opened += w.opens(t)
			}
			swaps := sw.halt()
			opened += w.opens(t)
			require.Zero(t, opened, "the FIFO swapped with %s was opened in %d rounds (%d swaps)", which, rounds, swaps)
			restore(t, node, filepath.Join(root, which))
			w.provesWatch(t, "fifo")
		})
	}
}

// TestBuildNeverOpensNonRegularLib: a device node or FIFO under a
// library's name, or behind a symlink with one (resolved in the
// directory or through the root), is never opened and gives no entry.
func TestBuildNeverOpensNonRegularLib(t *testing.T) {
	for kind := range nonRegularKinds {
		t.Run(kind, func(t *testing.T) {
			root := testutil.RootTree(t, `
file etc/debian_version "12\n"
file etc/ld.so.conf "/opt/n\n"
symlink opt/n/libnear.so.1 libnode.so.1
symlink opt/n/libfar.so.1 /opt/n/libnode.so.1
`)
			writeLibs(t, root, []lib{{"opt/n/libgood.so.1", x64("libgood.so.1")}})
			w := watchOpens(t, plant(t, root, kind, "opt/n/libnode.so.1"))
			c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{NoLinks: true})
			require.NoError(t, err, "Build")
			require.Zero(t, w.opens(t), "Build opened the %s", kind)
			w.provesWatch(t, kind)
			if assert.Len(t, c.Entries, 1, "entries %+v, want libgood.so.1 alone", c.Entries) {
				assert.Equal(t, "libgood.so.1", c.Entries[0].Name, "entries, want libgood.so.1 alone")
			}
		})
	}
}
