// Package ldcache reads, builds and writes glibc's dynamic loader cache,
// /etc/ld.so.cache, in Go.
//
// Reading: [Parse] and [Open] decode all three layouts glibc 2.36's
// ldconfig writes (-c old, compat, new): the libc5-era "ld.so-1.7.0"
// table, the "glibc-ld.so.cache1.1" table with its glibc 2.33+ extension
// section (generator string, glibc-hwcaps subdirectories), and the compat
// file that holds both. Entries keep file order; [Cache.Find] and
// [Cache.FindPrefix] look libraries up per [Arch] the way the loader and
// libnvidia-container do. [Cache.Print] writes what `ldconfig -p` prints.
// Parsing checks every count, offset and string, so hostile files give an
// error naming the offset, never a panic.
//
// Building: [Build] is a pure-Go `ldconfig -r ROOT`. It reads the root's
// ld.so.conf (with include globs), scans the configured and trusted
// directories and their glibc-hwcaps subdirectories, reads each
// candidate's ELF header and dynamic section, picks one file per SONAME
// and directory by glibc's rules and sorts the entries as glibc does, so
// [Cache.MarshalBinary] and [WriteFile] produce the bytes glibc's ldconfig
// would write for the same root. Every path is resolved inside the root
// with openat2(RESOLVE_IN_ROOT): symlinks in a hostile root cannot reach
// host files. Nothing is executed.
//
// No file of the root is opened for reading before it is known to be a
// regular file: a library, a configuration file, a musl path file or a
// cache is opened O_PATH (which runs no driver's open and cannot block),
// checked with fstat on that descriptor, and only then reopened for
// reading through the descriptor, /proc/thread-self/fd/N
// (internal/inroot). A process sharing a scanned directory (a sidecar on
// a shared volume) that renames a device node or FIFO over a library
// between the listing and the read therefore never gets it opened as the
// host's root: the entry is skipped, as glibc skips a file that is not a
// library. Build fails only where no procfs can be opened at all.
//
// Updating a container: [Update] rebuilds a container root's cache with
// extra directories (the driver libraries mounted into it) scanned first,
// writing through a directory file descriptor opened inside the root and
// renaming over the old cache, so a planted symlink at /etc/ld.so.cache or
// /etc is never followed out of the root. On musl roots it updates
// /etc/ld-musl-<arch>.path instead.
//
// Privileges: reading needs none. Build needs read access to the root;
// Update and WriteFile need write access to the cache's directory. Build,
// Update and link creation use Linux system calls (openat2 from Linux
// 5.6; older kernels use filepath-securejoin's emulation) and exist only
// on Linux; Parse, lookups and encoding are portable.
//
// Fidelity: for the roots the tests generate (and a mirror of a Debian 12
// host's ~600 libraries) Build's cache is byte-identical to the one glibc
// 2.36's ldconfig writes, in all three layouts, and [Cache.Print] matches
// `ldconfig -p` byte for byte. Known differences: Build never follows a
// SONAME containing '/' when making links; it reads a configuration file
// that includes itself once (glibc recurses until it runs out of file
// descriptors, with the same result) and at most 1024 files, 16 levels
// deep, 1 MiB and 4096 directory lines in all; include globs open at most 4096 directories and match at most
// 4096 paths per Build, and list a directory reached twice for one
// pattern component once (glob(3) would list 40^6 paths for
// /a/*/*/*/*/*/* where /a holds 40 symlinks to itself); a configuration,
// musl path or cache file that is not a regular file is never opened (a
// device node could act, a FIFO block) but skipped, or, for the cache,
// refused; LD_HWCAP_MASK is ignored;
// glibc 2.36 corrupts its heap writing old or compat files that hold
// legacy hwcap ("tls", platform) entries, which Build writes correctly.
// In the compat layout glibc stores glibc-hwcaps names at offsets its own
// reader resolves from another base; the bytes are the same, so such
// names read back wrong from both.
//
// Speed: ELF files are read with a small reader that follows glibc's
// readelflib (the head of each file, then a few windows kept for the
// dynamic section and its strings: about three reads per real shared
// object), not debug/elf, which the benchmarks measure about 4 times
// slower; each file is read once however many links lead to it (glibc
// does the same through its in-memory aux cache); symlinks to files of
// the same directory are resolved with one readlinkat; files of a
// directory are read in parallel. Build makes about eight system calls
// per library with its two usual links (three of them the O_PATH open,
// fstat and close that keep device nodes unopened; glibc's ldconfig
// about ten, and an mmap and munmap); BenchmarkBuildWrite compares it
// with glibc's ldconfig variant by variant.
//
// Incremental builds: with BuildOptions.Reuse (UpdateOptions.Incremental)
// Build takes the entries of the root's own cache file for every
// directory nothing has changed in since that file was written, and scans
// the others. Changed means a time (mtime against the cache file's
// mtime, ctime against its ctime, nanoseconds, equal counts as changed)
// not older than the cache's, on: the configuration files and include
// directories (any: full rebuild), the directory, each component of its
// path, and each component of the path of a symlink that leads out of
// the directory and what it resolves to. A regular file a candidate name
// reaches that changed (a file rewritten in place moves only its own
// ctime) or is on another mount than its directory (a library mounted
// over an image's file shows the host file's times) is read again, with
// the names leading to it; the cached entries of those names are
// dropped if the file read gives them back with their type, else the
// directory is scanned. A cache that does not parse,
// is in the old format, another byte order, holds no library of the
// target's own kind (written for another architecture) or entries with
// an OS version (an ldconfig older than glibc 2.36's) is not used; nor is
// one whose entries for a directory do not match its listing (an entry
// naming a file that is not there, a name twice, another hwcap word, none
// for a directory with files): that directory is scanned. Entries written
// under another path of the same directory (/lib/x86_64-linux-gnu for
// /usr/lib/x86_64-linux-gnu on a merged /usr) are taken under the new
// path.
//
// The directories a caller puts libraries into (BuildOptions.Dirs, where
// configure mounts the driver's) change when it does. TakeSnapshot
// records them, their paths' components and the cache file before the
// caller's first change; with that snapshot (BuildOptions.Before) and
// the paths the caller then created, replaced or mounted over there
// (BuildOptions.Added), such a directory is reused like any other if it
// was unchanged when recorded: only the candidates that are, or lead
// through a symlink of the directory to, an added name are read, and
// symlinks elsewhere into it are checked against its listing. A
// directory holding an added name that the snapshot did not record, and
// one whose added libraries share a SONAME with its cached entries (or
// whose cached entries name an added path), is scanned. Without a
// snapshot the directories in Dirs, and those with a symlink into one of
// them, are always scanned. nvcontainer's step 8 takes the snapshot before
// Apply's first change and passes its mounts' and links' paths.
//
// The result is byte for byte the full Build's (property tests over
// generated roots with random changes, with and without injected
// libraries, mounts over image files, new subdirectories and links from
// other directories, check it, and against glibc's ldconfig). What a
// lying cache keeps: a wrong SONAME or type claimed for a file that is
// there, or a library left out, for that name only. Every stat is made
// inside the root (fstatat or statx on a directory opened inside it, or
// openat2 RESOLVE_IN_ROOT); nothing outside it is looked at, and no file
// of a reused directory but the added ones is opened. Not seen: a
// symlink chain that, past its first hop, goes through a symlink
// elsewhere repointed since to an older file; a file whose mtime was set
// back and which was extracted before the cache file (its ctime older
// too), as a tar layer holding both could; a library of the image that
// shares its SONAME with one read again (added or changed) and has
// another type (ELF against libc6: the merged type can differ). A
// freshly extracted image (every ctime the extraction's) mostly gets its
// directories scanned: the gain is for roots whose cache was written
// after their files (a committed or locally built image).
//
// Known libraries: a caller that read an added library where it took it
// from (configure reads the host's driver libraries to select them) hands
// Build that reading (ReadLibrary, the same ELF code Build reads with,
// tied to the file's device, inode, size and times) in
// BuildOptions.Known. For an added path, scanned or read again, Build
// then takes it after one statx shows the file there (not followed) is
// the file read, as a bind mount of it is, instead of opening and
// reading it; anything else there is read. Readings for paths not added
// are ignored. The cache is the same.
//
// Cost: a reused directory costs a getdents, a readlink per symlink and a
// statx per regular file its candidates reach (the rewritten-in-place
// rule), against about six system calls per library for glibc's
// ldconfig, which bounds the gain on a directory of symlinked libraries
// to about four to six times in system calls; see BenchmarkIncrementalUpdate
// and README's Benchmarks for the figures.
//
// When not to use it: a system whose libraries are not found through
// ld.so.cache (NixOS, or binaries with RUNPATH) gains nothing from a
// cache; and ldcache does not read the auxiliary cache, so it always
// reads every candidate file.
package ldcache
