package ldcache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"golang.org/x/sys/unix"
)

// root resolves paths inside a directory as if it were "/": symlinks,
// absolute or with "..", never lead out of it (openat2 RESOLVE_IN_ROOT,
// or filepath-securejoin's emulation on kernels before 5.6).
type root struct {
	fd   int
	file *os.File // owns fd
}

func openRoot(path string) (*root, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &root{fd: fd, file: os.NewFile(uintptr(fd), path)}, nil
}

func (r *root) close() error { return r.file.Close() }

var noOpenat2 = sync.OnceValue(func() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC})
	if err == nil {
		unix.Close(fd)
	}
	return errors.Is(err, unix.ENOSYS)
})

// open opens unsafePath, resolved inside the root, with flags.
func (r *root) open(unsafePath string, flags int) (int, error) {
	if noOpenat2() {
		return r.openEmulated(unsafePath, flags)
	}
	how := &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	}
	for range 16 {
		fd, err := unix.Openat2(r.fd, unsafePath, how)
		if err != unix.EAGAIN && err != unix.EINTR {
			return fd, err
		}
	}
	return -1, unix.EAGAIN
}

func (r *root) openEmulated(unsafePath string, flags int) (int, error) {
	h, err := pathrs.OpenatInRoot(r.file, unsafePath)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return -1, pe.Err
		}
		return -1, err
	}
	defer h.Close()
	if flags&unix.O_PATH != 0 {
		return unix.Dup(int(h.Fd()))
	}
	f, err := pathrs.Reopen(h, flags)
	if err != nil {
		return -1, err
	}
	fd, err := unix.Dup(int(f.Fd()))
	f.Close()
	return fd, err
}

// stat is stat(2) of unsafePath inside the root, following symlinks.
func (r *root) stat(unsafePath string) (unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := r.open(unsafePath, unix.O_PATH)
	if err != nil {
		return st, err
	}
	defer unix.Close(fd)
	err = unix.Fstat(fd, &st)
	return st, err
}

// lstat is lstat(2) of unsafePath inside the root.
func (r *root) lstat(unsafePath string) (unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := r.open(unsafePath, unix.O_PATH|unix.O_NOFOLLOW)
	if err != nil {
		return st, err
	}
	defer unix.Close(fd)
	err = unix.Fstat(fd, &st)
	return st, err
}

// readFile reads a regular file inside the root, up to max bytes.
func (r *root) readFile(unsafePath string, max int64) ([]byte, error) {
	fd, err := r.open(unsafePath, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), unsafePath)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", unsafePath)
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, more than %d", unsafePath, st.Size(), max)
	}
	b := make([]byte, st.Size())
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}

// dirent is one directory entry: its name and d_type.
type dirent struct {
	name string
	typ  uint8
}

// readDir lists the directory open at fd in getdents order, as readdir
// returns it, without "." and "..".
func readDir(fd int, buf []byte) ([]dirent, error) {
	var out []dirent
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		out = parseDirents(buf[:n], out)
	}
}

// parseDirents decodes linux_dirent64 records.
func parseDirents(b []byte, out []dirent) []dirent {
	for len(b) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(b[16:]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		name := b[19:reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if s := string(name); s != "." && s != ".." {
			out = append(out, dirent{name: s, typ: b[18]})
		}
		b = b[reclen:]
	}
	return out
}
