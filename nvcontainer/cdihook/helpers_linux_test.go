package cdihook

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

func TestMain(m *testing.M) {
	if how, ok := maskMethods[os.Getenv(envAsHook)]; ok {
		os.Exit(runAsHook(how))
	}
	os.Exit(m.Run())
}

// libRoot is a rootfs whose only library is /opt/nv/libnvtest.so.1, in a
// dir that neither ld.so.conf nor the loader's defaults name.
func libRoot(t *testing.T) string {
	t.Helper()
	root := testutil.Tree(t, "dir etc\nfile etc/ld.so.conf \"\"\ndir opt/nv\n")
	require.NoError(t, elfwriter.WriteFile(filepath.Join(root, "opt/nv/libnvtest.so.1"), elfwriter.Library("libnvtest.so.1"), 0o644))
	return root
}

func findInCache(t *testing.T, root, soname string) []ldcache.Entry {
	t.Helper()
	c, err := ldcache.OpenInRoot(root, "/etc/ld.so.cache")
	require.NoError(t, err)
	return c.Find(soname, ldcache.ArchX8664)
}

// updateLDCache runs UpdateLDCache on root with folders and requires it
// to succeed.
func updateLDCache(t *testing.T, root string, folders ...string) LDCacheResult {
	t.Helper()
	res, err := UpdateLDCache(context.Background(), root, &LDCacheOptions{Folders: folders})
	require.NoError(t, err, "UpdateLDCache(%v)", folders)
	return res
}

// runCompat runs EnableCUDACompat on root for a host driver version.
func runCompat(root, driver string) (CUDACompatResult, error) {
	return EnableCUDACompat(context.Background(), root, &CUDACompatOptions{HostDriverVersion: driver})
}

// createSymlinks runs CreateSymlinks on root with links.
func createSymlinks(root string, links ...Link) (SymlinksResult, error) {
	return CreateSymlinks(context.Background(), root, &SymlinksOptions{Links: links})
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".nvc-", "temporary left in %s", dir)
	}
}
