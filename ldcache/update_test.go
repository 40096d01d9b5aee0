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
	if err := os.MkdirAll(filepath.Join(root, "lib64"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "lib64/ld-linux-x86-64.so.2"), b, 0o755); err != nil {
		t.Fatal(err)
	}
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
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := elfwriter.WriteFile(p, &elfwriter.Object{Interp: interp, Needed: needed}, 0o755); err != nil {
		t.Fatal(err)
	}
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
	if err == nil || !strings.Contains(out, "libnvctest.so.1") {
		t.Fatalf("without a cache the program ran (err %v):\n%s", err, out)
	}
	if err := ldcache.Update(context.Background(), root, &ldcache.UpdateOptions{Links: true}); err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(t, root); err != nil {
		t.Fatalf("with our cache the loader failed: %v\n%s", err, out)
	}
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
	if err := ldcache.Update(context.Background(), root, good); err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(t, root); err != nil {
		t.Fatalf("compat dir first: loader failed: %v\n%s", err, out)
	}
	bad := &ldcache.UpdateOptions{FirstDirs: []string{"/usr/lib/nvidia"}, Dirs: []string{"/usr/local/cuda/compat"}}
	if err := ldcache.Update(context.Background(), root, bad); err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(t, root); err == nil || !strings.Contains(out, "libmissing.so.9") {
		t.Fatalf("driver dir first: the loader should have taken the broken library (err %v):\n%s", err, out)
	}
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
	if err := os.MkdirAll(filepath.Join(root, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "lib/ld-musl-x86_64.so.1"), musl, 0o755); err != nil {
		t.Fatal(err)
	}
	writeLibs(t, root, []lib{{"opt/drv/libnvctest.so.1", x64("libnvctest.so.1")}})
	writeProg(t, root, "/lib/ld-musl-x86_64.so.1", "libnvctest.so.1")
	if out, err := runIn(t, root); err == nil {
		t.Fatalf("without a path file the program ran:\n%s", out)
	}
	if fam, err := ldcache.DetectFamily(root, ""); err != nil || fam != ldcache.FamilyMusl {
		t.Fatalf("DetectFamily = %v, %v; want musl", fam, err)
	}
	if err := ldcache.Update(context.Background(), root, &ldcache.UpdateOptions{Dirs: []string{"/opt/drv"}}); err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(t, root); err != nil {
		t.Fatalf("with the path file musl's loader failed: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(filepath.Join(root, "etc/ld-musl-x86_64.path"))
	if want := "/opt/drv\n/lib\n/usr/local/lib\n/usr/lib\n"; string(got) != want {
		t.Errorf("path file = %q, want %q", got, want)
	}
}

func TestUpdateMuslKeepsExistingPath(t *testing.T) {
	root := testutil.Tree(t, `
file lib/ld-musl-x86_64.so.1 "x"
file etc/ld-musl-x86_64.path "/usr/lib:/opt/old\n/lib\n"
`)
	opts := &ldcache.UpdateOptions{FirstDirs: []string{"/compat"}, Dirs: []string{"/drv", "/opt/old"}, GOARCH: "amd64"}
	if err := ldcache.Update(context.Background(), root, opts); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(root, "etc/ld-musl-x86_64.path"))
	if want := "/compat\n/drv\n/opt/old\n/usr/lib\n/lib\n"; string(got) != want {
		t.Errorf("path file = %q, want %q", got, want)
	}
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
	if err := ldcache.Update(context.Background(), root, &ldcache.UpdateOptions{Links: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(host, "etc/ld.so.cache")); string(b) != "host cache, must not change" {
		t.Fatalf("the host's file was changed: %q", b)
	}
	fi, err := os.Lstat(filepath.Join(root, "etc/ld.so.cache"))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
		t.Fatalf("rootfs cache: %v, %v; want a regular 0644 file replacing the symlink", fi, err)
	}
	c, err := ldcache.Open(filepath.Join(root, "etc/ld.so.cache"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range c.Entries {
		names = append(names, e.Name+" "+e.Path)
	}
	if want := []string{"libdrv.so.1 /opt/drv/libdrv.so.1"}; strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("entries %q, want %q (nothing from the host)", names, want)
	}
	if _, err := os.Lstat(filepath.Join(host, "hostonly/libhost.so.1.so")); err == nil {
		t.Error("Update wrote into the host's directory")
	}
	if ents, _ := os.ReadDir(filepath.Join(host, "hostonly")); len(ents) != 1 {
		t.Errorf("host directory changed: %v", ents)
	}
}

// TestUpdateEtcSymlinkOut: /etc itself points at a host directory; the
// write lands inside the rootfs (or fails), never in the host directory.
func TestUpdateEtcSymlinkOut(t *testing.T) {
	host := testutil.Tree(t, "file etc/ld.so.cache \"host\"\n")
	root := testutil.Tree(t, "symlink etc "+filepath.Join(host, "etc")+"\n")
	err := ldcache.Update(context.Background(), root, &ldcache.UpdateOptions{GOARCH: "amd64", Family: ldcache.FamilyLib64})
	if b, _ := os.ReadFile(filepath.Join(host, "etc/ld.so.cache")); string(b) != "host" {
		t.Fatalf("host file changed to %q (Update error: %v)", b, err)
	}
	if err == nil {
		if _, serr := os.Stat(filepath.Join(root, host, "etc/ld.so.cache")); serr != nil {
			t.Fatalf("Update succeeded but wrote no file inside the rootfs: %v", serr)
		}
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
	if err := ldcache.Update(context.Background(), root, opts); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(root, "etc/ld.so.cache"))
	if !bytes.Equal(got, want) {
		t.Errorf("Update wrote %d bytes, glibc %d; listings:\n%s\n%s", len(got), len(want), printed(t, filepath.Join(root, "etc/ld.so.cache")), printed(t, filepath.Join(root, "etc/glibc.cache")))
	}
	cuda := glibc.Find("libcuda.so.1", ldcache.ArchX8664)
	if len(cuda) != 2 || cuda[0].Path != "/compat/libcuda.so.1" {
		t.Errorf("libcuda.so.1 entries %+v: want the compat one first", cuda)
	}
}
