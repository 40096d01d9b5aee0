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
