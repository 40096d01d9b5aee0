package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
)

// The program AddCUDAProgram writes runs under the host's loader only when
// libcuda.so.1 is found.
func TestAddCUDAProgram(t *testing.T) {
	root := t.TempDir()
	AddCUDAProgram(t, root)
	for _, p := range []string{HostLoader, HostLibc} {
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(root, p))
		require.NoError(t, err, "%s in the rootfs", p)
		require.True(t, string(got) == string(want), "%s in the rootfs is not the host's", p)
	}
	prog := filepath.Join(root, CUDAProgram)
	libs := t.TempDir()
	out, err := exec.Command(HostLoader, "--library-path", libs, prog).CombinedOutput()
	require.Error(t, err, "without libcuda.so.1: want the loader to fail naming it: %s", out)
	require.Contains(t, string(out), "libcuda.so.1", "without libcuda.so.1: want the loader to fail naming it")
	require.NoError(t, elfwriter.WriteFile(filepath.Join(libs, "libcuda.so.1"), elfwriter.Library("libcuda.so.1", "libc.so.6"), 0o644))
	out, err = exec.Command(HostLoader, "--library-path", libs, prog).CombinedOutput()
	require.NoError(t, err, "with libcuda.so.1:\n%s", out)
}

// LdconfigEntries reads back a cache glibc's ldconfig wrote for a root.
func TestLdconfigEntries(t *testing.T) {
	RequireRoot(t) // ldconfig -r chroots
	root := Tree(t, "file etc/ld.so.conf \"/opt/x\\n\"\ndir opt/x\n")
	require.NoError(t, elfwriter.WriteFile(filepath.Join(root, "opt/x/libfoo.so.1"), elfwriter.Library("libfoo.so.1", "libc.so.6"), 0o644))
	out, err := exec.Command(GlibcLdconfig(t), "-r", root).CombinedOutput()
	require.NoError(t, err, "ldconfig -r:\n%s", out)
	got := LdconfigEntries(t, filepath.Join(root, "etc/ld.so.cache"))
	assert.Equal(t, []string{"libfoo.so.1 (libc6,x86-64) => /opt/x/libfoo.so.1"}, got, "entries")
}
