package fstree

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Options change how [Build] creates entries. A nil *Options means defaults.
type Options struct {
	// CharAsFile writes each character device as a regular file holding
	// "char MAJOR:MINOR\n" instead of calling mknod, so that trees with
	// device nodes can be built without CAP_MKNOD. False: real nodes.
	CharAsFile bool
}

// Build creates entries under root, in order. Existing directories are kept;
// any other existing file at an entry's path is an error.
func Build(root string, entries []Entry, opts *Options) error {
	if opts == nil {
		opts = &Options{}
	}
	for _, e := range entries {
		if err := create(root, e, opts); err != nil {
			return fmt.Errorf("creating %s %s: %w", e.Kind, e.Path, err)
		}
	}
	return nil
}

// Create parses spec and builds it under root.
func Create(root, spec string, opts *Options) error {
	entries, err := Parse(spec)
	if err != nil {
		return err
	}
	return Build(root, entries, opts)
}

func create(root string, e Entry, opts *Options) error {
	p := filepath.Join(root, filepath.FromSlash(e.Path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	switch e.Kind {
	case Dir:
		return mkdir(p, mode(e.Mode, 0o755))
	case File:
		return writeFile(p, e.Content, mode(e.Mode, 0o644))
	case Symlink:
		return os.Symlink(e.Target, p)
	case Char:
		if opts.CharAsFile {
			return writeFile(p, fmt.Appendf(nil, "char %d:%d\n", e.Major, e.Minor), mode(e.Mode, 0o666))
		}
		return mknod(p, unix.S_IFCHR, mode(e.Mode, 0o666), unix.Mkdev(e.Major, e.Minor))
	case FIFO:
		return mknod(p, unix.S_IFIFO, mode(e.Mode, 0o644), 0)
	case Socket:
		return bindSocket(p, mode(e.Mode, 0o755))
	}
	return fmt.Errorf("unknown kind %q", e.Kind)
}

func mode(m, def fs.FileMode) fs.FileMode {
	if m == 0 {
		return def
	}
	return m
}

func mkdir(p string, m fs.FileMode) error {
	if err := os.Mkdir(p, m); err != nil {
		if fi, serr := os.Lstat(p); serr == nil && fi.IsDir() {
			return os.Chmod(p, m)
		}
		return err
	}
	return os.Chmod(p, m) // not subject to umask
}

func writeFile(p string, data []byte, m fs.FileMode) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, m)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Chmod(p, m)
}

func mknod(p string, typ uint32, m fs.FileMode, dev uint64) error {
	if err := unix.Mknod(p, typ|uint32(m.Perm()), int(dev)); err != nil {
		return &os.PathError{Op: "mknod", Path: p, Err: err}
	}
	return os.Chmod(p, m)
}

// bindSocket leaves a socket file at p; the listener is closed but the file
// stays, as a stale daemon socket does.
// Paths too long for sockaddr_un are bound in a short temp dir and renamed.
func bindSocket(p string, m fs.FileMode) error {
	bind := p
	if len(p) >= 100 {
		dir, err := os.MkdirTemp("", "sock")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bind = filepath.Join(dir, "s")
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: bind, Net: "unix"})
	if err != nil {
		return err
	}
	l.SetUnlinkOnClose(false)
	if err := l.Close(); err != nil {
		return err
	}
	if err := os.Chmod(bind, m); err != nil {
		return err
	}
	if bind != p {
		return os.Rename(bind, p)
	}
	return nil
}
