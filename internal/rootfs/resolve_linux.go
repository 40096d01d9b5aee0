package rootfs

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
)

// components splits an unsafePath into names, dropping empty and "." ones.
func components(unsafePath string) []string {
	var comps []string
	for _, c := range strings.Split(unsafePath, "/") {
		if c != "" && c != "." {
			comps = append(comps, c)
		}
	}
	return comps
}

// splitLast returns the parent's components and the last name, which must
// name an entry (not the root, not "..").
func splitLast(unsafePath string) ([]string, string, error) {
	comps := components(unsafePath)
	if len(comps) == 0 || comps[len(comps)-1] == ".." {
		return nil, "", fmt.Errorf("%q does not name an entry: %w", unsafePath, ErrInvalidPath)
	}
	return comps[:len(comps)-1], comps[len(comps)-1], nil
}

// display is a path inside the root for messages and file names.
func display(comps []string) string {
	return "/" + strings.Join(comps, "/")
}

// openInRoot opens comps, following symlinks but staying inside the root,
// as an O_PATH descriptor (flags may add O_DIRECTORY).
func (r *Root) openInRoot(comps []string, flags int) (*handle, error) {
	rel := path.Join(comps...)
	if rel == "" {
		rel = "."
	}
	if r.opts.Resolver == ResolvePathrsLite {
		return r.openPathrs(rel, flags)
	}
	return r.openat2(rel, flags)
}

func (r *Root) openat2(rel string, flags int) (*handle, error) {
	fd, err := inroot.Openat2(r.fd, rel, unix.O_PATH|flags, 0)
	if err != nil {
		return nil, &os.PathError{Op: "openat2", Path: "/" + rel, Err: err}
	}
	return newHandle(fd, "/"+rel), nil
}

func (r *Root) openPathrs(rel string, flags int) (*handle, error) {
	f, err := pathrs.OpenatInRoot(r.dir, rel)
	if err != nil {
		return nil, err
	}
	if flags&unix.O_DIRECTORY != 0 {
		if err := checkType(int(f.Fd()), f.Name(), unix.S_IFDIR); err != nil {
			f.Close()
			return nil, err
		}
	}
	return handleOf(f), nil
}

// openDir opens comps as a directory inside the root.
func (r *Root) openDir(comps []string) (*handle, error) {
	d, err := r.openInRoot(comps, unix.O_DIRECTORY)
	if errors.Is(err, unix.ENOTDIR) {
		err = fmt.Errorf("%w (%w)", err, ErrWrongType)
	}
	return d, err
}

// parentDir opens comps, an existing directory, through the kept ones
// (Options.KeepDirs).
func (r *Root) parentDir(comps []string) (*handle, error) {
	if d := r.kept(comps); d != nil {
		return d, nil
	}
	r.mkMu.Lock()
	defer r.mkMu.Unlock()
	return r.resolveDir(comps)
}

// kept returns a new reference to comps if it is the rootfs or a kept
// directory, else nil.
func (r *Root) kept(comps []string) *handle {
	if len(comps) == 0 {
		return r.top.acquire()
	}
	return r.cachedDir(display(comps))
}

// resolveDir is parentDir with mkMu held: a directory being created by
// another goroutine is found only once it is recorded.
func (r *Root) resolveDir(comps []string) (*handle, error) {
	if d := r.kept(comps); d != nil {
		return d, nil
	}
	d, err := r.openDir(comps)
	if err == nil {
		r.keepDir(display(comps), d)
	}
	return d, err
}

// openLeaf opens name in dir as O_PATH without following it.
func openLeaf(dir int, name, shown string) (int, error) {
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "openat", Path: shown, Err: err}
	}
	return fd, nil
}

// Lookup opens an existing entry: its parent is resolved inside the root,
// its last component is not followed (a symlink gives the symlink).
func (r *Root) Lookup(unsafePath string) (*Entry, error) {
	parent, name, err := splitLast(unsafePath)
	if err != nil {
		return nil, fmt.Errorf("looking up in rootfs %q: %w", r.Path(), err)
	}
	dir, err := r.parentDir(parent)
	if err != nil {
		return nil, fmt.Errorf("looking up %q in rootfs %q: %w", unsafePath, r.Path(), err)
	}
	e, err := newEntry(dir, name, unsafePath, false)
	if err != nil {
		dir.release()
		return nil, fmt.Errorf("looking up %q in rootfs %q: %w", unsafePath, r.Path(), err)
	}
	return e, nil
}

// OpenFile opens a regular file for reading, following symlinks inside
// the root. Anything but a regular file is refused before it is opened for
// reading (so a FIFO cannot block and a device is never opened): the
// file is resolved O_PATH, checked with fstat, and reopened through that
// descriptor (inroot.ReopenRegular).
func (r *Root) OpenFile(unsafePath string) (*os.File, error) {
	h, err := r.openRegular(unsafePath)
	if err != nil {
		return nil, err
	}
	defer h.release()
	f, _, err := inroot.ReopenRegular(h.File())
	if err != nil {
		return nil, fmt.Errorf("opening %q in rootfs %q: %w", unsafePath, r.Path(), err)
	}
	return f, nil
}

// OpenRegular opens a regular file as an O_PATH descriptor (to clone or
// bind it, never to read or write through), following symlinks inside the
// root. Anything but a regular file there is [ErrWrongType].
func (r *Root) OpenRegular(unsafePath string) (*os.File, error) {
	h, err := r.openRegular(unsafePath)
	if err != nil {
		return nil, err
	}
	return h.detach(), nil
}

func (r *Root) openRegular(unsafePath string) (*handle, error) {
	h, err := r.openInRoot(components(unsafePath), 0)
	if err == nil {
		if err = checkType(h.fd, h.name, unix.S_IFREG); err != nil {
			h.release()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("opening %q in rootfs %q: %w", unsafePath, r.Path(), err)
	}
	return h, nil
}
