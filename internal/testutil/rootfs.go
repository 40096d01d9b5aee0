package testutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-nvc/nvc/internal/elfwriter"
)

// HostLoader and HostLibc are this machine's glibc dynamic loader and C
// library, at their Debian x86-64 paths. Tests copy them into a rootfs
// (at the same paths) so that the real loader runs programs there.
const (
	HostLoader = "/lib64/ld-linux-x86-64.so.2"
	HostLibc   = "/lib/x86_64-linux-gnu/libc.so.6"
)

// CUDAProgram is the path, inside a rootfs, of the program
// [AddCUDAProgram] writes.
const CUDAProgram = "/cudaprog"

// CopyHostFile copies the host file src to dst with mode perm, creating
// dst's parent directories (0755). When src cannot be read, tb is
// [Unavailable]: the test needs something of this host's.
func CopyHostFile(tb testing.TB, src, dst string, perm os.FileMode) {
	tb.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		Unavailable(tb, "needs the host's %s: %v", src, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(dst, data, perm); err != nil {
		tb.Fatal(err)
	}
}

// AddHostLibc copies [HostLoader] and [HostLibc] into root, at their host
// paths.
func AddHostLibc(tb testing.TB, root string) {
	tb.Helper()
	for _, p := range []string{HostLoader, HostLibc} {
		CopyHostFile(tb, p, filepath.Join(root, p), 0o755)
	}
}

// AddCUDAProgram makes root able to prove that its dynamic loader finds
// libcuda.so.1: it adds the host's loader and libc ([AddHostLibc]) and
// writes [CUDAProgram], an executable that needs libcuda.so.1 and does
// nothing but exit 0 — so it exits 0 only when the loader found the
// library (and, through it, libc.so.6).
func AddCUDAProgram(tb testing.TB, root string) {
	tb.Helper()
	AddHostLibc(tb, root)
	prog := &elfwriter.Object{Interp: HostLoader, Needed: []string{"libcuda.so.1"}}
	if err := elfwriter.WriteFile(filepath.Join(root, CUDAProgram), prog, 0o755); err != nil {
		tb.Fatal(err)
	}
}
