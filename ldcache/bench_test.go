package ldcache_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

func BenchmarkParseHostCache(b *testing.B) {
	data, err := os.ReadFile("/etc/ld.so.cache")
	if err != nil {
		testutil.Unavailable(b, "no host cache: %v", err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ldcache.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// benchLibs is the size of the realistic root: a few hundred libraries,
// like a CUDA base image with the driver's libraries mounted in.
const benchLibs = 400

// buildWrite is our `ldconfig -r root -X`: build and write the cache.
func buildWrite(b *testing.B, root string) {
	c, err := ldcache.Build(root, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := ldcache.WriteFileInRoot(root, "/etc/ld.so.cache", c); err != nil {
		b.Fatal(err)
	}
}

func execLdconfig(b *testing.B, ldconfig, root string) {
	if out, err := exec.Command(ldconfig, "-r", root, "-X").CombinedOutput(); err != nil {
		b.Fatalf("ldconfig: %v\n%s", err, out)
	}
}

// BenchmarkBuildWrite compares Build+WriteFileInRoot with running glibc's
// `ldconfig -r ROOT -X` on the same root, alternating the two in one run,
// and reports each one's time per operation and their ratio (x-faster).
//
// In "container" the root has no usable auxiliary cache, as in a fresh
// container (an image's aux-cache records the inodes and ctimes of the
// machine that built it), so ldconfig reads every library, as Build
// does. In "aux-cache" the root keeps var/cache/ldconfig, which after the
// first run lets ldconfig skip reading unchanged files.
//
// "host-mirror" is a root holding this host's own libraries (hard links,
// about 600 real shared objects, no aux cache).
func BenchmarkBuildWrite(b *testing.B) {
	for _, aux := range []bool{false, true} {
		name := "container"
		if aux {
			name = "aux-cache"
		}
		b.Run(name, func(b *testing.B) {
			root := realisticRoot(b, benchLibs)
			if aux {
				testutil.BuildTree(b, root, "dir var/cache/ldconfig\n")
			}
			benchBuildWrite(b, root)
		})
	}
	b.Run("host-mirror", func(b *testing.B) { benchBuildWrite(b, hostMirror(b)) })
}

func benchBuildWrite(b *testing.B, root string) {
	ldconfig := ldconfig(b)
	testutil.RequireRoot(b)
	buildWrite(b, root)
	execLdconfig(b, ldconfig, root)
	var ours, theirs time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		buildWrite(b, root)
		t1 := time.Now()
		execLdconfig(b, ldconfig, root)
		ours, theirs = ours+t1.Sub(t0), theirs+time.Since(t1)
	}
	b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "nvc-ns/op")
	b.ReportMetric(float64(theirs.Nanoseconds())/float64(b.N), "ldconfig-ns/op")
	b.ReportMetric(float64(theirs)/float64(ours), "x-faster")
}

// BenchmarkBuild is Build alone on the same root, for profiling.
func BenchmarkBuild(b *testing.B) {
	root := realisticRoot(b, benchLibs)
	for b.Loop() {
		if _, err := ldcache.Build(root, nil); err != nil {
			b.Fatal(err)
		}
	}
}
