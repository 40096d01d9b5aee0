package driver_test

import (
	"strings"
	"testing"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// TestOpenRefusesHugeCache: a driver root whose ld.so.cache claims more
// than ldcache.MaxCacheSize (a sparse file: 1 TiB, or just past the limit)
// is refused by its size, before a buffer of that size is allocated.
func TestOpenRefusesHugeCache(t *testing.T) {
	for _, size := range []int64{1 << 40, ldcache.MaxCacheSize + 1} {
		root := testutil.SparseFile(t, "etc/ld.so.cache", size)
		alloc, err := testutil.MinAlloc(func() error {
			_, err := driver.Open(&driver.Options{Root: root, ProcRoot: root, DevRoot: root})
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "bytes, more than") {
			t.Errorf("size %d: Open error %v; want the size refused", size, err)
		}
		if alloc > 16<<20 {
			t.Errorf("size %d: Open allocated %d bytes", size, alloc)
		}
	}
}
