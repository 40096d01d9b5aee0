package driver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	securejoin "github.com/cyphar/filepath-securejoin"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/testutil"
)

// TestResolveInRoot checks rootDir.resolve against filepath-securejoin's
// SecureJoin on links that stay in the root, lead out of it by ".." or by
// an absolute target, chain, loop, and cross directories — with openat2
// and with the emulation.
func TestResolveInRoot(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	testutil.BuildTree(t, parent, "file secret outside\ndir root\n")
	testutil.BuildTree(t, root, `
dir     usr/lib/x86_64-linux-gnu
file    usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15 elf
symlink usr/lib/x86_64-linux-gnu/libcuda.so.1 libcuda.so.550.54.15
symlink usr/lib/x86_64-linux-gnu/libcuda.so libcuda.so.1
symlink lib usr/lib
symlink usr/lib/x86_64-linux-gnu/up ../../../../../secret
symlink usr/lib/x86_64-linux-gnu/abs /secret
symlink usr/lib/x86_64-linux-gnu/abs-in /usr/lib/x86_64-linux-gnu/libcuda.so
symlink usr/lib/x86_64-linux-gnu/loop1 loop2
symlink usr/lib/x86_64-linux-gnu/loop2 loop1
symlink usr/lib/x86_64-linux-gnu/dirlink ../x86_64-linux-gnu
file    secret inside
dir     run/nvidia-persistenced
socket  run/nvidia-persistenced/socket
dir     var
symlink var/run ../run
`)
	for _, emulate := range []bool{false, true} {
		r, err := openRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		r.noOpenat2 = emulate
		for _, p := range []string{
			"/lib/x86_64-linux-gnu/libcuda.so",
			"lib/x86_64-linux-gnu/libcuda.so.1",
			"/lib/x86_64-linux-gnu/up",
			"/lib/x86_64-linux-gnu/abs",
			"/lib/x86_64-linux-gnu/abs-in",
			"/lib/x86_64-linux-gnu/dirlink/dirlink/libcuda.so",
			"/../../secret",
			"/var/run/nvidia-persistenced/socket",
			"/usr/lib/x86_64-linux-gnu/..",
			"/",
		} {
			want, err := securejoin.SecureJoin(root, p)
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.resolve(p)
			if err != nil {
				t.Errorf("emulate=%v resolve(%q): %v", emulate, p, err)
				continue
			}
			if got := filepath.Join(root, res.path); got != want {
				t.Errorf("emulate=%v resolve(%q) = %q, SecureJoin gives %q", emulate, p, got, want)
			}
			if strings.HasSuffix(p, "secret") || strings.HasSuffix(p, "up") || strings.HasSuffix(p, "abs") {
				b, _ := os.ReadFile(filepath.Join(root, res.path))
				if string(b) != "inside" {
					t.Errorf("emulate=%v resolve(%q) reads %q", emulate, p, b)
				}
			}
		}
		if _, err := r.resolve("/lib/x86_64-linux-gnu/loop1"); !errors.Is(err, unix.ELOOP) {
			t.Errorf("emulate=%v: symlink loop gives %v", emulate, err)
		}
		if _, err := r.resolve("/lib/x86_64-linux-gnu/missing"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("emulate=%v: missing file gives %v", emulate, err)
		}
		r.close()
	}
}

// TestOpenFileRefusesNonRegular: openFile opens regular files only, so no
// device, FIFO or socket a cache entry leads to is ever opened.
func TestOpenFileRefusesNonRegular(t *testing.T) {
	root := testutil.Tree(t, "fifo pipe\nsocket sock\ndir d\nfile f data\n")
	r, err := openRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	for _, p := range []string{"/pipe", "/sock", "/d"} {
		res, err := r.resolve(p)
		if err != nil {
			t.Fatal(err)
		}
		if f, err := r.openFile(res); err == nil {
			f.Close()
			t.Errorf("openFile(%s) succeeded", p)
		}
	}
	res, err := r.resolve("/f")
	if err != nil {
		t.Fatal(err)
	}
	f, err := r.openFile(res)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
