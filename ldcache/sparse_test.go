package ldcache_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

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
			t.Run(fmt.Sprintf("%s/%d", name, size), func(t *testing.T) {
				alloc, err := testutil.MinAlloc(open)
				assert.Error(t, err, "%s of %d bytes: want an error", name, size)
				if name == "Open" {
					assert.ErrorIs(t, err, ldcache.ErrCorrupt, "%s of %d bytes", name, size)
				}
				assert.LessOrEqual(t, alloc, uint64(16<<20), "%s of %d bytes allocated too much", name, size)
			})
		}
	}
}
