package rootfs

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/undo"
)

// swapper exchanges two names in dir (a directory and a symlink, or a
// file and a symlink) until stopped, as a hostile container process would.
// dir is held open: the swaps may make its path lead elsewhere.
func swapper(t *testing.T, d int, a, b string, stop *atomic.Bool, swaps *atomic.Int64) {
	for !stop.Load() {
		if !assert.NoError(t, unix.Renameat2(d, a, d, b, unix.RENAME_EXCHANGE)) {
			return
		}
		swaps.Add(1)
	}
}

const raceSpec = `
dir     usr/lib
dir     usr/lib/x86_64-linux-gnu
file    usr/lib/x86_64-linux-gnu/libcuda.so.1
symlink usr/lib.abs {{HOST}}/lib
symlink usr/lib.up  {{UP}}{{HOST}}/lib
symlink usr/lib/x86_64-linux-gnu/libcuda.so.1.evil {{HOST}}/lib/libc.so.6
dir     {{HOST}}/lib/x86_64-linux-gnu
`

func openPath(t *testing.T, p string) int {
	t.Helper()
	d, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(d) })
	return d
}

// raceOps are the operations run while the layout is swapped under them.
func raceOps(r *Root, i int) []error {
	lib := "usr/lib/x86_64-linux-gnu/"
	return []error{
		closeEntry(r.CreateFile(fmt.Sprintf("%slib%d.so", lib, i), 0o644)),
		closeEntry(r.CreateFile(lib+"libcuda.so.1", 0o644)),
		closeEntry(r.MkdirAll(fmt.Sprintf("%sgpus/%d", lib, i), 0o755)),
		closeEntry(r.Mknod(fmt.Sprintf("%snvidia%d", lib, i), 0o666, 195, 0)),
		closeEntry(r.Symlink("libcuda.so.1", fmt.Sprintf("%slibcuda%d.so", lib, i))),
		r.WriteFile(lib+"libcuda.so.1", []byte("overwritten"), 0o644),
	}
}

func TestRaceSwappedLayout(t *testing.T) {
	testutil.RequireRoot(t)
	for _, res := range resolvers {
		t.Run(res.name, func(t *testing.T) { runRace(t, &Options{Resolver: res.r}) })
		t.Run(res.name+"/kept dirs", func(t *testing.T) { runRace(t, &Options{Resolver: res.r, KeepDirs: true}) })
	}
}

func runRace(t *testing.T, opts *Options) {
	host := newSentinel(t)
	rootfs := testutil.Tree(t, host.expand(raceSpec))
	var stop atomic.Bool
	var swaps atomic.Int64
	var wg sync.WaitGroup
	usr, lib := openPath(t, in(rootfs, "usr")), openPath(t, in(rootfs, "usr/lib/x86_64-linux-gnu"))
	wg.Go(func() { swapper(t, usr, "lib", "lib.abs", &stop, &swaps) })
	wg.Go(func() { swapper(t, usr, "lib", "lib.up", &stop, &swaps) })
	wg.Go(func() { swapper(t, lib, "libcuda.so.1", "libcuda.so.1.evil", &stop, &swaps) })
	var u undo.Stack
	opts.Undo = &u
	r := openRoot(t, rootfs, opts)
	ok, failed := 0, map[string]int{}
	for i := range 50 {
		if i%5 == 0 {
			r.ForgetDirs() // kept dirs: resolve afresh now and then
		}
		for j, err := range raceOps(r, i) {
			if err == nil {
				ok++
			} else {
				failed[fmt.Sprintf("op %d: %v", j, errors.Unwrap(errors.Unwrap(err)))]++
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d swaps, %d operations succeeded, failures: %v", swaps.Load(), ok, failed)
	assert.NotZero(t, ok, "the race did not happen: %d swaps, %d successes", swaps.Load(), ok)
	assert.NotZero(t, swaps.Load(), "the race did not happen: %d swaps, %d successes", swaps.Load(), ok)
	// What the swaps changed is left, and named; nothing else fails.
	err := u.Undo()
	assert.True(t, onlyLeftBehind(err), "undo: %v", err)
	// newSentinel's cleanup proves the host tree unchanged.
}
