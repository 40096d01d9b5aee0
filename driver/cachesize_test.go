package driver_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
			_, err := driver.Open(&driver.Options{Roots: driver.Roots{Driver: root, Proc: root, Dev: root}})
			return err
		})
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			require.Error(t, err, "size %d: want the size refused", size)
			assert.Contains(t, err.Error(), "bytes, more than", "size %d: want the size refused", size)
			assert.LessOrEqual(t, alloc, uint64(16<<20), "size %d: Open allocated %d bytes", size, alloc)
		})
	}
}
