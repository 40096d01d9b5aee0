package ldcache

import (
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// hostLibs returns up to n regular shared objects of this host.
func hostLibs(b *testing.B, n int) []string {
	files, _ := filepath.Glob("/usr/lib/x86_64-linux-gnu/lib*.so.*")
	var out []string
	for _, f := range files {
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
			out = append(out, f)
		}
		if len(out) == n {
			break
		}
	}
	if len(out) < n {
		b.Skipf("found %d host libraries, want %d", len(out), n)
	}
	return out
}

// BenchmarkReadSONAME compares the reader Build uses with debug/elf on the
// same real libraries: open, read class, machine and SONAME, close. Run
// both sub-benchmarks and compare ns/op.
func BenchmarkReadSONAME(b *testing.B) {
	libs := hostLibs(b, 100)
	b.Run("debug-elf", func(b *testing.B) {
		for b.Loop() {
			for _, p := range libs {
				f, err := elf.Open(p)
				require.NoError(b, err, p)
				_, err = f.DynString(elf.DT_SONAME)
				require.NoError(b, err, "%s: DT_SONAME", p)
				f.Close()
			}
		}
	})
	b.Run("ldcache", func(b *testing.B) {
		t, _ := newTarget("amd64")
		buf := make([]byte, scratchSize)
		for b.Loop() {
			for _, p := range libs {
				f, err := os.Open(p)
				require.NoError(b, err)
				st, _ := f.Stat()
				fr := newFileReader(f, buf, func() (uint64, bool) { return uint64(st.Size()), true })
				_, ok := t.readLib(fr, filepath.Base(p))
				require.True(b, ok, "%s: not read", p)
				f.Close()
			}
		}
	})
}
