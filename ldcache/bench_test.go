package ldcache_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
		_, err := ldcache.Parse(data)
		require.NoError(b, err, "Parse")
	}
}

// benchLibs is the size of the realistic root: a few hundred libraries,
// like a CUDA base image with the driver's libraries mounted in.
const benchLibs = 400

// benchCase is one like-for-like comparison: what we run and the glibc
// ldconfig arguments (after -r ROOT) that do the same work.
type benchCase struct {
	name string
	root func(b *testing.B) string
	args []string
	ours func(b *testing.B, root string)
}

// BenchmarkBuildWrite compares our Build (+ WriteFileInRoot) with running
// glibc's `ldconfig -r ROOT` on the same root, alternating the two in one
// run, and reports each one's wall time and CPU time (user + system, all
// threads) per operation and their ratios (x-faster, x-less-cpu).
//
// Both sides do the same work in each case. glibc 2.36's ldconfig
// chroots into ROOT, lstat()s and stat()s each candidate (following
// links), opens and mmaps every file it has not read yet in this run
// (nor found in its auxiliary cache), writes the
// cache to ld.so.cache~, fchmods, fsyncs and renames it; when
// /var/cache/ldconfig exists it also writes the auxiliary cache
// (fdatasync, rename). Build reads each candidate (no aux cache) and
// WriteFileInRoot writes, fsyncs and renames the same bytes.
//
//   - container: a fresh container root (400 libraries in three
//     directories, each with its SONAME and development symlinks, no
//     /var/cache): ldconfig -X reads every library, as Build does, and
//     saves no aux cache.
//   - links: the same, without -X on either side (Links: true): both also
//     check every SONAME symlink (already in place, so none is changed).
//   - scan-only: ldconfig -N -X against Build alone: nothing is written
//     (no fsync). Not like for like, it favours us: without -N, ldconfig
//     remembers each file it read by inode (its in-memory aux cache) and
//     reads a library once however many links lead to it; with -N it
//     keeps no such cache and reads the library again through every link
//     (three times here).
//   - aux-cache: the root keeps /var/cache/ldconfig, so after the first
//     run ldconfig finds every library in its aux cache and reads none
//     (it still stats them, and writes and fdatasyncs the aux cache).
//     Build reads them all: this is not like for like, it favours glibc.
//   - host-mirror: this host's own libraries (hard links, about 600 real
//     shared objects), -X, no aux cache.
func BenchmarkBuildWrite(b *testing.B) {
	fresh := func(b *testing.B) string { return realisticRoot(b, benchLibs) }
	cases := []benchCase{
		{name: "container", root: fresh, args: []string{"-X"}, ours: buildWrite},
		{name: "links", root: fresh, ours: buildWriteLinks},
		{name: "scan-only", root: fresh, args: []string{"-N", "-X"}, ours: buildOnly},
		{name: "aux-cache", root: func(b *testing.B) string {
			root := fresh(b)
			testutil.BuildTree(b, root, "dir var/cache/ldconfig\n")
			return root
		}, args: []string{"-X"}, ours: buildWrite},
		{name: "host-mirror", root: func(b *testing.B) string { return hostMirror(b) }, args: []string{"-X"}, ours: buildWrite},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) { benchAgainst(b, c) })
	}
}

// buildWrite is our `ldconfig -r root -X`: build and write the cache.
func buildWrite(b *testing.B, root string) { writeCache(b, root, build(b, root, false)) }

// buildWriteLinks is our `ldconfig -r root`: links, build and write.
func buildWriteLinks(b *testing.B, root string) { writeCache(b, root, build(b, root, true)) }

// buildOnly is our `ldconfig -r root -N -X`.
func buildOnly(b *testing.B, root string) { build(b, root, false) }

func build(b *testing.B, root string, links bool) *ldcache.Cache {
	c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{NoLinks: !links})
	require.NoError(b, err, "Build")
	return c
}

func writeCache(b *testing.B, root string, c *ldcache.Cache) {
	require.NoError(b, ldcache.WriteFileInRoot(root, "/etc/ld.so.cache", c), "WriteFileInRoot")
}

func benchAgainst(b *testing.B, c benchCase) {
	ldconfig := testutil.GlibcLdconfig(b)
	testutil.RequireRoot(b)
	root, ours := c.root(b), c.ours
	peer := newPeer(b, ldconfig, append([]string{"-r", root}, c.args...))
	ours(b, root)
	peer.run(b) // warm: ldconfig's aux cache, the page cache
	var m benchMeter
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.ours(b, func() { ours(b, root) })
		m.peer(b, peer)
	}
	m.report(b)
}

// peer runs glibc's ldconfig with its standard error going to a file, so
// that no pipe or copying goroutine is charged to it.
type peer struct {
	path   string
	args   []string
	stderr *os.File
}

func newPeer(b *testing.B, path string, args []string) *peer {
	f, err := os.Create(filepath.Join(b.TempDir(), "stderr"))
	require.NoError(b, err)
	b.Cleanup(func() { f.Close() })
	return &peer{path: path, args: args, stderr: f}
}

// run runs ldconfig once and returns its CPU time.
func (p *peer) run(b *testing.B) time.Duration {
	cmd := exec.Command(p.path, p.args...)
	cmd.Stderr = p.stderr
	if err := cmd.Run(); err != nil {
		msg, _ := os.ReadFile(p.stderr.Name())
		require.NoError(b, err, "ldconfig %v\n%s", p.args, msg)
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// benchMeter adds up wall and CPU time of both sides.
type benchMeter struct {
	nvc, glibc       time.Duration
	nvcCPU, glibcCPU time.Duration
}

func (m *benchMeter) ours(b *testing.B, f func()) {
	c0, t0 := selfCPU(b), time.Now()
	f()
	m.nvc += time.Since(t0)
	m.nvcCPU += selfCPU(b) - c0
}

func (m *benchMeter) peer(b *testing.B, p *peer) {
	t0 := time.Now()
	cpu := p.run(b)
	m.glibc += time.Since(t0)
	m.glibcCPU += cpu
}

func (m *benchMeter) report(b *testing.B) {
	n := float64(b.N)
	b.ReportMetric(float64(m.nvc.Nanoseconds())/n, "nvc-ns/op")
	b.ReportMetric(float64(m.glibc.Nanoseconds())/n, "ldconfig-ns/op")
	b.ReportMetric(float64(m.glibc)/float64(m.nvc), "x-faster")
	b.ReportMetric(float64(m.nvcCPU.Nanoseconds())/n, "nvc-cpu-ns/op")
	b.ReportMetric(float64(m.glibcCPU.Nanoseconds())/n, "ldconfig-cpu-ns/op")
	if m.nvcCPU > 0 {
		b.ReportMetric(float64(m.glibcCPU)/float64(m.nvcCPU), "x-less-cpu")
	}
}

// selfCPU is this process's user and system time so far, all threads.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru), "getrusage")
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBuild is Build alone on the same root, for profiling; cpu-ns/op
// is the process's CPU time per Build, all threads.
func BenchmarkBuild(b *testing.B) {
	root := realisticRoot(b, benchLibs)
	cpu0 := selfCPU(b)
	for b.Loop() {
		_, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{NoLinks: true})
		require.NoError(b, err, "Build")
	}
	b.ReportMetric(float64(selfCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}
