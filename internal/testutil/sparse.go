package testutil

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// SparseFile makes a new temp dir holding rel, with its parent
// directories, as a sparse file of size bytes (a file that claims far
// more than the disk holds), and returns the dir.
func SparseFile(tb testing.TB, rel string, size int64) string {
	tb.Helper()
	root := tb.TempDir()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		tb.Fatal(err)
	}
	return root
}

// MinAlloc returns the fewest bytes f allocated in five runs (other
// goroutines may allocate meanwhile) and the error of f's last run.
func MinAlloc(f func() error) (uint64, error) {
	least := ^uint64(0)
	var err error
	for range 5 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err = f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least, err
}
