package nvcontainer

import (
	"bufio"
	"context"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/ldcache"
)

// TestApplyLDCacheKnown: with ApplyOptions.Libraries (the driver the
// plan was made from), step 8 writes the cache it writes without, and
// reads none of the mounted libraries in the rootfs (the bytes the
// process reads drop by about their heads'); facts that belong to
// another file (every source given the first library's) change nothing
// and are not taken. Fails if step 8 ignores the driver's readings, or
// trusts readings that do not belong to the file mounted.
func TestApplyLDCacheKnown(t *testing.T) {
	h := newTestHost(t)
	l := debianLayout
	p := h.testPlan(t, l, 1)
	heads := libraryHeads(t, p)
	require.Positive(t, heads, "the plan mounts no library into its cache directories")
	first, ok := h.host.Driver.LDCacheLibrary(firstLibrary(p))
	require.True(t, ok, "the driver kept no reading of %s", firstLibrary(p))
	apply := func(t *testing.T, src LibrarySource) ([]byte, int64) {
		c := startImage(t, l, imageLibs)
		r0 := readBytes(t)
		require.NoError(t, p.Apply(context.Background(), ctrOf(c), &ApplyOptions{Libraries: src}), "Apply")
		read := readBytes(t) - r0
		b, err := os.ReadFile(c.Path(ldCachePath))
		require.NoError(t, err)
		return b, read
	}
	want, readAll := apply(t, nil)
	t.Run("driver", func(t *testing.T) {
		got, read := apply(t, h.host.Driver)
		require.Equal(t, want, got, "the cache differs with the driver's readings")
		require.GreaterOrEqual(t, readAll-read, heads*9/10, "Apply read %d bytes with the driver's readings, %d without: the mounted libraries (%d bytes of heads) were read", read, readAll, heads)
	})
	t.Run("wrong", func(t *testing.T) {
		got, read := apply(t, sameLibrary{first})
		require.Equal(t, want, got, "the cache differs with another file's readings")
		require.Less(t, readAll-read, heads/2, "Apply read %d bytes with another file's readings, %d without: they were taken", read, readAll)
	})
}

// sameLibrary gives every source the one Library.
type sameLibrary struct{ l ldcache.Library }

func (s sameLibrary) LDCacheLibrary(string) (ldcache.Library, bool) { return s.l, true }

// libraryHeads is what step 8 reads of the plan's libraries in its
// directories: up to 4 KiB of each.
func libraryHeads(t *testing.T, p *Plan) int64 {
	dirs := append(slices.Clip(p.LDCache.FirstDirs), p.LDCache.Dirs...)
	var n int64
	for _, m := range p.Mounts {
		if (m.Kind == MountLibrary || m.Kind == MountLibrary32) && slices.Contains(dirs, path.Dir(m.Target)) {
			st, err := os.Stat(m.Source)
			require.NoError(t, err)
			n += min(st.Size(), 4096)
		}
	}
	return n
}

func firstLibrary(p *Plan) string {
	for _, m := range p.Mounts {
		if m.Kind == MountLibrary {
			return m.Source
		}
	}
	return ""
}

// readBytes is the bytes this process has read with read system calls
// (rchar of /proc/self/io).
func readBytes(t *testing.T) int64 {
	f, err := os.Open("/proc/self/io")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	require.FailNow(t, "no rchar in /proc/self/io")
	return 0
}
