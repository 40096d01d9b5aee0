package ldcache

import (
	"strings"

	"golang.org/x/sys/unix"
)

// createLinks is glibc's create_links: make dir/soname a symlink to
// libname unless it already resolves to the same file or is not a
// symlink. It acts through dirfd, so only the directory's own entry is
// touched; sonames that are not a plain file name are left alone.
func (b *builder) createLinks(dirfd int, dir, libname, soname string) {
	if soname == "" || soname == "." || soname == ".." || strings.Contains(soname, "/") {
		return
	}
	doLink, doRemove := true, true
	if so, err := b.r.stat(dir + "/" + soname); err == nil {
		lib, err := b.r.stat(dir + "/" + libname)
		if err != nil {
			return
		}
		if lib.Dev == so.Dev && lib.Ino == so.Ino {
			doLink = false
		} else if !b.isSymlink(dirfd, soname) {
			doLink, doRemove = false, false
		}
	} else if !b.isSymlink(dirfd, soname) {
		doRemove = false
	}
	b.verbose.link(soname, libname)
	if !doLink || !b.o.Links {
		b.verbose.linkDone("")
		return
	}
	if doRemove && unix.Unlinkat(dirfd, soname, 0) != nil {
		b.verbose.linkDone(" (SKIPPED)")
		return
	}
	if unix.Symlinkat(libname, dirfd, soname) != nil {
		b.verbose.linkDone(" (SKIPPED)")
		return
	}
	b.verbose.linkDone(" (changed)")
}

func (b *builder) isSymlink(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}
