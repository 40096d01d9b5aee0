package rootfs

import (
	"os"
	"regexp"

	"golang.org/x/sys/unix"
)

// tempSuffixLen is the length of randomSuffix's hex.
const tempSuffixLen = 12

// staleTemp matches the hidden names WriteFile and ReplaceSymlink give
// their temporaries and the previous entries they keep for undo:
// ".NAME.nvc-" and 12 lowercase hex digits.
var staleTemp = regexp.MustCompile(`^\..+\.nvc-[0-9a-f]{12}$`)

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
		if len(n) > len(".x.nvc-")+tempSuffixLen && staleTemp.MatchString(n) {
			stale = append(stale, n)
		}
	}
	return stale
}
