package ldcache_test

import (
	"errors"
	"path/filepath"
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
		root := testutil.SparseFile(t, "etc/ld.so.cache", size)
		p := filepath.Join(root, "etc/ld.so.cache")
		for name, open := range map[string]func() error{
			"Open":       func() error { _, err := ldcache.Open(p); return err },
			"OpenInRoot": func() error { _, err := ldcache.OpenInRoot(root, "/etc/ld.so.cache"); return err },
		} {
			alloc, err := testutil.MinAlloc(open)
			if err == nil || (name == "Open" && !errors.Is(err, ldcache.ErrCorrupt)) {
				t.Errorf("%s of %d bytes: %v; want an error (ErrCorrupt for Open)", name, size, err)
			}
			if alloc > 16<<20 {
				t.Errorf("%s of %d bytes allocated %d bytes", name, size, alloc)
			}
		}
	}
}
