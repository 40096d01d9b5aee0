package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s in the rootfs: %v, or not the host's", p, err)
		}
	}
	prog := filepath.Join(root, CUDAProgram)
	libs := t.TempDir()
	out, err := exec.Command(HostLoader, "--library-path", libs, prog).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "libcuda.so.1") {
		t.Fatalf("without libcuda.so.1: %v, %s; want the loader to fail naming it", err, out)
	}
	if err := elfwriter.WriteFile(filepath.Join(libs, "libcuda.so.1"), elfwriter.Library("libcuda.so.1", "libc.so.6"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(HostLoader, "--library-path", libs, prog).CombinedOutput(); err != nil {
		t.Fatalf("with libcuda.so.1: %v\n%s", err, out)
	}
}

// LdconfigEntries reads back a cache glibc's ldconfig wrote for a root.
func TestLdconfigEntries(t *testing.T) {
	RequireRoot(t) // ldconfig -r chroots
	root := Tree(t, "file etc/ld.so.conf \"/opt/x\\n\"\ndir opt/x\n")
	if err := elfwriter.WriteFile(filepath.Join(root, "opt/x/libfoo.so.1"), elfwriter.Library("libfoo.so.1", "libc.so.6"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(GlibcLdconfig(t), "-r", root).CombinedOutput(); err != nil {
		t.Fatalf("ldconfig -r: %v\n%s", err, out)
	}
	got := LdconfigEntries(t, filepath.Join(root, "etc/ld.so.cache"))
	if want := []string{"libfoo.so.1 (libc6,x86-64) => /opt/x/libfoo.so.1"}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries %q, want %q", got, want)
	}
}
