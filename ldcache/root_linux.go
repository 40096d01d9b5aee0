package ldcache

import (
	"encoding/binary"
	"errors"
	"os"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
)

// root resolves paths inside a directory as if it were "/": symlinks,
// absolute or with "..", never lead out of it (inroot.Open: openat2
// RESOLVE_IN_ROOT, or filepath-securejoin's emulation on kernels before
// 5.6).
type root struct {
	file *os.File
}

func openRoot(path string) (*root, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &root{file: os.NewFile(uintptr(fd), path)}, nil
}

func (r *root) close() error { return r.file.Close() }

// open opens unsafePath, resolved inside the root, with flags; the error
// is the bare errno where there is one.
func (r *root) open(unsafePath string, flags int) (int, error) {
	fd, err := inroot.Open(r.file, unsafePath, flags)
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
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

// readFile reads a regular file inside the root, up to max bytes, with
// inroot.ReadRegular: opened O_PATH, its type checked on that
// descriptor, and only a regular file then opened for reading, through
// the descriptor, never by name again. So a device node planted where a
// configuration file is expected is never opened (opening one can act on
// the device, outside the container's device cgroup), and a FIFO cannot
// block: either is an error wrapping inroot.ErrNotRegular.
func (r *root) readFile(unsafePath string, max int64) ([]byte, error) {
	return inroot.ReadRegular(r.file, unsafePath, 0, max)
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
		out = parseDirents(buf[:n], slices.Grow(out, n/32))
	}
}

// parseDirents decodes linux_dirent64 records. The names share one
// string, the records' bytes.
func parseDirents(raw []byte, out []dirent) []dirent {
	all := string(raw)
	b := raw
	for len(b) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(b[16:]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		start := len(raw) - len(b) + 19
		n := 0
		for n < reclen-19 && b[19+n] != 0 {
			n++
		}
		if s := all[start : start+n]; s != "." && s != ".." {
			out = append(out, dirent{name: s, typ: b[18]})
		}
		b = b[reclen:]
	}
	return out
}

// statx is statx(2) of unsafePath inside the root, following symlinks,
// with statxMask.
func (r *root) statx(unsafePath string, stx *unix.Statx_t) error {
	fd, err := r.open(unsafePath, unix.O_PATH)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Statx(fd, "", unix.AT_EMPTY_PATH, statxMask, stx)
}

// lstatx is lstat(2) of unsafePath inside the root as statx, with
// statxMask.
func (r *root) lstatx(unsafePath string, stx *unix.Statx_t) error {
	fd, err := r.open(unsafePath, unix.O_PATH|unix.O_NOFOLLOW)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Statx(fd, "", unix.AT_EMPTY_PATH, statxMask, stx)
}
