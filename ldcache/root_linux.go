package ldcache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
)

// root resolves paths inside a directory as if it were "/": symlinks,
// absolute or with "..", never lead out of it (inroot.Open: openat2
// RESOLVE_IN_ROOT, or filepath-securejoin's emulation on kernels before
// 5.6).
type root struct {
	file *os.File
	// dirs are the directories stat and lstat looked names up in, by
	// the path they were opened by (see dirAt)
	dirs map[string]dirFD
	mu   sync.Mutex       // guards dirs and rp
	rp   *inroot.Reopener // readFile's, made at its first use
}

// dirFD is a directory of the root opened O_PATH, or why it could not be.
type dirFD struct {
	fd  int
	err error
}

func openRoot(path string) (*root, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &root{file: os.NewFile(uintptr(fd), path)}, nil
}

func (r *root) close() error {
	for _, d := range r.dirs {
		if d.err == nil {
			unix.Close(d.fd)
		}
	}
	r.dirs = nil
	if r.rp != nil {
		r.rp.Close()
	}
	return r.file.Close()
}

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
	var stx unix.Statx_t
	err := r.statx(unsafePath, &stx)
	return statOf(&stx), err
}

// lstat is lstat(2) of unsafePath inside the root.
func (r *root) lstat(unsafePath string) (unix.Stat_t, error) {
	var stx unix.Statx_t
	err := r.lstatx(unsafePath, &stx)
	return statOf(&stx), err
}

// readFile reads a regular file inside the root, up to max bytes, as
// inroot.ReadRegular does: opened O_PATH, its type checked on that
// descriptor, and only a regular file then opened for reading, through
// the descriptor, never by name again. So a device node planted where a
// configuration file is expected is never opened (opening one can act on
// the device, outside the container's device cgroup), and a FIFO cannot
// block: either is an error wrapping inroot.ErrNotRegular.
func (r *root) readFile(unsafePath string, max int64) ([]byte, error) {
	b, _, err := r.readFileStat(unsafePath, max)
	return b, err
}

// readFileStat is readFile returning the file's status too. It works on
// bare descriptors (no *os.File, whose making costs an fcntl each) and
// takes fstat's size as the end when a read of one more byte returns
// just that many.
func (r *root) readFileStat(unsafePath string, max int64) ([]byte, unix.Stat_t, error) {
	pfd, err := r.open(unsafePath, unix.O_PATH)
	if err != nil {
		return nil, unix.Stat_t{}, &os.PathError{Op: "open", Path: unsafePath, Err: err}
	}
	st, err := inroot.CheckRegular(pfd, unsafePath)
	if err == nil && st.Size > max {
		err = fmt.Errorf("%s: %d bytes, more than %d", unsafePath, st.Size, max)
	}
	var fd int
	if err == nil {
		var rp *inroot.Reopener
		if rp, err = r.reopener(); err == nil {
			fd, err = rp.Reopen(pfd)
		}
	}
	unix.Close(pfd)
	if err != nil {
		return nil, st, err
	}
	defer unix.Close(fd)
	b, err := inroot.ReadToEnd(fdReader(fd), st.Size, max)
	if err != nil {
		return nil, st, fmt.Errorf("reading %s: %w", unsafePath, err)
	}
	return b, st, nil
}

// reopener is readFile's Reopener, made at its first use.
func (r *root) reopener() (*inroot.Reopener, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rp == nil {
		rp, err := inroot.NewReopener()
		if err != nil {
			return nil, err
		}
		r.rp = rp
	}
	return r.rp, nil
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
// with statxMask and the basic fields: lstatx where the last component
// is not a symlink, else resolved from the root.
func (r *root) statx(unsafePath string, stx *unix.Statx_t) error {
	err := r.lstatx(unsafePath, stx)
	if err != nil || stx.Mode&unix.S_IFMT != unix.S_IFLNK {
		return err
	}
	return r.statxOpen(unsafePath, unix.O_PATH, stx)
}

// lstatx is lstat(2) of unsafePath inside the root as statx, with
// statxMask and the basic fields. The last component is looked up in
// its directory, opened once per root (dirAt): a name without "/", not
// "." or "..", looked up in a directory of the root without following it
// cannot lead out of the root, so one statx does what an openat2, a
// statx and a close do.
func (r *root) lstatx(unsafePath string, stx *unix.Statx_t) error {
	if unsafePath != "" && strings.Trim(unsafePath, "/") == "" { // the root
		return unix.Statx(int(r.file.Fd()), "", unix.AT_EMPTY_PATH, statxMask|unix.STATX_BASIC_STATS, stx)
	}
	i := strings.LastIndexByte(unsafePath, '/')
	parent, base := unsafePath[:max(i, 0)], unsafePath[i+1:]
	if base == "" || base == "." || base == ".." {
		return r.statxOpen(unsafePath, unix.O_PATH|unix.O_NOFOLLOW, stx)
	}
	fd, err := r.dirAt(parent)
	if err != nil {
		return err
	}
	return unix.Statx(fd, base, unix.AT_SYMLINK_NOFOLLOW, statxMask|unix.STATX_BASIC_STATS, stx)
}

// statxOpen opens unsafePath with flags inside the root and statx's the
// descriptor.
func (r *root) statxOpen(unsafePath string, flags int, stx *unix.Statx_t) error {
	fd, err := r.open(unsafePath, flags)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Statx(fd, "", unix.AT_EMPTY_PATH, statxMask|unix.STATX_BASIC_STATS, stx)
}

// dirAt is the directory unsafePath resolves to inside the root ("":
// the root), opened O_PATH once per root and path and kept until close:
// the parents of the paths a Build looks at are few ("/usr",
// "/usr/lib/x86_64-linux-gnu", "/etc/ld.so.conf.d"). A path resolves to
// the directory it did the first time (a directory renamed meanwhile is
// still looked in); the error is the bare errno of its open.
func (r *root) dirAt(unsafePath string) (int, error) {
	if unsafePath == "" {
		return int(r.file.Fd()), nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.dirs[unsafePath]; ok {
		return d.fd, d.err
	}
	fd, err := r.open(unsafePath, unix.O_PATH|unix.O_DIRECTORY)
	if r.dirs == nil {
		r.dirs = map[string]dirFD{}
	}
	r.dirs[unsafePath] = dirFD{fd, err}
	return fd, err
}

// statOf is the stat(2) view of a statx result: the fields the package
// uses (device, inode, type and mode, size, times).
func statOf(stx *unix.Statx_t) unix.Stat_t {
	ts := func(t unix.StatxTimestamp) unix.Timespec { return unix.Timespec{Sec: t.Sec, Nsec: int64(t.Nsec)} }
	return unix.Stat_t{Dev: statxDev(stx), Ino: stx.Ino, Mode: uint32(stx.Mode), Uid: stx.Uid, Gid: stx.Gid,
		Size: int64(stx.Size), Atim: ts(stx.Atime), Mtim: ts(stx.Mtime), Ctim: ts(stx.Ctime)}
}
