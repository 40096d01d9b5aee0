package rootfs

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Entry is a file, directory, symlink or node inside a root, pinned by
// descriptors: its parent directory and itself (O_PATH, not followed).
type Entry struct {
	dir     *handle // shared with other entries in the same directory
	name    string
	fd      int
	path    string
	st      unix.Stat_t
	mntID   uint64 // 0: unknown (no statx, or a kernel before 5.8)
	created bool

	file *os.File // made on demand by File
}

// newEntry opens name in dir; the Entry takes over the reference to dir.
func newEntry(dir *handle, name, unsafePath string, created bool) (*Entry, error) {
	fd, err := openLeaf(dir.fd, name, unsafePath)
	if err != nil {
		return nil, err
	}
	return entryFor(dir, name, fd, unsafePath, created)
}

// entryFor wraps an already open descriptor; it takes over the reference
// to dir and, on success, fd (closed on failure).
func entryFor(dir *handle, name string, fd int, unsafePath string, created bool) (*Entry, error) {
	e := &Entry{dir: dir, name: name, fd: fd, path: unsafePath, created: created}
	id, err := fstatMount(fd, &e.st)
	if err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: unsafePath, Err: err}
	}
	e.mntID = id
	return e, nil
}

// fstatMount is fstat of fd, with the ID of the mount fd is on (0 where
// the kernel cannot tell: before Linux 5.8, or without statx), in one
// system call.
func fstatMount(fd int, st *unix.Stat_t) (uint64, error) {
	var stx unix.Statx_t
	err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_SYNC_AS_STAT,
		unix.STATX_BASIC_STATS|unix.STATX_MNT_ID, &stx)
	if err == unix.ENOSYS || (err == nil && stx.Mask&unix.STATX_BASIC_STATS != unix.STATX_BASIC_STATS) {
		return 0, unix.Fstat(fd, st)
	}
	if err != nil {
		return 0, err
	}
	statFromStatx(st, &stx)
	if stx.Mask&unix.STATX_MNT_ID == 0 {
		return 0, nil
	}
	return stx.Mnt_id, nil
}

// statFromStatx fills st as fstat would from a statx with the basic
// stats (the field types of Stat_t vary between architectures).
func statFromStatx(st *unix.Stat_t, stx *unix.Statx_t) {
	*st = unix.Stat_t{
		Dev:  unix.Mkdev(stx.Dev_major, stx.Dev_minor),
		Ino:  stx.Ino,
		Mode: uint32(stx.Mode),
		Uid:  stx.Uid,
		Gid:  stx.Gid,
		Rdev: unix.Mkdev(stx.Rdev_major, stx.Rdev_minor),
		Atim: timespec(stx.Atime),
		Mtim: timespec(stx.Mtime),
		Ctim: timespec(stx.Ctime),
	}
	setInt(&st.Nlink, int64(stx.Nlink))
	setInt(&st.Size, int64(stx.Size))
	setInt(&st.Blksize, int64(stx.Blksize))
	setInt(&st.Blocks, int64(stx.Blocks))
}

func setInt[T ~int32 | ~int64 | ~uint32 | ~uint64](p *T, v int64) { *p = T(v) }

func timespec(t unix.StatxTimestamp) unix.Timespec {
	return unix.NsecToTimespec(t.Sec*1e9 + int64(t.Nsec))
}

// Dir is the O_PATH descriptor of the entry's parent directory, valid
// until Close; the Entry keeps ownership.
func (e *Entry) Dir() *os.File { return e.dir.File() }

// DirFd is Dir's descriptor number, without an *os.File.
func (e *Entry) DirFd() int { return e.dir.fd }

// Name is the entry's name in Dir.
func (e *Entry) Name() string { return e.name }

// File is the entry's own descriptor (O_PATH, or read-only for a file
// just created): a move_mount target. The Entry keeps ownership.
func (e *Entry) File() *os.File {
	if e.file == nil {
		e.file = os.NewFile(uintptr(e.fd), e.path)
	}
	return e.file
}

// Fd is File's descriptor number, without an *os.File.
func (e *Entry) Fd() int { return e.fd }

// Stat is the entry's fstat from when it was opened (or created; the
// owner and mode set afterwards are not in it).
func (e *Entry) Stat() unix.Stat_t { return e.st }

// MountID is the ID of the mount the entry is on, as statx reports it
// (STATX_MNT_ID), read with its Stat; 0 where the kernel did not say.
func (e *Entry) MountID() uint64 { return e.mntID }

// Path is the unsafePath the entry was asked for, for messages.
func (e *Entry) Path() string { return e.path }

// Created reports whether this call created the entry (it did not exist).
func (e *Entry) Created() bool { return e.created }

// Mode is the entry's type and permissions when it was opened.
func (e *Entry) Mode() fs.FileMode { return FileMode(e.st.Mode) }

// Rdev is the device number of a device node entry.
func (e *Entry) Rdev() uint64 { return e.st.Rdev }

// Close releases both descriptors.
func (e *Entry) Close() error {
	e.dir.release()
	return e.closeFile()
}

// closeFile releases the entry's own descriptor only (a lean entry has
// none).
func (e *Entry) closeFile() error {
	switch {
	case e.file != nil:
		return e.file.Close()
	case e.fd < 0:
		return nil
	}
	return unix.Close(e.fd)
}

// FileMode is the mode m of stat(2) (chmod(2)'s bits and the file type)
// as an fs.FileMode.
func FileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	return mode
}
