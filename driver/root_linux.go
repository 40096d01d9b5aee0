package driver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"golang.org/x/sys/unix"
)

// rootDir resolves paths inside a driver root as if it were "/": every
// symlink, absolute or relative, is followed inside it and ".." stops at it
// (openat2 RESOLVE_IN_ROOT; filepath-securejoin's emulation on kernels
// without openat2).
type rootDir struct {
	f    *os.File // O_PATH handle of the root
	fd   int      // f's descriptor
	real string   // the root's path as the kernel names it
	// noOpenat2 forces the pathrs-lite emulation (kernels before 5.6).
	noOpenat2 bool
}

func openRoot(root string) (*rootDir, error) {
	f, err := os.OpenFile(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	real, err := fdPath(fd)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &rootDir{f: f, fd: fd, real: strings.TrimSuffix(real, "/")}, nil
}

func (r *rootDir) close() { r.f.Close() }

// openat opens unsafePath inside the root. With O_PATH nothing of the file
// is read and no device is opened.
func (r *rootDir) openat(unsafePath string, flags int, resolve uint64) (int, error) {
	if !r.noOpenat2 {
		fd, err := unix.Openat2(r.fd, unsafePath, &unix.OpenHow{
			Flags:   uint64(flags | unix.O_CLOEXEC),
			Resolve: resolve | unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err == nil {
			return fd, nil
		}
		if !errors.Is(err, unix.ENOSYS) {
			return -1, &os.PathError{Op: "openat2", Path: unsafePath, Err: err}
		}
		r.noOpenat2 = true
	}
	return r.openatEmulated(unsafePath, flags)
}

// openatEmulated resolves with filepath-securejoin's userspace walk and
// reopens the handle through procfs.
func (r *rootDir) openatEmulated(unsafePath string, flags int) (int, error) {
	h, err := pathrs.OpenatInRoot(r.f, unsafePath)
	if err != nil {
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
	defer f.Close()
	return unix.Dup(int(f.Fd()))
}

// resolve resolves unsafePath inside the root.
func (r *rootDir) resolve(unsafePath string) (resolved, error) {
	fd, err := r.openat(unsafePath, unix.O_PATH, 0)
	if err != nil {
		return resolved{}, err
	}
	defer unix.Close(fd)
	p, err := fdPath(fd)
	if err != nil {
		return resolved{}, err
	}
	rel, ok := strings.CutPrefix(p, r.real)
	if !ok || (rel != "" && rel[0] != '/') {
		return resolved{}, fmt.Errorf("resolving %s: kernel names it %q, outside root %q", unsafePath, p, r.real)
	}
	if rel == "" {
		rel = "/"
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return resolved{}, &os.PathError{Op: "fstat", Path: p, Err: err}
	}
	return resolved{path: rel, mode: st.Mode, dev: st.Dev, ino: st.Ino}, nil
}

// fdReader reads a descriptor with pread.
type fdReader int

func (f fdReader) ReadAt(b []byte, off int64) (int, error) {
	n, err := unix.Pread(int(f), b, off)
	if err != nil {
		return 0, err
	}
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (f fdReader) Close() error { return unix.Close(int(f)) }

// openFile opens the regular file res for reading. It refuses any other
// type of file, and a file that is no longer the one resolve saw.
func (r *rootDir) openFile(res resolved) (fdReader, int64, error) {
	if !isReg(res.mode) {
		return -1, 0, fmt.Errorf("opening %s: not a regular file (mode %#o)", res.path, res.mode)
	}
	fd, err := r.openat(res.path, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK, unix.RESOLVE_NO_SYMLINKS)
	if err != nil {
		return -1, 0, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Dev != res.dev || st.Ino != res.ino {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("opening %s: file replaced while reading", res.path)
	}
	return fdReader(fd), st.Size, nil
}

// readDir lists the names in the directory unsafePath inside the root.
func (r *rootDir) readDir(unsafePath string) ([]string, error) {
	fd, err := r.openat(unsafePath, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	d := os.NewFile(uintptr(fd), unsafePath)
	defer d.Close()
	return d.Readdirnames(-1)
}

// fdPath returns the path the kernel gives for fd.
func fdPath(fd int) (string, error) {
	return os.Readlink("/proc/thread-self/fd/" + strconv.Itoa(fd))
}

// readInRoot reads the regular file unsafePath inside root.
func readInRoot(root, unsafePath string) ([]byte, error) {
	r, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.close()
	res, err := r.resolve(unsafePath)
	if err != nil {
		return nil, err
	}
	f, size, err := r.openFile(res)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, size)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, &os.PathError{Op: "read", Path: res.path, Err: err}
	}
	return b[:n], nil
}

// kernelRelease is the running kernel's `uname -r`.
func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}
