package driver

import (
	"debug/elf"
	"errors"
	"io"
	"path"
	"strings"
	"sync"

	"github.com/go-nvc/nvc/ldcache"
)

// cacheIndex maps each list name to the paths of the cache entries whose key
// it is a prefix of, in file order.
type cacheIndex map[string][]string

// newCacheIndex indexes c's ELF entries of arch. No list name holds ".so"
// but at its end, so the name a key starts with is the key up to its first
// ".so", and one map lookup replaces libnvidia-container's prefix scan.
func newCacheIndex(c *ldcache.Cache, arch ldcache.Arch) cacheIndex {
	names := make(map[string]bool)
	for _, n := range allLibraryNames() {
		names[n] = true
	}
	idx := make(cacheIndex)
	for i := range c.Entries {
		e := &c.Entries[i]
		if !e.IsELF() || e.Arch() != arch {
			continue
		}
		if n, ok := listName(e.Name); ok && names[n] {
			idx[n] = append(idx[n], e.Path)
		}
	}
	return idx
}

// listName returns key up to and including its first ".so".
func listName(key string) (string, bool) {
	i := strings.Index(key, ".so")
	if i < 0 {
		return "", false
	}
	return key[:i+3], true
}

// selector decides between cache candidates for one list name.
type selector struct {
	r       *rootDir
	memo    *sync.Map // elfKey → elfInfo or notELF, the Driver's
	version string    // "550.54.15"
	class   elf.Class // the architecture's ELF class
	wsl     bool
	// ownVersion selects by checkOwnVersion, not by the driver's rules.
	ownVersion bool
	// ownPattern is what follows the name in an ownVersion file name.
	// Empty: ".*.*".
	ownPattern string
	// d, when set, keeps the loader cache's reading of each library
	// read (Driver.LDCacheLibrary)
	d *Driver
}

// chosen is the library selected for a name.
type chosen struct {
	res    resolved
	soname string
}

// selectLibrary walks name's candidates in cache order and keeps the last
// one that passes libnvidia-container's rules; ok is false if none does.
func (s *selector) selectLibrary(name string, candidates []string) (chosen, bool) {
	var cur chosen
	found := false
	for _, p := range candidates {
		res, err := s.r.resolve(p)
		if err != nil || (found && res.path == cur.res.path) {
			continue
		}
		if c, ok := s.accept(name, res, found, cur); ok {
			cur, found = c, true
		}
	}
	return cur, found
}

func (s *selector) accept(name string, res resolved, found bool, cur chosen) (chosen, bool) {
	if s.ownVersion {
		return s.checkOwnVersion(name, res)
	}
	if s.wsl {
		// WSL: no ELF or version checks; a library from the WSL
		// driver store (/usr/lib/wsl/lib) is never replaced.
		if found && strings.Contains(cur.res.path, "/wsl/lib/") {
			return chosen{}, false
		}
		info, _ := s.readELF(res)
		return chosen{res: res, soname: info.soname}, true
	}
	return s.check(res)
}

// check applies the rules of libnvidia-container's select_libraries to a
// resolved candidate: the file name ends with ".<version>"; it is a
// shared object of the architecture's class; libnvidia-tls carries the
// 2.3.99 ("new TLS") ABI note; a non-GLVND GL library needs
// libnvidia-glcore or libnvidia-eglcore (Mesa's does not).
func (s *selector) check(res resolved) (chosen, bool) {
	base := path.Base(res.path)
	if !strings.HasSuffix(base, "."+s.version) {
		return chosen{}, false
	}
	tls := strings.HasPrefix(base, "libnvidia-tls.so")
	info, ok := s.readELF(res)
	if !ok || info.class != s.class {
		return chosen{}, false
	}
	if tls && info.abi != [3]uint32{2, 3, 99} {
		return chosen{}, false
	}
	if isCompatGL(base) && !info.needs("libnvidia-glcore.so") && !info.needs("libnvidia-eglcore.so") {
		return chosen{}, false
	}
	return chosen{res: res, soname: info.soname}, true
}

// checkOwnVersion accepts a library versioned apart from the driver, as
// the toolkit finds the EGL platform libraries ("<name>.*.*"): the file
// name is name followed by at least two version components
// (libnvidia-egl-gbm.so.1.1.2), and it is a shared object of the
// architecture's class.
func (s *selector) checkOwnVersion(name string, res resolved) (chosen, bool) {
	pattern := s.ownPattern
	if pattern == "" {
		pattern = ".*.*"
	}
	if ok, _ := path.Match(name+pattern, path.Base(res.path)); !ok {
		return chosen{}, false
	}
	info, ok := s.readELF(res)
	if !ok || info.class != s.class {
		return chosen{}, false
	}
	return chosen{res: res, soname: info.soname}, true
}

// readELF reads res's ELF facts, or takes them from the driver's memo
// when the file is the one read before: same device, inode, size, mtime
// and ctime (a write or a replacement changes one of them).
func (s *selector) readELF(res resolved) (elfInfo, bool) {
	key := elfKey{res.dev, res.ino, res.size, res.mtime, res.ctime}
	if v, ok := s.memo.Load(key); ok {
		info, ok := v.(elfInfo)
		s.keepLD(res, info)
		return info, ok
	}
	f, err := s.r.openFile(res)
	if err != nil {
		return elfInfo{}, false
	}
	defer f.Close()
	info, head, err := readELFHead(f, res.size)
	if err != nil {
		if errors.Is(err, errELF) {
			s.memo.Store(key, notELF{})
		}
		return elfInfo{}, false
	}
	if s.d != nil {
		// The loader cache's own reading of the file, while it is
		// open and its head read, tied to its identity as resolved
		// before it was opened: Apply hands it to ldcache.Build for
		// the mounted copy.
		id := ldcache.FileID{Dev: res.dev, Ino: res.ino, Size: res.size, Mtime: res.mtime, Ctime: res.ctime}
		if l, err := ldcache.ReadLibrary(headReader{head, f, res.size}, id, s.d.opts.GOARCH); err == nil {
			info.ld = &l
		}
	}
	s.memo.Store(key, info)
	s.keepLD(res, info)
	return info, true
}

// keepLD records info's loader cache reading under res's path.
func (s *selector) keepLD(res resolved, info elfInfo) {
	if s.d != nil && info.ld != nil {
		s.d.ldLibs.Store(res.path, info.ld)
	}
}

// notELF is the memo's value for a file whose bytes are no shared object.
type notELF struct{}

// elfKey identifies a file's content as stat sees it.
type elfKey struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

func isCompatGL(base string) bool {
	for _, n := range compatGLLibs {
		if strings.HasPrefix(base, n) {
			return true
		}
	}
	return false
}

// headReader serves reads of a file from its first bytes, already read,
// and the rest from r.
type headReader struct {
	head []byte
	r    io.ReaderAt
	size int64
}

// ReadAt is io.ReaderAt's, short reads at the end of the file with io.EOF.
func (h headReader) ReadAt(b []byte, off int64) (int, error) {
	whole := int64(len(h.head)) == h.size
	if off >= 0 && (off+int64(len(b)) <= int64(len(h.head)) || (whole && off <= h.size)) {
		n := copy(b, h.head[off:])
		if n < len(b) {
			return n, io.EOF
		}
		return n, nil
	}
	return h.r.ReadAt(b, off)
}
