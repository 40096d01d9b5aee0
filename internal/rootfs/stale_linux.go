package rootfs

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// tempSuffixLen is the length of randomSuffix's hex.
const tempSuffixLen = 12

// staleTemp reports whether name is one of the hidden names WriteFile and
// ReplaceSymlink give their temporaries and the previous entries they keep
// for undo: ".NAME.nvc-" and 12 lowercase hex digits (NAME not empty, no
// newline), as the regular expression ^\..+\.nvc-[0-9a-f]{12}$ would say;
// matched by hand, so that the package compiles no pattern at start-up.
func staleTemp(name string) bool {
	const mark = ".nvc-"
	n := len(name) - tempSuffixLen - len(mark)
	if n < 2 || name[0] != '.' || name[n:n+len(mark)] != mark || strings.Contains(name[1:n], "\n") {
		return false
	}
	for _, c := range []byte(name[n+len(mark):]) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// dirKey identifies a directory by inode, so that one reached by two paths
// is swept once.
type dirKey struct{ dev, ino uint64 }

// sweepStale removes, once per directory and Root, the temporaries an
// interrupted WriteFile or ReplaceSymlink left in dir (a process killed
// between creating and renaming, or before its undo stack was released):
// entries whose name matches staleTemp exactly and that are regular files
// or symlinks, nothing else. It runs only with Options.RemoveStaleTemps;
// the caller must be the only writer of such names in the rootfs (Apply
// holds its rootfs lock). Errors are ignored: a stale temporary that
// stays is harmless.
func (r *Root) sweepStale(dir *handle) {
	if !r.opts.RemoveStaleTemps || dir.swept.Load() || r.mayCreate(dir) != nil {
		return // nor in a directory where nothing may be created
	}
	dir.swept.Store(true) // this handle; another one to the same directory is told by its inode
	var st unix.Stat_t
	if unix.Fstat(dir.fd, &st) != nil {
		return
	}
	key := dirKey{st.Dev, st.Ino}
	r.mu.Lock()
	done := r.swept[key]
	if r.swept == nil {
		r.swept = map[dirKey]bool{}
	}
	r.swept[key] = true
	r.mu.Unlock()
	if done {
		return
	}
	for _, name := range staleNames(dir.fd) {
		var est unix.Stat_t
		if unix.Fstatat(dir.fd, name, &est, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		if t := est.Mode & unix.S_IFMT; t == unix.S_IFREG || t == unix.S_IFLNK {
			unix.Unlinkat(dir.fd, name, 0)
		}
	}
}

// staleNames lists the names in the directory dirFd (O_PATH) that match
// staleTemp.
func staleNames(dirFd int) []string {
	fd, err := unix.Openat(dirFd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), ".")
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	var stale []string
	for _, n := range names {
		if len(n) > len(".x.nvc-")+tempSuffixLen && staleTemp(n) {
			stale = append(stale, n)
		}
	}
	return stale
}
