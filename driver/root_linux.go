package driver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
)

// rootDir resolves paths inside a driver root as if it were "/": every
// symlink, absolute or relative, is followed inside it and ".." stops at it.
//
// Directories are opened with openat2(RESOLVE_IN_ROOT) (filepath-securejoin's
// emulation on kernels without openat2) and kept open for the rootDir's
// life; the last component of a path is then looked at through its
// directory's descriptor with fstatat and readlinkat, so the usual chain
// "libcuda.so.1 -> libcuda.so.<version>" costs no path walk and no procfs
// lookup. A symlink whose target holds a "/" is resolved again from the
// root. A rootDir is not safe for concurrent use.
type rootDir struct {
	f    *os.File // O_PATH handle of the root
	fd   int      // f's descriptor
	real string   // the root's path as the kernel names it
	// noOpenat2 forces the pathrs-lite emulation (kernels before 5.6).
	noOpenat2 bool
	// dirs are the open directories, by the path asked for and by the
	// resolved path, so that "/lib/x86_64-linux-gnu" and the
	// "/usr/lib/x86_64-linux-gnu" it leads to share one descriptor (and
	// the lookups made through it).
	dirs    map[string]dirHandle
	dirFDs  []int            // the descriptors in dirs, once each
	dirErrs map[string]error // why a dir failed to open
	// seen are the results of lookup by directory and name, for this
	// rootDir's life.
	seen map[dirName]lookupResult
	// linkedDirs, when set, keeps the directory paths whose walk met a
	// symlink (string → struct{}), across rootDirs: openDir then goes
	// straight to the walk that follows symlinks. It is only a hint: either
	// walk gives the right answer.
	linkedDirs *sync.Map
	// memo, when set, keeps symlink and missing-name lookups across
	// rootDirs, by directory (see dirMemo).
	memo *memos
}

type dirName struct {
	fd   int
	name string
}

type lookupResult struct {
	res    resolved
	target string
	err    error
}

// dirHandle is an open directory inside the root.
type dirHandle struct {
	fd   int    // O_PATH descriptor
	path string // resolved, inside the root
}

// maxHops bounds the symlinks followed in one resolution, as the kernel's
// MAXSYMLINKS does.
const maxHops = 40

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
	return &rootDir{
		f: f, fd: fd, real: strings.TrimSuffix(real, "/"), noOpenat2: !inroot.HaveOpenat2(),
		dirs: make(map[string]dirHandle, 32), dirErrs: make(map[string]error, 16), seen: make(map[dirName]lookupResult, 128),
	}, nil
}

func (r *rootDir) close() {
	for _, fd := range r.dirFDs {
		unix.Close(fd)
	}
	r.dirs, r.dirFDs = nil, nil
	r.f.Close()
}

// openat opens unsafePath inside the root. With O_PATH nothing of the file
// is read and no device is opened.
func (r *rootDir) openat(unsafePath string, flags int) (int, error) {
	if !r.noOpenat2 {
		fd, err := inroot.Openat2(r.fd, unsafePath, flags, 0)
		if err == nil {
			return fd, nil
		}
		if err != unix.ENOSYS {
			return -1, &os.PathError{Op: "openat2", Path: unsafePath, Err: err}
		}
		r.noOpenat2 = true
	}
	return inroot.Emulated(r.f, unsafePath, flags)
}

// dir opens the directory unsafePath inside the root, once per rootDir.
func (r *rootDir) dir(unsafePath string) (dirHandle, error) {
	if len(unsafePath) > 1 && unsafePath[len(unsafePath)-1] == '/' {
		if unsafePath = strings.TrimRight(unsafePath, "/"); unsafePath == "" {
			unsafePath = "/"
		}
	}
	if d, ok := r.dirs[unsafePath]; ok {
		return d, nil
	}
	if err := r.failedAncestor(unsafePath); err != nil {
		return dirHandle{}, err
	}
	d, err := r.openDir(unsafePath)
	if err != nil {
		r.dirErrs[unsafePath] = err
		return dirHandle{}, err
	}
	if same, ok := r.dirs[d.path]; ok {
		unix.Close(d.fd)
		d = same
	} else {
		r.dirFDs = append(r.dirFDs, d.fd)
		r.dirs[d.path] = d
	}
	r.dirs[unsafePath] = d
	return d, nil
}

// failedAncestor returns the error of a dir that failed to open and whose
// path is a prefix of p at a "/" boundary (or p itself): the kernel resolves
// that prefix first, so p fails too. (dir keys have no trailing "/".)
func (r *rootDir) failedAncestor(p string) error {
	if len(r.dirErrs) == 0 {
		return nil
	}
	for i := len(p); i > 0; i = strings.LastIndexByte(p[:i], '/') {
		if err, ok := r.dirErrs[p[:i]]; ok {
			return err
		}
	}
	return nil
}

func (r *rootDir) openDir(unsafePath string) (dirHandle, error) {
	if d, done, err := r.openPlainDir(unsafePath); done {
		return d, err
	}
	fd, err := r.openat(unsafePath, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return dirHandle{}, err
	}
	p, err := r.inRoot(fd, unsafePath)
	if err != nil {
		unix.Close(fd)
		return dirHandle{}, err
	}
	return dirHandle{fd: fd, path: p}, nil
}

// openPlainDir opens unsafePath inside the root without following any
// symlink (RESOLVE_NO_SYMLINKS). Where that walk succeeds, the directory
// is the cleaned path itself and the kernel need not be asked its name;
// where it fails on anything but a symlink (ELOOP), a walk that follows
// symlinks would have failed at the same component. done is false when
// the caller must do the full walk: a symlink on the way (now or, by
// linkedDirs, in an earlier call), or no openat2.
func (r *rootDir) openPlainDir(unsafePath string) (d dirHandle, done bool, err error) {
	if r.noOpenat2 || r.linkedDir(unsafePath) {
		return dirHandle{}, false, nil
	}
	fd, err := inroot.Openat2(r.fd, unsafePath, unix.O_PATH|unix.O_DIRECTORY, unix.RESOLVE_NO_SYMLINKS)
	switch {
	case err == nil:
		return dirHandle{fd: fd, path: path.Clean("/" + unsafePath)}, true, nil
	case errors.Is(err, unix.ELOOP):
		if r.linkedDirs != nil {
			r.linkedDirs.Store(unsafePath, struct{}{})
		}
		return dirHandle{}, false, nil
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EAGAIN):
		return dirHandle{}, false, nil // the full walk decides
	}
	return dirHandle{}, true, &os.PathError{Op: "openat2", Path: unsafePath, Err: err}
}

func (r *rootDir) linkedDir(unsafePath string) bool {
	if r.linkedDirs == nil {
		return false
	}
	_, ok := r.linkedDirs.Load(unsafePath)
	return ok
}

// inRoot returns the path, inside the root, of the open file fd.
func (r *rootDir) inRoot(fd int, unsafePath string) (string, error) {
	p, err := fdPath(fd)
	if err != nil {
		return "", err
	}
	rel, ok := strings.CutPrefix(p, r.real)
	if !ok || (rel != "" && rel[0] != '/') {
		return "", fmt.Errorf("resolving %s: kernel names it %q, outside root %q", unsafePath, p, r.real)
	}
	if rel == "" {
		rel = "/"
	}
	return rel, nil
}

// resolve resolves unsafePath inside the root.
func (r *rootDir) resolve(unsafePath string) (resolved, error) {
	p := unsafePath
	for range maxHops {
		i := strings.LastIndexByte(p, '/')
		dirPath, base := p[:i+1], p[i+1:]
		if base == "" || base == "." || base == ".." {
			dirPath, base = p, "."
		}
		if dirPath == "" {
			dirPath = "."
		}
		d, err := r.dir(dirPath)
		if err != nil {
			return resolved{}, err
		}
		res, target, err := r.lookup(d, base)
		if err != nil || target == "" {
			return res, err
		}
		p = r.follow(d, target)
	}
	return resolved{}, &os.PathError{Op: "resolve", Path: unsafePath, Err: unix.ELOOP}
}

// lookup looks at name in d: a resolved file, or a symlink's target.
func (r *rootDir) lookup(d dirHandle, name string) (resolved, string, error) {
	k := dirName{d.fd, name}
	if l, ok := r.seen[k]; ok {
		return l.res, l.target, l.err
	}
	res, target, err := r.lookupNew(d, name)
	r.seen[k] = lookupResult{res, target, err}
	return res, target, err
}

func (r *rootDir) lookupNew(d dirHandle, name string) (resolved, string, error) {
	if e, ok := r.memo.find(d, name); ok {
		if e.missing {
			return resolved{}, "", &os.PathError{Op: "fstatat", Path: d.path + "/" + name, Err: unix.ENOENT}
		}
		return resolved{}, e.target, nil
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT {
			r.memo.keep(d, name, memoEntry{missing: true})
		}
		return resolved{}, "", &os.PathError{Op: "fstatat", Path: d.path + "/" + name, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		t, err := r.readlink(d, name)
		if err == nil {
			r.memo.keep(d, name, memoEntry{target: t})
		}
		return resolved{}, t, err
	}
	p := d.path
	if name != "." {
		p = strings.TrimSuffix(p, "/") + "/" + name
	}
	return resolved{path: p, mode: st.Mode, dev: st.Dev, ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), dirfd: d.fd, name: name}, "", nil
}

// follow returns the path a symlink in d with target leads to; it is
// resolved again from the root, so ".." and absolute targets stay inside.
func (r *rootDir) follow(d dirHandle, target string) string {
	if strings.HasPrefix(target, "/") {
		return target
	}
	return strings.TrimSuffix(d.path, "/") + "/" + target
}

// readlink returns the target of the symlink name in d.
func (r *rootDir) readlink(d dirHandle, name string) (string, error) {
	t, err := readlinkat(d.fd, name)
	if err != nil || t == "" {
		return "", &os.PathError{Op: "readlinkat", Path: d.path + "/" + name, Err: err}
	}
	return t, nil
}

func readlinkat(dirfd int, name string) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		if len(buf) >= 1<<16 {
			return "", unix.ENAMETOOLONG
		}
		buf = make([]byte, 2*len(buf))
	}
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

// openFile opens the regular file res for reading, by its name in its
// directory without following a symlink. It refuses any other type of
// file, and a file that is no longer the one resolve saw; the check is
// made on an O_PATH descriptor before the file is opened for reading
// (inroot.OpenRegularAt), so a device renamed over it is never opened.
func (r *rootDir) openFile(res resolved) (fdReader, error) {
	if !isReg(res.mode) {
		return -1, fmt.Errorf("opening %s: not a regular file (mode %#o)", res.path, res.mode)
	}
	fd, st, err := inroot.OpenRegularAt(res.dirfd, res.name)
	if err != nil {
		return -1, fmt.Errorf("opening %s: %w", res.path, err)
	}
	if st.Dev != res.dev || st.Ino != res.ino {
		unix.Close(fd)
		return -1, fmt.Errorf("opening %s: file replaced while reading", res.path)
	}
	return fdReader(fd), nil
}

// readDir lists the names in the directory unsafePath inside the root.
func (r *rootDir) readDir(unsafePath string) ([]string, error) {
	d, err := r.dir(unsafePath)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: d.path, Err: err}
	}
	defer unix.Close(fd)
	var names []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return names, &os.PathError{Op: "getdents64", Path: d.path, Err: err}
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// fdPath returns the path the kernel gives for fd.
func fdPath(fd int) (string, error) {
	return os.Readlink("/proc/thread-self/fd/" + strconv.Itoa(fd))
}

// kernelRelease is the running kernel's `uname -r`.
func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}
