package driver_test

import (
	"os"
	"path/filepath"
	"runtime"
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
		root := testutil.Tree(t, "dir etc\n")
		p := filepath.Join(root, "etc/ld.so.cache")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, size); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := driver.Open(&driver.Options{Root: root, ProcRoot: root, DevRoot: root})
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "bytes, more than") {
			t.Errorf("size %d: Open error %v; want the size refused", size, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
			t.Errorf("size %d: Open allocated %d bytes", size, alloc)
		}
	}
}
