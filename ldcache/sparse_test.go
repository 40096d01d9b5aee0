package ldcache_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// TestOpenRefusesHugeCache: a cache file claiming more than MaxCacheSize
// (sparse: 1 TiB, or just past the limit) is refused by Open and
// OpenInRoot by its size, as ErrCorrupt for Open, before a buffer of that
// size is allocated.
func TestOpenRefusesHugeCache(t *testing.T) {
	for _, size := range []int64{1 << 40, ldcache.MaxCacheSize + 1} {
		root := testutil.Tree(t, "dir etc\n")
		p := filepath.Join(root, "etc/ld.so.cache")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, size); err != nil {
			t.Fatal(err)
		}
		for name, open := range map[string]func() error{
			"Open":       func() error { _, err := ldcache.Open(p); return err },
			"OpenInRoot": func() error { _, err := ldcache.OpenInRoot(root, "/etc/ld.so.cache"); return err },
		} {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := open()
			runtime.ReadMemStats(&after)
			if err == nil || (name == "Open" && !errors.Is(err, ldcache.ErrCorrupt)) {
				t.Errorf("%s of %d bytes: %v; want an error (ErrCorrupt for Open)", name, size, err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("%s of %d bytes allocated %d bytes", name, size, alloc)
			}
		}
	}
}
