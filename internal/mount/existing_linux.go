package mount

import (
	"golang.org/x/sys/unix"
)

// The statfs f_flags bits of the four attributes.
const (
	stRdonly = 0x1
	stNosuid = 0x2
	stNodev  = 0x4
	stNoexec = 0x8
	stAttrs  = stRdonly | stNosuid | stNodev | stNoexec
)

// Covers reports whether a target, whose fstat (mounts followed, as an
// openat of it gives) is st and whose O_PATH descriptor is fd, already
// shows this source exactly as Attach would mount it: the very file
// opened (st_dev and st_ino) on a mount with the same ro, nosuid, nodev and
// noexec flags. Mounting again would only stack a second, identical mount
// (as after an Apply killed part-way and run again). A tmpfs never covers.
// It costs nothing unless the inode matches.
func (s *Source) Covers(st *unix.Stat_t, fd int) bool {
	if s.tmpfs != nil || st.Dev != s.st.Dev || st.Ino != s.st.Ino || st.Mode&unix.S_IFMT != s.st.Mode&unix.S_IFMT {
		return false
	}
	want, ok := s.wantFlags()
	if !ok {
		return false
	}
	var sfs unix.Statfs_t
	return unix.Fstatfs(fd, &sfs) == nil && sfs.Flags&stAttrs == want
}

// wantFlags is the statfs flags (of the four) the mount Attach makes
// would have: the detached clone's own, or (Legacy) the source mount's
// kept flags with the attributes added.
func (s *Source) wantFlags() (int64, bool) {
	if s.tree >= 0 {
		var sfs unix.Statfs_t
		if unix.Fstatfs(s.tree, &sfs) != nil {
			return 0, false
		}
		return sfs.Flags & stAttrs, true
	}
	return stFromMS(s.keep | s.attr.msFlags()), true
}

func stFromMS(ms uintptr) int64 {
	var st int64
	for _, f := range statfsFlags {
		if ms&f.ms != 0 {
			st |= int64(f.st)
		}
	}
	return st & stAttrs
}

// LooksLeftAt reports whether the directory fd (O_PATH, mounts followed)
// is the root of a mount that looks like the one this tmpfs source makes:
// a tmpfs mounted right there, with the source's mode and attributes. An
// Apply killed part-way leaves such a tmpfs (and the mounts inside it);
// the next one detaches it (DetachAt) rather than stacking another.
// Needs Linux 5.8 (statx's STATX_ATTR_MOUNT_ROOT); false before.
func (s *Source) LooksLeftAt(fd int) bool {
	if s.tmpfs == nil {
		return false
	}
	var sfs unix.Statfs_t
	if unix.Fstatfs(fd, &sfs) != nil || sfs.Type != unix.TMPFS_MAGIC ||
		sfs.Flags&stAttrs != stFromMS(s.attr.msFlags()) {
		return false
	}
	var stx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MODE, &stx) != nil {
		return false
	}
	root := stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
	return root && uint32(stx.Mode)&0o7777 == uint32(s.tmpfs.mode.Perm())
}

// DetachAt detaches (MNT_DETACH, with everything mounted inside it) the
// mount whose root fd is, through fd's magic link in a private procfs.
// Call it on a confined thread in the mount's namespace.
func DetachAt(fd int, shown string) error {
	err := viaProcFd(fd, func(p string) error { return unix.Unmount(p, unix.MNT_DETACH) })
	if err != nil {
		return &Error{Op: "umount2", Target: shown, Flags: "detach", Err: err}
	}
	return nil
}
