package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
)

// parentDirMode is the mode of parent directories Root creates.
const parentDirMode = 0o755

// makeDirs opens comps as a directory, creating missing components; a
// directory kept under Options.KeepDirs is reused, and those created are
// kept.
func (r *Root) makeDirs(comps []string) (*handle, error) {
	if d := r.kept(comps); d != nil {
		return d, nil
	}
	r.mkMu.Lock()
	defer r.mkMu.Unlock()
	return r.makeDirsLocked(comps)
}

// makeDirsLocked is makeDirs with mkMu held: each directory is created and
// recorded before another goroutine can create anything inside it (so
// that undo, last first, empties it before removing it).
func (r *Root) makeDirsLocked(comps []string) (*handle, error) {
	d, err := r.resolveDir(comps)
	if !errors.Is(err, fs.ErrNotExist) {
		return d, err
	}
	dir, i, err := r.deepestExisting(comps)
	for ; err == nil && i < len(comps); i++ {
		var next *handle
		next, err = r.mkdirIn(dir, comps[:i+1], parentDirMode)
		dir.release()
		dir = next
		if err == nil {
			r.keepDir(display(comps[:i+1]), dir)
		}
	}
	return dir, err
}

// deepestExisting opens the longest existing proper prefix of comps (which
// itself was just found missing) as a directory and returns how many
// components it holds. It starts from the longest kept prefix, if any, or
// from the rootfs.
func (r *Root) deepestExisting(comps []string) (*handle, int, error) {
	start, dir := 0, r.top.acquire()
	for i := len(comps) - 1; i > 0; i-- {
		if d := r.cachedDir(display(comps[:i])); d != nil {
			dir.release()
			start, dir = i, d
			break
		}
	}
	for i := start; i < len(comps)-1; i++ {
		next, err := r.resolveDir(comps[:i+1])
		if errors.Is(err, fs.ErrNotExist) {
			return dir, i, nil
		}
		dir.release()
		if err != nil {
			return nil, i, err
		}
		dir = next
	}
	return dir, max(len(comps)-1, start), nil
}

// mkdirIn creates the last of comps in dir (which holds the others) and
// opens it; if something appeared there meanwhile, it resolves that inside
// the root instead and does not record it.
func (r *Root) mkdirIn(dir *handle, comps []string, perm fs.FileMode) (*handle, error) {
	name, shown := comps[len(comps)-1], display(comps)
	if name == ".." {
		return nil, fmt.Errorf("%q: \"..\" after a missing directory: %w", shown, ErrInvalidPath)
	}
	if err := r.mayCreate(dir); err != nil {
		return nil, err
	}
	err := unix.Mkdirat(dir.fd, name, uint32(perm))
	if err == unix.EEXIST {
		return r.openExisting(comps)
	}
	if err != nil {
		return nil, &os.PathError{Op: "mkdirat", Path: shown, Err: err}
	}
	c := r.recordNew(dir, name, shown, unix.S_IFDIR, "")
	fd, err := r.syscall("openat", shown, func() (int, error) {
		return unix.Openat(dir.fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, err
	}
	d := newHandle(fd, shown)
	var st unix.Stat_t
	_, err = r.syscall("fstat", shown, func() (int, error) {
		id, err := fstatMount(fd, &st) // its mount ID spares mayCreate a statx
		d.mntID.Store(id)
		return 0, err
	})
	if err == nil {
		c.identify(&st)
		inheritAllowed(dir, d)
		err = r.finish(fd, &st, shown, perm, "")
	}
	if err != nil {
		d.release()
		return nil, err
	}
	return d, nil
}

// inheritAllowed marks d, a directory just created in dir, allowed by
// Options.MayCreate when dir is and d is on dir's mount: a directory
// mounted over between its mkdirat and its openat is on another mount and
// is asked about.
func inheritAllowed(dir, d *handle) {
	if id := d.mntID.Load(); id != 0 && dir.allowed.Load() && id == dir.mountID() {
		d.allowed.Store(true)
	}
}

// openExisting opens comps, which exists, as a directory. A dangling
// symlink there is refused, as pathrs-lite's MkdirAll does: it is not
// followed to create its target.
func (r *Root) openExisting(comps []string) (*handle, error) {
	d, err := r.openDir(comps)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%q exists but leads to no directory inside the rootfs (a dangling symlink?): %w", display(comps), ErrWrongType)
	}
	return d, err
}

// MkdirAll makes sure unsafePath is a directory, creating it (with perm)
// and its missing parents (0755). An existing last component must be a
// real directory, not a symlink to one.
func (r *Root) MkdirAll(unsafePath string, perm fs.FileMode) (*Entry, error) {
	e, err := r.create(unsafePath, unix.S_IFDIR, func(dir int, name string) (int, error) {
		return -1, unix.Mkdirat(dir, name, uint32(perm))
	}, perm, "", false)
	if err != nil {
		return nil, fmt.Errorf("creating directory %q in rootfs %q: %w", unsafePath, r.Path(), err)
	}
	return e, nil
}

// CreateFile makes sure unsafePath is a regular file to mount onto: an
// empty placeholder with perm when missing (parents 0755), an existing
// regular file as is. Anything else there is [ErrWrongType].
func (r *Root) CreateFile(unsafePath string, perm fs.FileMode) (*Entry, error) {
	e, err := r.create(unsafePath, unix.S_IFREG, func(dir int, name string) (int, error) {
		return unix.Openat(dir, name, unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm))
	}, perm, "", false)
	if err != nil {
		return nil, fmt.Errorf("creating file %q in rootfs %q: %w", unsafePath, r.Path(), err)
	}
	return e, nil
}

// Symlink makes unsafePath a symlink to target. It never replaces
// anything: an existing symlink with the same target is accepted (and not
// recorded as created); anything else there is an error matching
// fs.ErrExist, or [ErrWrongType] when it is not a symlink.
func (r *Root) Symlink(target, unsafePath string) (*Entry, error) {
	return r.symlink(target, unsafePath, false)
}

// symlink is Symlink; lean leaves the link unopened (see Link).
func (r *Root) symlink(target, unsafePath string, lean bool) (*Entry, error) {
	e, err := r.create(unsafePath, unix.S_IFLNK, makeLink(target), 0, target, lean)
	if err != nil {
		return nil, fmt.Errorf("creating symlink %q -> %q in rootfs %q: %w", unsafePath, target, r.Path(), err)
	}
	return e, nil
}

// Mknod makes unsafePath a character device major:minor with perm. An
// existing node with the same type and number is accepted; anything else
// is an error.
func (r *Root) Mknod(unsafePath string, perm fs.FileMode, major, minor uint32) (*Entry, error) {
	dev := unix.Mkdev(major, minor)
	e, err := r.create(unsafePath, unix.S_IFCHR, func(dir int, name string) (int, error) {
		return -1, unix.Mknodat(dir, name, unix.S_IFCHR|uint32(perm), int(dev))
	}, perm, "", false)
	if err == nil && e.st.Rdev != dev {
		e.Close()
		err = fmt.Errorf("%q is device %d:%d, want %d:%d: %w", unsafePath,
			unix.Major(e.st.Rdev), unix.Minor(e.st.Rdev), major, minor, fs.ErrExist)
	}
	if err != nil {
		return nil, fmt.Errorf("creating character device %q in rootfs %q: %w", unsafePath, r.Path(), err)
	}
	return e, nil
}

// makeFunc creates name in dir; it returns the new file's descriptor when
// creating opened it (else -1), or unix.EEXIST when something is there.
type makeFunc func(dir int, name string) (int, error)

// makeLink is the makeFunc of a symlink to target.
func makeLink(target string) makeFunc {
	return func(dir int, name string) (int, error) { return -1, unix.Symlinkat(target, dir, name) }
}

// create makes unsafePath's parents, then calls mk to create the entry
// of type typ in the parent, then verifies, owns and records it. If mk
// finds something there, that is accepted when it has type typ (and, for a
// symlink, target). Lean (for a symlink, see Link) reads the entry by
// name instead of opening it, unless it must be given an owner.
func (r *Root) create(unsafePath string, typ uint32, mk makeFunc, perm fs.FileMode, target string, lean bool) (*Entry, error) {
	parent, name, err := splitLast(unsafePath)
	if err != nil {
		return nil, err
	}
	var dir *handle
	if typ == unix.S_IFDIR { // a directory, too, is recorded before it is found
		r.mkMu.Lock()
		defer r.mkMu.Unlock()
		dir, err = r.makeDirsLocked(parent)
	} else {
		dir, err = r.makeDirs(parent)
	}
	if err != nil {
		return nil, err
	}
	e, err := r.createIn(dir, name, unsafePath, typ, mk, perm, target, lean)
	if err != nil {
		dir.release()
	}
	return e, err
}

func (r *Root) createIn(dir *handle, name, unsafePath string, typ uint32, mk makeFunc, perm fs.FileMode, target string, lean bool) (*Entry, error) {
	fd, err := -1, error(unix.EEXIST) // refused: use what is there, as when mk finds it
	if refused := r.mayCreate(dir); refused == nil {
		fd, err = mk(dir.fd, name)
	} else if !entryExists(dir.fd, name) {
		return nil, refused
	}
	created := err == nil
	if err != nil && err != unix.EEXIST {
		return nil, &os.PathError{Op: "create", Path: unsafePath, Err: err}
	}
	var c *creation
	if created { // recorded before anything else can fail
		c = r.recordNew(dir, name, unsafePath, typ, target)
	}
	e, err := r.openCreated(dir, name, fd, unsafePath, created, lean)
	if err == nil && e.fd < 0 && created && r.needsChown(&e.st) {
		err = e.reopen() // chown goes through a descriptor
	}
	if err != nil {
		return nil, err
	}
	c.identify(&e.st)
	if err := e.verify(typ, target); err != nil {
		e.closeFile()
		return nil, err
	}
	if created {
		err = r.finish(e.fd, &e.st, unsafePath, perm, target)
	}
	if err != nil {
		e.closeFile()
		return nil, err
	}
	return e, nil
}

// verify checks that e has type typ and, for a symlink, target.
func (e *Entry) verify(typ uint32, target string) error {
	if got := e.st.Mode & unix.S_IFMT; got != typ {
		return fmt.Errorf("%q is a %s, want a %s: %w", e.path, inroot.TypeName(got), inroot.TypeName(typ), ErrWrongType)
	}
	if typ != unix.S_IFLNK {
		return nil
	}
	if e.fd < 0 && e.created && e.st.Size == int64(len(target)) {
		// A link Link just made, of the target's length: reading it back
		// would only tell it from one swapped in since with another
		// target of that length, which could as well be swapped in after
		// the call (and undo, which reads it, leaves such a link alone).
		return nil
	}
	got, err := e.readlink(len(target))
	if err != nil {
		return &os.PathError{Op: "readlinkat", Path: e.path, Err: err}
	}
	if got != target {
		return fmt.Errorf("%q links to %q, want %q: %w", e.path, got, target, fs.ErrExist)
	}
	return nil
}

// readlinkFd reads the symlink fd refers to. A buffer one byte longer
// than want suffices to tell whether it holds want; a link that fills it
// is read again with PATH_MAX.
func readlinkFd(fd, want int) (string, error) {
	return readlinkAt(fd, "", want)
}

// readlinkAt is readlinkFd of name in the directory dir.
func readlinkAt(dir int, name string, want int) (string, error) {
	buf := make([]byte, want+1)
	n, err := unix.Readlinkat(dir, name, buf)
	if err == nil && n == len(buf) {
		buf = make([]byte, unix.PathMax)
		n, err = unix.Readlinkat(dir, name, buf)
	}
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
