package ldcache_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// TestBuildGlobSymlinkBomb: an include pattern /a/*/*/… over a directory
// holding 40 symlinks to itself names 40^depth paths (glob(3) lists them
// all; depth 4 took 91 s before the limits). Build lists each directory
// once per pattern component, so it opens /a 1+40·(depth-1) times (seen
// by inotify), and the rest of the configuration still counts.
func TestBuildGlobSymlinkBomb(t *testing.T) {
	for _, depth := range []int{3, 6} {
		t.Run(fmt.Sprint("depth", depth), func(t *testing.T) {
			var spec strings.Builder
			pattern := "/a" + strings.Repeat("/*", depth)
			fmt.Fprintf(&spec, "file etc/ld.so.conf \"include %s\\n/opt/good\\n\"\nfile etc/debian_version \"12\\n\"\ndir a\n", pattern)
			for i := range 40 {
				fmt.Fprintf(&spec, "symlink a/l%02d /a\n", i)
			}
			root := testutil.Tree(t, spec.String())
			writeLibs(t, root, []lib{{"opt/good/libgood.so.1", x64("libgood.so.1")}})
			w := watchOpens(t, root+"/a")
			c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{NoLinks: true})
			require.NoError(t, err, "Build")
			assert.LessOrEqual(t, w.opens(t), 1+40*(depth-1), "Build opened /a too often")
			got := c.Find("libgood.so.1", ldcache.ArchX8664)
			if assert.Len(t, got, 1, "libgood.so.1 entries %+v", got) {
				assert.Equal(t, "/opt/good/libgood.so.1", got[0].Path, "libgood.so.1 entry")
			}
		})
	}
}

// TestBuildConfLimits: the configuration files of one Build hold at most
// 1 MiB together and 4096 directory lines count. Twenty includes of a
// file of almost 1 MiB read it once (inotify), and a directory named
// after 4096 others or in a file past the byte total is not scanned.
func TestBuildConfLimits(t *testing.T) {
	big := strings.Repeat("/nonexistent\n", 4096) + "/opt/late\n" + strings.Repeat("# padding line\n", (1<<20-4096*13-10-1024)/15)
	var spec strings.Builder
	fmt.Fprintf(&spec, "file etc/ld.so.conf \"/opt/first\\ninclude /etc/c/*.conf\\n\"\nfile etc/debian_version \"12\\n\"\n")
	fmt.Fprintf(&spec, "file etc/c/zz.conf \"/opt/past\\n\"\n")
	for i := range 20 {
		fmt.Fprintf(&spec, "symlink etc/c/%02d.conf /etc/big\n", i)
	}
	root := testutil.Tree(t, spec.String())
	testutil.BuildTree(t, root, fmt.Sprintf("file etc/big %q\n", big))
	writeLibs(t, root, []lib{
		{"opt/first/libfirst.so.1", x64("libfirst.so.1")},
		{"opt/late/liblate.so.1", x64("liblate.so.1")},
		{"opt/past/libpast.so.1", x64("libpast.so.1")},
	})
	w := watchOpens(t, root+"/etc/big")
	c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{NoLinks: true})
	require.NoError(t, err, "Build")
	assert.Equal(t, 1, w.opens(t), "Build opened the big file, want once")
	for soname, want := range map[string]int{"libfirst.so.1": 1, "liblate.so.1": 0, "libpast.so.1": 0} {
		assert.Len(t, c.Find(soname, ldcache.ArchX8664), want, "%s: entries", soname)
	}
}
