package ldcache

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/internal/inroot"
)

// Build scans a root as glibc 2.36's `ldconfig -r ROOT` does and returns
// the cache it would write, entries in the same order: the directories in
// opts.Dirs, then those of ROOT/etc/ld.so.conf (following include globs,
// relative ones from the including file's directory), then the trusted
// directories of the root's family, each with its glibc-hwcaps
// subdirectories; the ELF libraries in them, one per SONAME and
// directory (the newest by glibc's version order, a file over a symlink).
//
// Every path — configuration files, directories, symlinked directories
// and libraries — is resolved inside root (openat2 RESOLVE_IN_ROOT), never
// on the host, so a hostile root cannot make Build read outside it. Build
// runs nothing. Unreadable directories and files are skipped, as ldconfig
// skips them; so is a configuration file or library that is not a
// regular file (a device node, FIFO or socket), which Build never opens
// (glibc's ldconfig would open and read it): each file is opened O_PATH,
// checked with fstat, and read only through that descriptor, so one
// renamed over a library after the directory was listed is skipped too.
// Build fails if no procfs can be opened to reopen files through. Include globs are bounded: see the package
// documentation. Unless opts.NoLinks it also writes the SONAME symlinks
// (a nil opts writes them), through file descriptors of the scanned
// directories. Build checks ctx before each directory it scans and, once
// ctx is done, stops and returns its error (context.Cause).
func Build(ctx context.Context, rootPath string, opts *BuildOptions) (*Cache, error) {
	var o BuildOptions
	if opts != nil {
		o = *opts
	}
	t, r, err := openTarget(rootPath, o.GOARCH)
	if err != nil {
		return nil, fmt.Errorf("building ld.so.cache: %w", err)
	}
	defer r.close()
	c, err := build(ctx, r, t, &o)
	if err != nil {
		return nil, fmt.Errorf("building ld.so.cache for %s: %w", rootPath, err)
	}
	return c, nil
}

func build(ctx context.Context, r *root, t *target, o *BuildOptions) (*Cache, error) {
	rp, err := inroot.NewReopener()
	if err != nil {
		return nil, fmt.Errorf("reading libraries: %w", err)
	}
	defer rp.Close()
	b := &builder{t: t, r: r, o: o, rp: rp, buf: make([]byte, 32<<10), head: make([]byte, scratchSize), verbose: newVerbose(o.Verbose)}
	b.scratch = [][]byte{b.head}
	b.loadKnown()
	b.prior = b.loadPrior()
	if b.prior != nil {
		b.list = make([]scanned, 0, b.prior.entries+64)
	}
	b.collectDirs()
	for i := 0; i < len(b.dirs); i++ {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("scanning %s: %w", b.dirs[i].path, context.Cause(ctx))
		}
		if !b.reuseDir(b.dirs[i]) {
			b.searchDir(b.dirs[i])
		}
	}
	if err := b.verbose.flush(); err != nil {
		return nil, fmt.Errorf("verbose output: %w", err)
	}
	return t.finish(b.list, b.seen, o), nil
}

// DetectFamily tells which kind of system rootfs holds, looking inside it
// only: /etc/debian_version marks FamilyDebian; a musl loader
// (/lib/ld-musl-<arch>.so.1 for goarch, empty: the running one) marks
// FamilyMusl; anything else is FamilyLib64.
func DetectFamily(rootfs, goarch string) (Family, error) {
	t, r, err := openTarget(rootfs, goarch)
	if err != nil {
		return 0, fmt.Errorf("detecting the system of %s: %w", rootfs, err)
	}
	defer r.close()
	return detectFamily(r, t), nil
}

// dirEnt is a directory to scan (glibc's struct dir_entry).
type dirEnt struct {
	path     string
	flag     int32
	dev, ino uint64
	hwcaps   string // glibc-hwcaps subdirectory name, "" otherwise
	from     string
	line     int
	st       unix.Stat_t // as found when listed (incremental builds)
	// links: the SONAME links are made here although NoLinks
	// (BuildOptions.LinkDirs)
	links bool
}

type builder struct {
	t    *target
	r    *root
	o    *BuildOptions
	dirs []*dirEnt
	// seenDirs indexes dirs by device and inode
	seenDirs map[[2]uint64]*dirEnt
	list     []scanned
	seen     []string // glibc-hwcaps names, as found
	buf      []byte   // getdents buffer
	head     []byte   // first bytes of each file
	scratch  [][]byte // head, then the parallel workers' buffers
	rp       *inroot.Reopener
	verbose  *verbose
	// prior is the cache file an incremental build reuses; nil: none
	prior *prior
	// known are BuildOptions.Known's keys of the added paths' libraries,
	// by directory and name (see knownFile)
	known map[dirKey]map[string]string
	// configuration files read, and those being read
	confFiles int
	confStack []string
	// bytes and directory lines read from configuration files (see
	// maxConfBytes)
	confBytes int64
	confDirs  int
	// directories opened and paths matched by include globs (see
	// maxGlobDirs)
	globDirs, globMatches int
	// stats and lstats are stat's and lstat's answers by path
	stats, lstats map[string]statAnswer
}

func (b *builder) collectDirs() {
	for _, d := range b.o.Dirs {
		b.addDir(d, "<cmdline>", 0)
	}
	if b.o.LinkDirs {
		for _, d := range b.dirs { // Dirs and their glibc-hwcaps subdirectories
			d.links = true
		}
	}
	if b.o.OnlyDirs {
		return
	}
	conf := b.o.Config
	if conf == "" {
		conf = "/etc/ld.so.conf"
	}
	b.parseConfFile(conf, 0)
	fam := b.o.Family
	if fam == FamilyAuto {
		fam = detectFamily(b.r, b.t)
	}
	for _, d := range b.t.trustedDirs(fam) {
		b.addDir(d, "<builtin>", 0)
	}
}

// Include limits. glibc has none: it follows an include loop until it
// runs out of file descriptors, and a root whose files include each other
// several times over would keep it busy for ever. A file that includes
// itself (directly or not) adds nothing the first reading did not, so
// skipping it gives glibc's result. The configuration files of one Build
// hold at most maxConfBytes together (a file that would pass the total is
// skipped) and at most maxConfDirs directory lines count (later ones are
// ignored): 1024 includes of a 1 MiB file of directory lines would
// otherwise cost tens of millions of lookups. Real configurations hold a
// few kilobytes and a few dozen directories.
const (
	maxIncludeDepth = 16
	maxConfFiles    = 1024
	maxConfBytes    = 1 << 20
	maxConfDirs     = 4096
)

func (b *builder) parseConfFile(file string, depth int) {
	if depth > maxIncludeDepth || b.confFiles >= maxConfFiles || slices.Contains(b.confStack, file) {
		return
	}
	b.confFiles++
	b.confStack = append(b.confStack, file)
	defer func() { b.confStack = b.confStack[:len(b.confStack)-1] }()
	data, err := b.r.readFile(file, maxConfBytes-b.confBytes)
	if err != nil {
		return
	}
	b.confBytes += int64(len(data))
	if b.prior != nil && !b.confOlder(file) {
		b.prior = nil
	}
	for _, l := range parseConf(data) {
		if l.includes == nil {
			if b.confDirs < maxConfDirs {
				b.confDirs++
				b.addDir(l.dir, file, l.line)
			}
			continue
		}
		for _, pat := range l.includes {
			for _, m := range b.glob(includePattern(file, pat)) {
				b.parseConfFile(m, depth+1)
			}
		}
	}
}

// addDir is glibc's add_dir_1: a directory from a configuration line.
func (b *builder) addDir(line, from string, lineno int) {
	p, flag := dirLine(line)
	if p == "" {
		return
	}
	st, err := b.stat(p)
	if err != nil {
		return
	}
	e := &dirEnt{path: p, flag: flag, dev: st.Dev, ino: st.Ino, from: from, line: lineno, st: st}
	if b.addSingle(e) {
		b.addHWCapsDirs(e)
	}
}

// addSingle appends e unless a directory with its device and inode is
// listed already, which then takes e's library type.
func (b *builder) addSingle(e *dirEnt) bool {
	key := [2]uint64{e.dev, e.ino}
	if d, ok := b.seenDirs[key]; ok {
		d.flag = e.flag
		d.links = d.links || e.links
		return false
	}
	if b.seenDirs == nil {
		b.seenDirs = map[[2]uint64]*dirEnt{}
	}
	b.seenDirs[key] = e
	b.dirs = append(b.dirs, e)
	return true
}

// addHWCapsDirs queues the subdirectories of e's glibc-hwcaps directory.
func (b *builder) addHWCapsDirs(e *dirEnt) {
	fd, err := b.r.open(e.path+"/glibc-hwcaps", unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	ents, _ := readDir(fd, b.buf)
	for _, de := range ents {
		if de.name[0] == '.' || de.typ == unix.DT_REG || strings.Contains(de.name, ":") {
			continue
		}
		sub := e.path + "/glibc-hwcaps/" + de.name
		st, err := b.stat(sub)
		if err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		b.seen = append(b.seen, de.name)
		b.addSingle(&dirEnt{path: sub, flag: e.flag, dev: st.Dev, ino: st.Ino, hwcaps: de.name, from: e.from, line: e.line, st: st})
	}
}

// Glob limits. glibc has none: an include pattern such as
// /a/*/*/*/*/*/* over a directory holding 40 symlinks to itself names 40^6
// paths, which glob(3) lists one by one. A Build opens at most
// maxGlobDirs directories and collects at most maxGlobMatches paths over
// all its include patterns; past either limit the patterns expand to the
// matches found so far. Within one wildcard component of one pattern a
// directory (by device and inode) is listed once: the other paths that
// reach it would only name the same files again, and a configuration
// file read twice adds no directory. A root's usual patterns
// (/etc/ld.so.conf.d/*.conf) list one directory.
const (
	maxGlobDirs    = 4096
	maxGlobMatches = 4096
)

// glob expands an include pattern inside the root, sorted as glob(3)
// sorts in the C locale. Names starting with '.' match only a pattern
// that starts with '.'.
func (b *builder) glob(pattern string) []string {
	cur := []string{""}
	if strings.HasPrefix(pattern, "/") {
		cur = []string{"/"}
	}
	for _, comp := range strings.Split(pattern, "/") {
		if comp == "" {
			continue
		}
		if !strings.ContainsAny(comp, "*?[") {
			for i := range cur {
				cur[i] = joinPath(cur[i], unescape(comp))
			}
			continue
		}
		cur = b.globDir(cur, strings.ReplaceAll(comp, "[!", "[^"))
	}
	out := cur[:0]
	for _, p := range cur {
		if _, err := b.lstat(p); err == nil && p != "" {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// globDir lists each of dirs once (by device and inode) within the
// Build's limits and returns the names in them that match comp.
func (b *builder) globDir(dirs []string, comp string) []string {
	var out []string
	listed := map[[2]uint64]bool{}
	for _, d := range dirs {
		ents, ok := b.globList(d, listed)
		if !ok {
			continue
		}
		for _, de := range ents {
			if ok, _ := path.Match(comp, de.name); ok && (de.name[0] != '.' || comp[0] == '.') {
				if b.globMatches >= maxGlobMatches {
					return out
				}
				b.globMatches++
				out = append(out, joinPath(d, de.name))
			}
		}
	}
	return out
}

// globList reads the directory d unless it was listed already for this
// component, or the Build has opened maxGlobDirs directories for globs.
func (b *builder) globList(d string, listed map[[2]uint64]bool) ([]dirent, bool) {
	if b.globDirs >= maxGlobDirs {
		return nil, false
	}
	b.globDirs++
	dir := d
	if dir == "" {
		dir = "."
	}
	fd, err := b.r.open(dir, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return nil, false
	}
	if b.prior != nil && !b.prior.older(&st) {
		b.prior = nil
	}
	key := [2]uint64{st.Dev, st.Ino}
	if listed[key] {
		return nil, false
	}
	listed[key] = true
	ents, _ := readDir(fd, b.buf)
	return ents, true
}

func joinPath(dir, name string) string {
	switch dir {
	case "":
		return name
	case "/":
		return "/" + name
	}
	return dir + "/" + name
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// detectFamily: /etc/debian_version marks Debian; a musl loader marks
// musl; anything else is the lib64 default.
func detectFamily(r *root, t *target) Family {
	if _, err := r.lstat("/etc/debian_version"); err == nil {
		return FamilyDebian
	}
	if t.muslArch != "" {
		if _, err := r.lstat("/lib/ld-musl-" + t.muslArch + ".so.1"); err == nil {
			return FamilyMusl
		}
	}
	return FamilyLib64
}
