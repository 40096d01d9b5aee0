package nvcontainer

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/internal/testutil/container"
	"github.com/go-nvc/nvc/ldcache"
)

// imageLibs are an image's own libraries in its library directory, with
// their SONAME links (LIB is the layout's library directory).
const imageLibs = `
symlink LIB/libz.so.1 libz.so.1.2.13
symlink LIB/libz.so /LIB/libz.so.1.2.13
symlink LIB/libffi.so.8 libffi.so.8.1.2
`

// TestApplyLDCacheIncremental: on an image whose own cache was written
// after its libraries, step 8 keeps that cache's entries for the library
// directory Apply mounts into and reads only what Apply put there (the
// snapshot and the added paths): the cache it writes is the one a full
// rebuild of the configured container gives, except for the type the
// image's cache claims for libffi.so.8, which a reused directory keeps
// (the image lied about that name alone). Also where the plan replaces an
// image's SONAME link to an old driver library (an entry of the image's
// cache, read again: the SONAME's entry is the new library's). Fails if step 8 scans the directory
// (without the snapshot or the added paths), or if the added paths miss
// a mount or a link.
func TestApplyLDCacheIncremental(t *testing.T) {
	h := newTestHost(t)
	l := debianLayout
	p := h.testPlan(t, l, 1)
	for _, tc := range []struct {
		name, spec string
		reused     bool
	}{
		{"image-libs", imageLibs, true},
		{"image-links", imageLibs + imageLinks, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startImage(t, l, tc.spec)
			require.NoError(t, p.Apply(context.Background(), ctrOf(c), nil), "Apply")
			got, err := ldcache.Open(c.Path(ldCachePath))
			require.NoError(t, err)
			root := "/proc/" + strconv.Itoa(c.PID) + "/root" + c.Rootfs
			full, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Dirs: append(p.LDCache.FirstDirs, p.LDCache.Dirs...), NoLinks: true})
			require.NoError(t, err, "full Build")
			lied := false
			for i := range got.Entries {
				if e := &got.Entries[i]; e.Name == "libffi.so.8" && e.Flags == lie {
					e.Flags, lied = full.Entries[i].Flags, true
				}
			}
			require.Equal(t, tc.reused, lied, "the image's claim for libffi.so.8 kept (its directory reused)")
			gb, _ := got.MarshalBinary()
			fb, _ := full.MarshalBinary()
			if string(gb) != string(fb) {
				var g, w strings.Builder
				got.Print(&g, "step 8")
				full.Print(&w, "full")
				require.FailNow(t, "step 8's cache is not the full rebuild's", "%s\n%s", g.String(), w.String())
			}
		})
	}
}

// lie is the type the image's cache claims for libffi.so.8: i386's.
const lie = int32(ldcache.TypeLibc6)

// startImage starts a container on an image of layout l with spec added
// and its own loader cache written a clock tick after its files.
func startImage(t *testing.T, l Layout, spec string) *container.Container {
	t.Helper()
	dir := newRootfs(t, l)
	lib := l.LibDir[1:]
	testutil.BuildTree(t, dir, strings.ReplaceAll(spec, "LIB", lib))
	for _, f := range []struct{ file, soname string }{{"libz.so.1.2.13", "libz.so.1"}, {"libffi.so.8.1.2", "libffi.so.8"}, {"libcuda.so.535.104.05", "libcuda.so.1"}} {
		if f.soname == "libcuda.so.1" && !strings.Contains(spec, f.file) {
			continue
		}
		os.Remove(dir + "/" + lib + "/" + f.file)
		require.NoError(t, elfwriter.WriteFile(dir+"/"+lib+"/"+f.file, &elfwriter.Object{Soname: f.soname, Needed: []string{"libc.so.6"}}, 0o644))
	}
	time.Sleep(12 * time.Millisecond) // past the kernel's clock tick
	require.NoError(t, ldcache.Update(context.Background(), dir, nil), "the image's cache")
	c, err := ldcache.OpenInRoot(dir, ldCachePath)
	require.NoError(t, err)
	for i := range c.Entries {
		if c.Entries[i].Name == "libffi.so.8" {
			c.Entries[i].Flags = lie
		}
	}
	require.NoError(t, ldcache.WriteFileInRoot(dir, ldCachePath, c))
	return container.Start(t, &container.Options{Rootfs: dir})
}
