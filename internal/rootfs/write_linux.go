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
		var dir *os.File
		if dir, err = r.makeDirs(parent); err == nil {
			err = r.writeIn(dir, name, unsafePath, data, perm)
			dir.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("writing %q in rootfs %q: %w", unsafePath, r.Path(), err)
	}
	return nil
}

func (r *Root) writeIn(dir *os.File, name, unsafePath string, data []byte, perm fs.FileMode) error {
	if err := refuseDir(dir, name, unsafePath); err != nil {
		return err
	}
	tmp, f, err := r.writeTemp(dir, name, data, perm)
	if err != nil {
		return err
	}
	defer f.Close()
	swapped, err := swapIn(dir, tmp, name)
	if err != nil {
		unix.Unlinkat(int(dir.Fd()), tmp, 0)
		return &os.PathError{Op: "renameat2", Path: unsafePath, Err: err}
	}
	return r.recordWrite(dir, name, tmp, f, swapped)
}

func refuseDir(dir *os.File, name, unsafePath string) error {
	var st unix.Stat_t
	err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return fmt.Errorf("%q is a directory, want a regular file: %w", unsafePath, ErrWrongType)
	}
	return nil
}

// writeTemp writes data to a new file with a random name in dir.
func (r *Root) writeTemp(dir *os.File, name string, data []byte, perm fs.FileMode) (string, *os.File, error) {
	tmp := "." + name + ".nvc-" + randomSuffix()
	fd, err := unix.Openat(int(dir.Fd()), tmp, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return "", nil, &os.PathError{Op: "openat", Path: tmp, Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	err = writeAll(f, data)
	if err == nil {
		err = r.chown(f)
	}
	if err == nil {
		err = chmodFd(f, perm)
	}
	if err != nil {
		f.Close()
		unix.Unlinkat(int(dir.Fd()), tmp, 0)
		return "", nil, err
	}
	return tmp, f, nil
}

func writeAll(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Sync()
}

func randomSuffix() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// swapIn moves tmp to name. If name existed, the two are exchanged (tmp
// then holds the old file) and swapped is true.
func swapIn(dir *os.File, tmp, name string) (swapped bool, err error) {
	d := int(dir.Fd())
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
func (r *Root) recordWrite(dir *os.File, name, tmp string, f *os.File, swapped bool) error {
	drop := func() {
		if swapped {
			unix.Unlinkat(int(dir.Fd()), tmp, 0)
		}
	}
	if r.opts.Undo == nil {
		drop()
		return nil
	}
	c, err := newCreation(dir, name, f, "")
	if err != nil {
		drop()
		return err
	}
	c.sized = true
	w := &write{c: c, tmp: tmp, swapped: swapped}
	r.opts.Undo.AddStep(w.undo, w.release)
	return nil
}

// write is an undoable WriteFile.
type write struct {
	c       *creation
	tmp     string // holds the previous file when swapped
	swapped bool
}

func (w *write) undo() error {
	if !w.swapped {
		return w.c.undo()
	}
	defer w.c.dir.Close()
	if !w.c.stillOurs() {
		return nil
	}
	d := int(w.c.dir.Fd())
	if err := unix.Renameat2(d, w.tmp, d, w.c.name, unix.RENAME_EXCHANGE); err != nil {
		return fmt.Errorf("restoring %q: %w", w.c.name, os.NewSyscallError("renameat2", err))
	}
	return unlinkIgnoreMissing(d, w.tmp)
}

func (w *write) release() {
	if w.swapped {
		unix.Unlinkat(int(w.c.dir.Fd()), w.tmp, 0)
	}
	w.c.dir.Close()
}

func unlinkIgnoreMissing(dir int, name string) error {
	if err := unix.Unlinkat(dir, name, 0); err != nil && err != unix.ENOENT {
		return fmt.Errorf("removing %q: %w", name, os.NewSyscallError("unlinkat", err))
	}
	return nil
}
