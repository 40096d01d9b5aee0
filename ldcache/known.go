package ldcache

// Library is what a loader cache entry needs of one library file, as
// ldconfig reads it (its SONAME, the entry's type flags and, on x86, the
// ISA level its glibc-hwcaps placement uses), tied to the file it was
// read from (its FileID). Only ReadLibrary makes one, with the same ELF
// reading Build does, so a Library handed to Build (BuildOptions.Known)
// never says what Build would not have read of that file. The zero value
// describes no file and is never used.
type Library struct {
	goarch string
	id     FileID
	info   libInfo
	// listed: ldconfig lists the file (else it is no library of the
	// target)
	listed bool
	// aout: an a.out library, whose SONAME comes from the name it is
	// found by
	aout bool
}

// FileID is a file's identity and content version as stat(2) gives
// them: st_dev, st_ino, st_size, and st_mtim and st_ctim in nanoseconds.
// A write changes the times (the ctime cannot be set back), a
// replacement the inode.
type FileID struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64
}

// Soname returns the SONAME an ldconfig cache entry names the library by,
// and false when ldconfig would leave the file out (no shared object of
// the target) or names it after the file it is found by (a.out).
func (l Library) Soname() (string, bool) {
	if !l.listed || l.aout || !l.info.hasSName {
		return "", false
	}
	return l.info.soname, true
}

// knownHook is called with the path of each library Build took from
// BuildOptions.Known instead of reading it (tests only).
var knownHook func(path string)

// readHook is called with the path of each file Build reads to classify
// (tests only).
var readHook func(path string)
