package fstree

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
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
	if err != nil {
		t.Fatal(err)
	}
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
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Kind != w.Kind || g.Path != w.Path || g.Mode != w.Mode || g.Target != w.Target ||
			g.Major != w.Major || g.Minor != w.Minor || string(g.Content) != string(w.Content) {
			t.Errorf("entry %d = %+v, want %+v", i, g, w)
		}
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
		if _, err := Parse(spec); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) = %v, want ErrInvalid", spec, err)
		}
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
	if err := Create(root, spec, &Options{CharAsFile: true}); err != nil {
		t.Fatal(err)
	}
	check := func(name string, typ fs.FileMode, perm fs.FileMode) {
		t.Helper()
		fi, err := os.Lstat(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Type() != typ || (perm != 0 && fi.Mode().Perm() != perm) {
			t.Errorf("%s: mode %v, want type %v perm %v", name, fi.Mode(), typ, perm)
		}
	}
	check("d", fs.ModeDir, 0o700)
	check("d/f", 0, 0o640)
	check("l", fs.ModeSymlink, 0)
	check("p", fs.ModeNamedPipe, 0o644)
	check("s", fs.ModeSocket, 0o755)
	check("c", 0, 0o666)
	if b, _ := os.ReadFile(filepath.Join(root, "d/f")); string(b) != "hello" {
		t.Errorf("d/f = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "c")); string(b) != "char 1:3\n" {
		t.Errorf("c = %q", b)
	}
	if l, _ := os.Readlink(filepath.Join(root, "l")); l != "../outside" {
		t.Errorf("l -> %q", l)
	}
	if err := Create(root, "file d/f", nil); err == nil {
		t.Error("Create over an existing file succeeded")
	}
}

func TestBuildLongSocketPath(t *testing.T) {
	root := t.TempDir()
	long := "a/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb/socket"
	if err := Create(root, "socket "+long, nil); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(root, long))
	if err != nil || fi.Mode().Type() != fs.ModeSocket {
		t.Fatalf("long socket: %v %v", fi, err)
	}
}
