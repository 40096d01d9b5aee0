package driver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	securejoin "github.com/cyphar/filepath-securejoin"
	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		require.NoError(t, err)
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
			require.NoError(t, err)
			res, err := r.resolve(p)
			if !assert.NoError(t, err, "emulate=%v resolve(%q)", emulate, p) {
				continue
			}
			assert.Equal(t, want, filepath.Join(root, res.path), "emulate=%v resolve(%q), against SecureJoin", emulate, p)
			if strings.HasSuffix(p, "secret") || strings.HasSuffix(p, "up") || strings.HasSuffix(p, "abs") {
				b, _ := os.ReadFile(filepath.Join(root, res.path))
				assert.Equal(t, "inside", string(b), "emulate=%v resolve(%q) reads", emulate, p)
			}
		}
		_, err = r.resolve("/lib/x86_64-linux-gnu/loop1")
		assert.ErrorIs(t, err, unix.ELOOP, "emulate=%v: symlink loop", emulate)
		_, err = r.resolve("/lib/x86_64-linux-gnu/missing")
		assert.ErrorIs(t, err, os.ErrNotExist, "emulate=%v: missing file", emulate)
		r.close()
	}
}

// TestOpenFileRefusesNonRegular: openFile opens regular files only, so no
// device, FIFO or socket a cache entry leads to is ever opened.
func TestOpenFileRefusesNonRegular(t *testing.T) {
	root := testutil.Tree(t, "fifo pipe\nsocket sock\ndir d\nfile f data\n")
	r, err := openRoot(root)
	require.NoError(t, err)
	defer r.close()
	for _, p := range []string{"/pipe", "/sock", "/d"} {
		res, err := r.resolve(p)
		require.NoError(t, err)
		if f, err := r.openFile(res); !assert.Error(t, err, "openFile(%s) succeeded", p) {
			f.Close()
		}
	}
	res, err := r.resolve("/f")
	require.NoError(t, err)
	f, err := r.openFile(res)
	require.NoError(t, err)
	f.Close()
}
