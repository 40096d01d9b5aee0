package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
)

// ReplaceSymlink makes unsafePath a symlink to target, as ldconfig makes a
// SONAME link: a missing link is created as [Root.Symlink] creates it, the
// same link already there is kept, and a symlink there with another
// target is replaced atomically. The new link is made under a temporary
// name in the same (pinned) directory and exchanged with the old one
// (renameat2 RENAME_EXCHANGE), so the old link is never followed and
// readers see one link or the other. Anything there that is not a symlink
// (a file, a directory) is [ErrWrongType] and left as it is, also when it
// appears there while the link is being replaced.
//
// Undo exchanges the old link back, as long as the new one is still
// there. Until the step is undone or released, the old link stays next to
// the new one under a hidden name (".NAME.nvc-XXXX"); without an undo
// stack it is removed at once. Like WriteFile, it needs a filesystem with
// RENAME_EXCHANGE.
func (r *Root) ReplaceSymlink(target, unsafePath string) (*Entry, error) {
	return r.replaceSymlink(target, unsafePath, false)
}

// replaceSymlink is ReplaceSymlink; lean leaves a link it creates (not
// one it exchanges) unopened (see Link).
func (r *Root) replaceSymlink(target, unsafePath string, lean bool) (*Entry, error) {
	parent, name, err := splitLast(unsafePath)
	var e *Entry
	if err == nil {
		var dir *handle
		if dir, err = r.makeDirs(parent); err == nil {
			if e, err = r.relinkIn(dir, name, unsafePath, target, lean); err != nil {
				dir.release()
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("replacing symlink %q -> %q in rootfs %q: %w", unsafePath, target, r.Path(), err)
	}
	return e, nil
}

// relinkIn creates the link in dir, or replaces a symlink with another
// target there.
func (r *Root) relinkIn(dir *handle, name, unsafePath, target string, lean bool) (*Entry, error) {
	r.sweepStale(dir)
	e, err := r.createIn(dir, name, unsafePath, unix.S_IFLNK, makeLink(target), 0, target, lean)
	if !errors.Is(err, fs.ErrExist) { // only a symlink to elsewhere is replaced
		return e, err
	}
	return r.exchangeLink(dir, name, unsafePath, target)
}

// exchangeLink makes the new link under a temporary name, owns it, and
// exchanges it with the symlink at name, which must still be one.
func (r *Root) exchangeLink(dir *handle, name, unsafePath, target string) (*Entry, error) {
	if err := r.mayCreate(dir); err != nil {
		return nil, err
	}
	tmp := "." + name + ".nvc-" + randomSuffix()
	if err := unix.Symlinkat(target, dir.fd, tmp); err != nil {
		return nil, &os.PathError{Op: "symlinkat", Path: tmp, Err: err}
	}
	e, err := r.ownTemp(dir, tmp, unsafePath)
	if err == nil {
		err = swapLink(dir.fd, tmp, name, unsafePath)
	}
	if err != nil {
		if e != nil {
			e.closeFile()
		}
		unix.Unlinkat(dir.fd, tmp, 0)
		return nil, err
	}
	e.name, e.created = name, true
	r.recordRelink(dir, name, tmp, &e.st, target)
	return e, nil
}

// ownTemp opens the new link at tmp in dir and gives it the Root's
// owner; the Entry does not take a reference to dir (the caller's becomes
// its own once the link is in place).
func (r *Root) ownTemp(dir *handle, tmp, unsafePath string) (*Entry, error) {
	fd, err := openLeaf(dir.fd, tmp, unsafePath)
	if err != nil {
		return nil, err
	}
	e, err := entryFor(dir, tmp, fd, unsafePath, true)
	if err != nil {
		return nil, err
	}
	if _, err := r.chown(e.fd, unsafePath, &e.st); err != nil {
		return e, err
	}
	return e, nil
}

// swapLink exchanges tmp and name in dir, then checks that what was at
// name, now at tmp, is a symlink; if not (the image swapped a file or a
// directory in meanwhile), it exchanges them back.
func swapLink(dir int, tmp, name, unsafePath string) error {
	if err := unix.Renameat2(dir, tmp, dir, name, unix.RENAME_EXCHANGE); err != nil {
		return &os.PathError{Op: "renameat2", Path: unsafePath, Err: err}
	}
	var st unix.Stat_t
	err := unix.Fstatat(dir, tmp, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return nil
	}
	if err == nil {
		err = fmt.Errorf("%q is a %s, want a symlink: %w", unsafePath, inroot.TypeName(st.Mode), ErrWrongType)
	} else {
		err = &os.PathError{Op: "fstatat", Path: unsafePath, Err: err}
	}
	if xerr := unix.Renameat2(dir, tmp, dir, name, unix.RENAME_EXCHANGE); xerr != nil {
		return errors.Join(err, &os.PathError{Op: "renameat2 (back)", Path: unsafePath, Err: xerr})
	}
	return err
}

// recordRelink records how to put the old link (now at tmp) back, or
// drops it at once without an undo stack.
func (r *Root) recordRelink(dir *handle, name, tmp string, st *unix.Stat_t, target string) {
	if r.opts.Undo == nil {
		unix.Unlinkat(dir.fd, tmp, 0)
		return
	}
	x := &exchanged{c: newCreation(dir, name, st, target), tmp: tmp, swapped: true}
	r.opts.Undo.AddStepFd(x.undo, x.release)
}
