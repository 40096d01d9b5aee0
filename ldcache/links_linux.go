package ldcache

import (
	"strings"

	"golang.org/x/sys/unix"
)

// createLinks is glibc's create_links: make dir/soname a symlink to
// libname unless it already resolves to the same file or is not a
// symlink. It acts through dirfd, so only the directory's own entry is
// touched; sonames that are not a plain file name are left alone. right
// says the scan already saw dir/soname lead to the regular file libname
// of the same directory (glibc's two stats would find one inode).
func (b *builder) createLinks(dirfd int, d *dirEnt, libname, soname string, right bool) {
	if soname == "" || soname == "." || soname == ".." || strings.Contains(soname, "/") {
		return
	}
	doLink, doRemove, ok := false, true, true
	if !right {
		doLink, doRemove, ok = b.linkState(dirfd, d.path, libname, soname)
	}
	if !ok {
		return
	}
	b.verbose.link(soname, libname)
	if !doLink || !b.linksIn(d) {
		b.verbose.linkDone("")
		return
	}
	if (doRemove && unix.Unlinkat(dirfd, soname, 0) != nil) || unix.Symlinkat(libname, dirfd, soname) != nil {
		b.verbose.linkDone(" (SKIPPED)")
		return
	}
	b.verbose.linkDone(" (changed)")
}

// linkState decides, as create_links does, whether dir/soname must be
// (re)made and whether something is to be removed first; ok is false
// when the library itself cannot be found.
func (b *builder) linkState(dirfd int, dir, libname, soname string) (doLink, doRemove, ok bool) {
	so, err := b.r.stat(dir + "/" + soname)
	if err != nil {
		return true, b.isSymlink(dirfd, soname), true // a stale link is removed
	}
	lib, err := b.r.stat(dir + "/" + libname)
	switch {
	case err != nil:
		return false, false, false
	case lib.Dev == so.Dev && lib.Ino == so.Ino:
		return false, true, true // already right
	case !b.isSymlink(dirfd, soname):
		return false, false, true // a file is in the way: leave it
	}
	return true, true, true
}

// linksIn reports whether the SONAME links of d are to be written.
func (b *builder) linksIn(d *dirEnt) bool { return !b.o.NoLinks || d.links }

func (b *builder) isSymlink(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}
