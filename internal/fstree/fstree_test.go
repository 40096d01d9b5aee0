package fstree

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	got, err := Parse(`
		# a comment
		dir usr/lib64 0700
		file etc/debian_version "12.5\n"
		file usr/bin/nvidia-smi 0755 #!/bin/sh
		file /abs/empty
		symlink usr/lib64/libcuda.so.1 libcuda.so.550.54.15
		char dev/nvidiactl 195 255 0600
		fifo tmp/pipe
		socket run/s 0700
	`)
	require.NoError(t, err)
	want := []Entry{
		{Kind: Dir, Path: "usr/lib64", Mode: 0o700},
		{Kind: File, Path: "etc/debian_version", Content: []byte("12.5\n")},
		{Kind: File, Path: "usr/bin/nvidia-smi", Mode: 0o755, Content: []byte("#!/bin/sh")},
		{Kind: File, Path: "abs/empty", Content: []byte{}},
		{Kind: Symlink, Path: "usr/lib64/libcuda.so.1", Target: "libcuda.so.550.54.15"},
		{Kind: Char, Path: "dev/nvidiactl", Major: 195, Minor: 255, Mode: 0o600},
		{Kind: FIFO, Path: "tmp/pipe"},
		{Kind: Socket, Path: "run/s", Mode: 0o700},
	}
	require.Len(t, got, len(want), "entries: %+v", got)
	for i := range want {
		g, w := got[i], want[i]
		// Content compared as strings: nil and empty are the same here.
		assert.Equal(t, string(w.Content), string(g.Content), "entry %d content", i)
		g.Content, w.Content = nil, nil
		assert.Equal(t, w, g, "entry %d", i)
	}
}

func TestParseErrors(t *testing.T) {
	for _, spec := range []string{
		"blob x",
		"dir",
		"dir ../escape",
		"dir a/../..",
		"symlink a",
		"char dev/x 195",
		"char dev/x a b",
		"dir x 0755 extra",
		`file x "unterminated`,
	} {
		t.Run(spec, func(t *testing.T) {
			_, err := Parse(spec)
			assert.ErrorIs(t, err, ErrInvalid, "Parse(%q)", spec)
		})
	}
}

func TestBuild(t *testing.T) {
	root := t.TempDir()
	spec := `
		dir d 0700
		file d/f 0640 hello
		symlink l ../outside
		fifo p
		socket s
		char c 1 3
	`
	require.NoError(t, Create(root, spec, &Options{CharAsFile: true}))
	check := func(name string, typ fs.FileMode, perm fs.FileMode) {
		t.Helper()
		fi, err := os.Lstat(filepath.Join(root, name))
		require.NoError(t, err)
		assert.Equal(t, typ, fi.Mode().Type(), "%s: mode %v", name, fi.Mode())
		if perm != 0 {
			assert.Equal(t, perm, fi.Mode().Perm(), "%s: mode %v", name, fi.Mode())
		}
	}
	check("d", fs.ModeDir, 0o700)
	check("d/f", 0, 0o640)
	check("l", fs.ModeSymlink, 0)
	check("p", fs.ModeNamedPipe, 0o644)
	check("s", fs.ModeSocket, 0o755)
	check("c", 0, 0o666)
	b, _ := os.ReadFile(filepath.Join(root, "d/f"))
	assert.Equal(t, "hello", string(b), "d/f")
	b, _ = os.ReadFile(filepath.Join(root, "c"))
	assert.Equal(t, "char 1:3\n", string(b), "c")
	l, _ := os.Readlink(filepath.Join(root, "l"))
	assert.Equal(t, "../outside", l, "l ->")
	assert.Error(t, Create(root, "file d/f", nil), "Create over an existing file succeeded")
}

func TestBuildLongSocketPath(t *testing.T) {
	root := t.TempDir()
	long := "a/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb/socket"
	require.NoError(t, Create(root, "socket "+long, nil))
	fi, err := os.Lstat(filepath.Join(root, long))
	require.NoError(t, err, "long socket")
	require.Equal(t, fs.ModeSocket, fi.Mode().Type(), "long socket: %v", fi)
}
