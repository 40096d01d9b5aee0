package ldcache

// UpdateOptions tune Update. A nil *UpdateOptions means all defaults.
type UpdateOptions struct {
	// FirstDirs are scanned before everything else, so that their
	// libraries win any SONAME they share with others — the place for
	// CUDA's forward-compatibility directory, whose newer libcuda.so.1
	// must be found before the driver's. Paths inside the rootfs. Nil:
	// none.
	FirstDirs []string
	// Dirs are scanned after FirstDirs and before the rootfs's own
	// configuration: the directories the driver's libraries were mounted
	// into. Paths inside the rootfs. Nil: none.
	Dirs []string
	// Cache is the cache file, a path inside the rootfs. Empty:
	// "/etc/ld.so.cache".
	Cache string
	// Config is the configuration file, a path inside the rootfs. Empty:
	// "/etc/ld.so.conf".
	Config string
	// Family chooses the trusted directories and whether the rootfs uses
	// musl. Zero: DetectFamily.
	Family Family
	// GOARCH is the rootfs's architecture. Empty: the running program's.
	GOARCH string
	// Links also creates the SONAME symlinks in the scanned directories,
	// as the container's ldconfig would. False: the directories are only
	// read (read-only driver mounts stay untouched).
	Links bool
	// LinkDirs creates the SONAME symlinks in FirstDirs and Dirs alone
	// (BuildOptions.LinkDirs), in the same scan that reads them for the
	// cache, as `ldconfig -n FirstDirs Dirs` run first would, and leaves
	// the rootfs's own directories as they are; it works with
	// Incremental. In a musl root, where nothing is scanned for a cache,
	// the directories are scanned for their links alone. False: Links
	// decides.
	LinkDirs bool
	// Format of the written cache. Zero: the new format.
	Format Format
	// Generator is recorded in the cache. Empty: DefaultGenerator.
	Generator string
	// Incremental reuses the entries of the existing cache file for the
	// directories not changed since it was written (BuildOptions.Reuse);
	// FirstDirs and Dirs are scanned unless Before recorded them. False:
	// every directory is scanned.
	Incremental bool
	// Before and Added are BuildOptions.Before and Added: the snapshot
	// TakeSnapshot took before the caller put libraries into the rootfs,
	// and the paths it put there. Nil: none.
	Before *Snapshot
	Added  []string
}
