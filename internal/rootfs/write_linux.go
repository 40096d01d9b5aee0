package rootfs

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// WriteFile replaces unsafePath with a regular file holding data, owned
// by the Root's owner, with perm. It writes a new file under a temporary
// name in the same directory and renames it over the target, so the last
// component is never followed (a symlink there is replaced, not written
// through) and readers see the old or the new file, never a partial one.
// Missing parents are created. A directory there is [ErrWrongType].
//
// Undo puts the previous file back (or removes the new one when there was
// none), as long as the new file is still there. Until the step is undone
// or released, the previous file stays next to the new one under a hidden
// name (".NAME.nvc-XXXX"); without an undo stack it is removed at once.
// The exchange needs a filesystem with renameat2(RENAME_EXCHANGE) (ext4,
// xfs, btrfs, tmpfs, overlayfs).
func (r *Root) WriteFile(unsafePath string, data []byte, perm fs.FileMode) error {
	parent, name, err := splitLast(unsafePath)
	if err == nil {
		var dir *handle
		if dir, err = r.makeDirs(parent); err == nil {
			err = r.writeIn(dir, name, unsafePath, data, perm)
			dir.release()
		}
	}
	if err != nil {
		return fmt.Errorf("writing %q in rootfs %q: %w", unsafePath, r.Path(), err)
	}
	return nil
}

func (r *Root) writeIn(dir *handle, name, unsafePath string, data []byte, perm fs.FileMode) error {
	if err := refuseDir(dir.fd, name, unsafePath); err != nil {
		return err
	}
	if err := r.mayCreate(dir); err != nil {
		return err
	}
	r.sweepStale(dir)
	tmp, fd, err := r.writeTemp(dir.fd, name, data, perm)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	swapped, err := swapIn(dir.fd, tmp, name)
	if err != nil {
		unix.Unlinkat(dir.fd, tmp, 0)
		return &os.PathError{Op: "renameat2", Path: unsafePath, Err: err}
	}
	return r.recordWrite(dir, name, tmp, fd, swapped)
}

func refuseDir(dir int, name, unsafePath string) error {
	var st unix.Stat_t
	err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return fmt.Errorf("%q is a directory, want a regular file: %w", unsafePath, ErrWrongType)
	}
	return nil
}

// writeTemp writes data to a new file with a random name in dir.
func (r *Root) writeTemp(dir int, name string, data []byte, perm fs.FileMode) (string, int, error) {
	tmp := "." + name + ".nvc-" + randomSuffix()
	fd, err := unix.Openat(dir, tmp, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return "", -1, &os.PathError{Op: "openat", Path: tmp, Err: err}
	}
	err = writeAll(fd, tmp, data)
	if err == nil {
		_, err = r.chown(fd, tmp, nil)
	}
	if err == nil {
		err = chmodFd(fd, tmp, perm, nil, false)
	}
	if err != nil {
		unix.Close(fd)
		unix.Unlinkat(dir, tmp, 0)
		return "", -1, err
	}
	return tmp, fd, nil
}

// writeAll writes data and waits for it to reach the disk, as glibc's
// ldconfig does before renaming its cache into place.
func writeAll(fd int, name string, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "write", Path: name, Err: err}
		}
		data = data[n:]
	}
	if err := unix.Fsync(fd); err != nil {
		return &os.PathError{Op: "fsync", Path: name, Err: err}
	}
	return nil
}

func randomSuffix() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// swapIn moves tmp to name. If name existed, the two are exchanged (tmp
// then holds the old file) and swapped is true.
func swapIn(d int, tmp, name string) (swapped bool, err error) {
	err = unix.Renameat2(d, tmp, d, name, unix.RENAME_EXCHANGE)
	if err == nil {
		return true, nil
	}
	if err == unix.ENOENT {
		return false, unix.Renameat2(d, tmp, d, name, unix.RENAME_NOREPLACE)
	}
	return false, err
}

// recordWrite records how to undo the write and drops the old file
// (now under tmp) once the write is kept.
func (r *Root) recordWrite(dir *handle, name, tmp string, fd int, swapped bool) error {
	drop := func() {
		if swapped {
			unix.Unlinkat(dir.fd, tmp, 0)
		}
	}
	if r.opts.Undo == nil {
		drop()
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		drop()
		return &os.PathError{Op: "fstat", Path: name, Err: err}
	}
	c := newCreation(dir, name, &st, "")
	c.sized = true
	w := &exchanged{c: c, tmp: tmp, swapped: swapped}
	r.opts.Undo.AddStepFd(w.undo, w.release)
	return nil
}

// exchanged is an undoable replacement: WriteFile's, or ReplaceSymlink's.
type exchanged struct {
	c       *creation
	tmp     string // holds the previous entry when swapped
	swapped bool
}

// undo puts the previous entry back (or removes the new one when there
// was none), as long as the new one is still what was made.
func (w *exchanged) undo() error {
	if !w.swapped {
		return w.c.undo()
	}
	defer w.c.dir.release()
	d := w.c.dir.fd
	var st unix.Stat_t
	err := unix.Fstatat(d, w.c.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == unix.ENOENT { // the new one is gone: the previous goes back
		err = unix.Renameat2(d, w.tmp, d, w.c.name, unix.RENAME_NOREPLACE)
		if err == nil {
			return nil
		}
	}
	if err != nil || !w.c.stillOurs(&st) {
		unix.Unlinkat(d, w.tmp, 0) // the previous entry cannot go back
		if err == nil {
			err = errChanged
		}
		return w.c.left(err)
	}
	if err := unix.Renameat2(d, w.tmp, d, w.c.name, unix.RENAME_EXCHANGE); err != nil {
		return fmt.Errorf("restoring %q: %w", w.c.name, os.NewSyscallError("renameat2", err))
	}
	return unlinkIgnoreMissing(d, w.tmp)
}

// release drops the previous entry and hands back the directory's
// descriptor if it held the last reference (handle.releaseFd).
func (w *exchanged) release() int {
	if w.swapped {
		unix.Unlinkat(w.c.dir.fd, w.tmp, 0)
	}
	return w.c.dir.releaseFd()
}

func unlinkIgnoreMissing(dir int, name string) error {
	if err := unix.Unlinkat(dir, name, 0); err != nil && err != unix.ENOENT {
		return fmt.Errorf("removing %q: %w", name, os.NewSyscallError("unlinkat", err))
	}
	return nil
}
