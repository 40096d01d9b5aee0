package ldcache_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// gccLib compiles a shared object with gcc, marked as needing an x86 ISA
// level through its GNU property note (-z x86-64-vN).
func gccLib(t *testing.T, out, soname, isa string) {
	t.Helper()
	gcc := testutil.RequireCommand(t, "gcc")
	src := filepath.Join(t.TempDir(), "lib.c")
	require.NoError(t, os.WriteFile(src, []byte("int nvc_isa(void) { return 1; }\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
	args := []string{"-shared", "-fPIC", "-o", out, "-Wl,-soname," + soname, src}
	if isa != "" {
		args = append(args, "-Wl,-z,"+isa)
	}
	b, err := exec.Command(gcc, args...).CombinedOutput()
	require.NoError(t, err, "gcc\n%s", b)
}

// TestISALevelLikeLdconfig: glibc records the x86 ISA level of libraries
// in glibc-hwcaps subdirectories in their hwcap word; Build reads the GNU
// property note of real (gcc-built) libraries and writes the same bytes.
func TestISALevelLikeLdconfig(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		testutil.Unavailable(t, "x86-64 ISA levels (GOARCH %s)", runtime.GOARCH)
	}
	root := testutil.Tree(t, "file etc/debian_version \"12\\n\"\n")
	dir := filepath.Join(root, "usr/lib/x86_64-linux-gnu")
	gccLib(t, filepath.Join(dir, "libisa.so.1.0"), "libisa.so.1", "x86-64-v3")
	gccLib(t, filepath.Join(dir, "glibc-hwcaps/x86-64-v3/libisa.so.1.0"), "libisa.so.1", "x86-64-v3")
	gccLib(t, filepath.Join(dir, "glibc-hwcaps/x86-64-v2/libisa.so.1.0"), "libisa.so.1", "x86-64-v2")
	gccLib(t, filepath.Join(dir, "glibc-hwcaps/x86-64-v4/libisa.so.1.0"), "libisa.so.1", "")
	want, glibc := glibcWrites(t, root, "-c", ldcache.FormatNew.String())
	levels := map[string]uint32{}
	for _, e := range glibc.Entries {
		levels[e.HWCaps] = e.ISALevel()
	}
	require.NotZero(t, levels["x86-64-v3"], "glibc recorded ISA levels %v; the fixture tests nothing", levels)
	require.NotZero(t, levels["x86-64-v2"], "glibc recorded ISA levels %v; the fixture tests nothing", levels)
	require.NotEqual(t, levels["x86-64-v2"], levels["x86-64-v3"], "glibc recorded ISA levels %v; the fixture tests nothing", levels)
	c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Generator: glibc.Generator, NoLinks: true})
	require.NoError(t, err, "Build")
	got, _ := c.MarshalBinary()
	if !bytes.Equal(got, want) {
		for i := range min(len(c.Entries), len(glibc.Entries)) {
			t.Logf("ours %+v\nglibc %+v", c.Entries[i], glibc.Entries[i])
		}
		assert.Fail(t, "cache differs from glibc's", "levels %v", levels)
	}
}
