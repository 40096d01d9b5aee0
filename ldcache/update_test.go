package ldcache_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// hostLoader copies this host's glibc dynamic loader into root at
// /lib64/ld-linux-x86-64.so.2, gating t on there being one.
func hostLoader(t *testing.T, root string) {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		testutil.Unavailable(t, "the loader test uses x86-64 executables (GOARCH %s)", runtime.GOARCH)
	}
	b, err := os.ReadFile("/lib64/ld-linux-x86-64.so.2")
	if err != nil {
		testutil.Unavailable(t, "needs glibc's loader: %v", err)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "lib64"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "lib64/ld-linux-x86-64.so.2"), b, 0o755))
}

// runIn runs /bin/prog chrooted into root and returns its error and output.
func runIn(t *testing.T, root string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/prog")
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
	cmd.Dir = "/"
	cmd.Env = []string{}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func writeProg(t *testing.T, root, interp string, needed ...string) {
	t.Helper()
	p := filepath.Join(root, "bin/prog")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, elfwriter.WriteFile(p, &elfwriter.Object{Interp: interp, Needed: needed}, 0o755), p)
}

// TestLoaderUsesUpdatedCache: glibc's dynamic loader, in a chroot, finds a
// library that lives only in a directory named by ld.so.conf once Update
// wrote the cache, and fails without it.
func TestLoaderUsesUpdatedCache(t *testing.T) {
	testutil.RequireRoot(t)
	root := testutil.Tree(t, `
file etc/ld.so.conf "include /etc/ld.so.conf.d/*.conf\n"
file etc/ld.so.conf.d/nvc.conf "/opt/nvc/lib\n"
file etc/debian_version "12\n"
`)
	hostLoader(t, root)
	writeLibs(t, root, []lib{{"opt/nvc/lib/libnvctest.so.1.0", x64("libnvctest.so.1")}})
	writeProg(t, root, "/lib64/ld-linux-x86-64.so.2", "libnvctest.so.1")
	out, err := runIn(t, root)
	require.Error(t, err, "without a cache the program ran:\n%s", out)
	require.Contains(t, out, "libnvctest.so.1", "without a cache the program ran (err %v)", err)
	require.NoError(t, ldcache.Update(context.Background(), root, &ldcache.UpdateOptions{Links: true}), "Update")
	out, err = runIn(t, root)
	require.NoError(t, err, "with our cache the loader failed:\n%s", out)
}

// TestLoaderFirstDirsWin: with two libraries of one SONAME, the loader
// uses the one in FirstDirs (a good library) over the one in Dirs (which
// needs a missing library), and fails the other way round.
func TestLoaderFirstDirsWin(t *testing.T) {
	testutil.RequireRoot(t)
	root := testutil.Tree(t, "file etc/debian_version \"12\\n\"\n")
	hostLoader(t, root)
	writeLibs(t, root, []lib{
		{"usr/local/cuda/compat/libcuda.so.570.1", x64("libcuda.so.1")},
		{"usr/lib/nvidia/libcuda.so.550.54.15", x64("libcuda.so.1", "libmissing.so.9")},
	})
	writeProg(t, root, "/lib64/ld-linux-x86-64.so.2", "libcuda.so.1")
	good := &ldcache.UpdateOptions{FirstDirs: []string{"/usr/local/cuda/compat"}, Dirs: []string{"/usr/lib/nvidia"}, Links: true}
	require.NoError(t, ldcache.Update(context.Background(), root, good), "Update, compat dir first")
	out, err := runIn(t, root)
	require.NoError(t, err, "compat dir first: loader failed:\n%s", out)
	bad := &ldcache.UpdateOptions{FirstDirs: []string{"/usr/lib/nvidia"}, Dirs: []string{"/usr/local/cuda/compat"}}
	require.NoError(t, ldcache.Update(context.Background(), root, bad), "Update, driver dir first")
	out, err = runIn(t, root)
	require.Error(t, err, "driver dir first: the loader should have taken the broken library:\n%s", out)
	require.Contains(t, out, "libmissing.so.9", "driver dir first: the loader should have taken the broken library (err %v)", err)
}

// TestMuslLoaderUsesPathFile: musl's loader finds a library in a directory
// Update added to /etc/ld-musl-x86_64.path.
func TestMuslLoaderUsesPathFile(t *testing.T) {
	testutil.RequireRoot(t)
	if runtime.GOARCH != "amd64" {
		testutil.Unavailable(t, "x86-64 only (GOARCH %s)", runtime.GOARCH)
	}
	musl, err := os.ReadFile("/lib/ld-musl-x86_64.so.1")
	if err != nil {
		testutil.Unavailable(t, "needs musl's loader (Debian package musl): %v", err)
	}
	root := testutil.Tree(t, "dir etc\n")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "lib"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "lib/ld-musl-x86_64.so.1"), musl, 0o755))
	writeLibs(t, root, []lib{{"opt/drv/libnvctest.so.1", x64("libnvctest.so.1")}})
	writeProg(t, root, "/lib/ld-musl-x86_64.so.1", "libnvctest.so.1")
	out, err := runIn(t, root)
	require.Error(t, err, "without a path file the program ran:\n%s", out)
	fam, err := ldcache.DetectFamily(root, "")
	require.NoError(t, err, "DetectFamily")
	require.Equal(t, ldcache.FamilyMusl, fam, "DetectFamily")
	require.NoError(t, ldcache.Update(context.Background(), root, &ldcache.UpdateOptions{Dirs: []string{"/opt/drv"}}), "Update")
	out, err = runIn(t, root)
	require.NoError(t, err, "with the path file musl's loader failed:\n%s", out)
	got, _ := os.ReadFile(filepath.Join(root, "etc/ld-musl-x86_64.path"))
	assert.Equal(t, "/opt/drv\n/lib\n/usr/local/lib\n/usr/lib\n", string(got), "path file")
}

func TestUpdateMuslKeepsExistingPath(t *testing.T) {
	root := testutil.Tree(t, `
file lib/ld-musl-x86_64.so.1 "x"
file etc/ld-musl-x86_64.path "/usr/lib:/opt/old\n/lib\n"
`)
	opts := &ldcache.UpdateOptions{FirstDirs: []string{"/compat"}, Dirs: []string{"/drv", "/opt/old"}, GOARCH: "amd64"}
	require.NoError(t, ldcache.Update(context.Background(), root, opts), "Update")
	got, _ := os.ReadFile(filepath.Join(root, "etc/ld-musl-x86_64.path"))
	assert.Equal(t, "/compat\n/drv\n/opt/old\n/usr/lib\n/lib\n", string(got), "path file")
}

// TestUpdateHostileRoot: symlinks planted in the rootfs — the cache file
// and the configuration pointing at host files, library directories and
// include globs reaching out with absolute targets and ".." chains — never
// make Update read or write outside the rootfs.
func TestUpdateHostileRoot(t *testing.T) {
	host := testutil.Tree(t, `
file etc/ld.so.cache "host cache, must not change"
file etc/ld.so.conf "/hostonly\n"
file conf.d/evil.conf "/hostonly\n"
`)
	writeLibs(t, host, []lib{{"hostonly/libhost.so.1", x64("libhost.so.1")}})
	root := testutil.Tree(t, strings.ReplaceAll(`
file etc/debian_version "12\n"
symlink etc/ld.so.cache HOST/etc/ld.so.cache
file etc/ld.so.conf "include ../../../../HOST/conf.d/*.conf\ninclude HOST/conf.d/*.conf\n/hostlink\n/dotdot\n/opt/drv\n"
symlink hostlink HOST/hostonly
symlink dotdot ../../../../../HOST/hostonly
`, "HOST", host))
	writeLibs(t, root, []lib{{"opt/drv/libdrv.so.1", x64("libdrv.so.1")}})
	require.NoError(t, ldcache.Update(context.Background(), root, &ldcache.UpdateOptions{Links: true}), "Update")
	b, _ := os.ReadFile(filepath.Join(host, "etc/ld.so.cache"))
	require.Equal(t, "host cache, must not change", string(b), "the host's file was changed")
	fi, err := os.Lstat(filepath.Join(root, "etc/ld.so.cache"))
	require.NoError(t, err, "rootfs cache")
	require.True(t, fi.Mode().IsRegular(), "rootfs cache %v: want a regular 0644 file replacing the symlink", fi.Mode())
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "rootfs cache: want a regular 0644 file replacing the symlink")
	c, err := ldcache.Open(filepath.Join(root, "etc/ld.so.cache"))
	require.NoError(t, err, "Open")
	var names []string
	for _, e := range c.Entries {
		names = append(names, e.Name+" "+e.Path)
	}
	assert.Equal(t, []string{"libdrv.so.1 /opt/drv/libdrv.so.1"}, names, "entries (nothing from the host)")
	_, err = os.Lstat(filepath.Join(host, "hostonly/libhost.so.1.so"))
	assert.Error(t, err, "Update wrote into the host's directory")
	ents, _ := os.ReadDir(filepath.Join(host, "hostonly"))
	assert.Len(t, ents, 1, "host directory changed: %v", ents)
}

// TestUpdateEtcSymlinkOut: /etc itself points at a host directory; the
// write lands inside the rootfs (or fails), never in the host directory.
func TestUpdateEtcSymlinkOut(t *testing.T) {
	host := testutil.Tree(t, "file etc/ld.so.cache \"host\"\n")
	root := testutil.Tree(t, "symlink etc "+filepath.Join(host, "etc")+"\n")
	err := ldcache.Update(context.Background(), root, &ldcache.UpdateOptions{GOARCH: "amd64", Family: ldcache.FamilyLib64})
	b, _ := os.ReadFile(filepath.Join(host, "etc/ld.so.cache"))
	require.Equal(t, "host", string(b), "host file changed (Update error: %v)", err)
	if err == nil {
		_, serr := os.Stat(filepath.Join(root, host, "etc/ld.so.cache"))
		require.NoError(t, serr, "Update succeeded but wrote no file inside the rootfs")
	}
}

// TestUpdateMatchesLdconfigWithDirs: Update with extra directories writes
// what glibc's `ldconfig -r ROOT DIRS…` writes.
func TestUpdateMatchesLdconfigWithDirs(t *testing.T) {
	root := debianRoot(t)
	writeLibs(t, root, []lib{
		{"drv/lib64/libcuda.so.550.54.15", x64("libcuda.so.1")},
		{"compat/libcuda.so.570.10", x64("libcuda.so.1")},
		{"drv/lib32/libcuda.so.550.54.15", i386("libcuda.so.1", "libc.so.6")},
	})
	want, glibc := glibcWrites(t, root, "/compat", "/drv/lib64", "/drv/lib32")
	opts := &ldcache.UpdateOptions{FirstDirs: []string{"/compat"}, Dirs: []string{"/drv/lib64", "/drv/lib32"}, Generator: glibc.Generator}
	require.NoError(t, ldcache.Update(context.Background(), root, opts), "Update")
	got, _ := os.ReadFile(filepath.Join(root, "etc/ld.so.cache"))
	if !bytes.Equal(got, want) {
		assert.Fail(t, "Update's cache differs from glibc's", "Update wrote %d bytes, glibc %d; listings:\n%s\n%s", len(got), len(want), printed(t, filepath.Join(root, "etc/ld.so.cache")), printed(t, filepath.Join(root, "etc/glibc.cache")))
	}
	cuda := glibc.Find("libcuda.so.1", ldcache.ArchX8664)
	if assert.Len(t, cuda, 2, "libcuda.so.1 entries %+v: want the compat one first", cuda) {
		assert.Equal(t, "/compat/libcuda.so.1", cuda[0].Path, "libcuda.so.1 entries: want the compat one first")
	}
}
