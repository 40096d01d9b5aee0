package ldcache

// Snapshot is a root's loader cache file and directories as TakeSnapshot
// found them: their identities and times, recorded before a caller puts
// files into the directories, so that an incremental Build
// (BuildOptions.Before) can tell the caller's changes from everyone
// else's. The zero value records nothing.
type Snapshot struct {
	cachePath string
	cache     stamp // zero: no cache file
	dirs      []stamp
	// paths are the components of the directories' paths (each prefix,
	// not following its last symlink): the caller may change them too (a
	// directory it creates beside one of dirs)
	paths map[string]stamp
}

// stamp is a file's identity and times.
type stamp struct {
	dev, ino     uint64
	mtime, ctime timespec
}

// timespec is a time as the kernel gives it.
type timespec struct{ sec, nsec int64 }

// before reports whether a is earlier than b.
func (a timespec) before(b timespec) bool {
	return a.sec < b.sec || (a.sec == b.sec && a.nsec < b.nsec)
}

// olderThan reports whether s's times are both earlier than c's: s has
// not changed since c was written.
func (s *stamp) olderThan(c *stamp) bool {
	return s.mtime.before(c.mtime) && s.ctime.before(c.ctime)
}
