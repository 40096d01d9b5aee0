package ldcache

import (
	"golang.org/x/sys/unix"
)

// dirFacts is what other directories' symlinks need to know of a
// recorded directory holding added names (see intoInjected).
type dirFacts struct {
	types   map[string]uint8    // d_type by name
	kinds   map[string]candKind // the candidates as resolved locally
	touched map[string]bool     // the names leading to an added name
}

// reuseDir adds d's entries and reports true when d can be taken from
// the prior cache: unchanged since it was written, or changed only by
// the caller's added names (d recorded by BuildOptions.Before); the
// candidates leading to added names or to files changed since are read
// as a scan reads them. False: d is to be scanned.
func (b *builder) reuseDir(d *dirEnt) bool {
	p := b.prior
	if p == nil || d.links {
		return false
	}
	key := dirKey{d.dev, d.ino}
	recorded, added := p.recorded[key], p.added[key]
	if !recorded && (d.from == "<cmdline>" || added != nil || !p.older(&d.st)) {
		return false
	}
	if ok, touched := b.pathOlder(d.path); !ok || touched {
		return false
	}
	fd, err := b.r.open(d.path, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var stx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, statxMask, &stx) != nil || statxDev(&stx) != d.dev || stx.Ino != d.ino || (!recorded && !p.olderX(&stx)) {
		return false
	}
	ents, _ := readDir(fd, b.buf)
	s := newDirScan(b, d, fd, ents)
	s.mnt, s.listOnly = mountOf(&stx), true
	cands := s.candidates()
	touched := s.touching(added)
	if recorded {
		b.keepFacts(key, s, cands, touched)
	}
	kinds := make(map[string]candKind, len(cands))
	var fresh []*cand
	for _, c := range cands {
		kind := c.kind
		if !touched[c.name] && kind == kindSlowLink {
			var st linkState
			if kind, st = b.slowLinkOlder(s, c.name); st == linkChanged {
				return false
			} else if st == linkAdded {
				touched[c.name] = true
			}
		}
		if kind == kindDir {
			return false
		}
		if touched[c.name] {
			fresh = append(fresh, c)
			continue
		}
		kinds[c.name] = kind
	}
	changed, files, ok := s.filesOlder(cands, kinds)
	spelled, entries := b.priorDir(d)
	if !ok || (len(entries) == 0 && files > 0) {
		return false
	}
	if len(changed) > 0 {
		fresh = rereadChanged(cands, kinds, changed, touched)
	}
	list, dropped, ok := b.priorEntries(d, spelled, entries, kinds, touched)
	if !ok {
		return false
	}
	libs, ok := s.readFresh(fresh, list, dropped)
	if !ok {
		return false
	}
	b.list = b.list[:len(b.list)+len(list)] // priorEntries wrote them there
	var hwcap uint64
	if d.hwcaps == "" {
		hwcap = b.t.pathHWCap(d.path)
	}
	for i := len(libs) - 1; i >= 0; i-- {
		b.addLib(s, d, libs[i], hwcap)
	}
	if reusedHook != nil {
		reusedHook(d.path)
	}
	return true
}

// rereadChanged moves the old candidates that lead to a changed file
// (rewritten since the cache, or mounted over) out of kinds into touched
// and returns every candidate to read, in directory order.
func rereadChanged(cands []*cand, kinds map[string]candKind, changed, touched map[string]bool) []*cand {
	var fresh []*cand
	for _, c := range cands {
		if k, old := kinds[c.name]; old && ((k == kindFile && changed[c.name]) || (k == kindLocalLink && changed[c.target])) {
			delete(kinds, c.name)
			touched[c.name] = true
		}
		if _, old := kinds[c.name]; !old {
			fresh = append(fresh, c)
		}
	}
	return fresh
}

// touching returns the names among the candidates that are added or
// whose symlinks, followed within the directory, meet an added name.
func (s *dirScan) touching(added map[string]bool) map[string]bool {
	out := map[string]bool{}
	if len(added) == 0 {
		return out
	}
	for i, de := range s.ents {
		if !s.want[i] {
			continue
		}
		if de.typ != unix.DT_LNK {
			if added[de.name] {
				out[de.name] = true
			}
			continue
		}
		cur := de.name
		for range maxHops {
			if added[cur] {
				out[de.name] = true
				break
			}
			if s.types[cur] != unix.DT_LNK {
				break
			}
			t := s.readlink(cur)
			if t == "" || t == "." || t == ".." || containsSlash(t) {
				break
			}
			cur = t
		}
	}
	return out
}

func containsSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}

// keepFacts records the listing of a recorded directory with added
// names for the symlinks of other directories that lead into it.
func (b *builder) keepFacts(key dirKey, s *dirScan, cands []*cand, touched map[string]bool) {
	f := &dirFacts{types: s.types, kinds: make(map[string]candKind, len(cands)), touched: touched}
	for _, c := range cands {
		f.kinds[c.name] = c.kind
	}
	if b.prior.facts == nil {
		b.prior.facts = map[dirKey]*dirFacts{}
	}
	b.prior.facts[key] = f
}

// filesOlder returns, of the regular files the old candidates (kinds)
// lead to, those changed since the cache was written (not older, or on
// another mount than the directory: a file mounted over one of the
// image's), and how many there are; false where one is no longer a
// regular file or cannot be looked at.
func (s *dirScan) filesOlder(cands []*cand, kinds map[string]candKind) (map[string]bool, int, bool) {
	var files []string
	seen := make(map[string]bool, len(cands))
	for _, c := range cands {
		k, ok := kinds[c.name]
		f := ""
		switch {
		case ok && k == kindFile:
			f = c.name
		case ok && k == kindLocalLink:
			f = c.target
		}
		if f != "" && !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	const (
		fileOlder = iota
		fileChanged
		fileBad
	)
	state := make([]uint8, len(files))
	parallelCheap(len(files), func(i int, _ []byte) {
		var stx unix.Statx_t
		switch {
		case unix.Statx(s.fd, files[i], unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_DONT_SYNC, statxMask, &stx) != nil ||
			stx.Mode&unix.S_IFMT != unix.S_IFREG:
			state[i] = fileBad
		case !s.b.prior.olderX(&stx) || mountOf(&stx) != s.mnt:
			state[i] = fileChanged
		}
	}, &s.b.scratch)
	var changed map[string]bool
	for i, v := range state {
		switch v {
		case fileBad:
			return nil, len(files), false
		case fileChanged:
			if changed == nil {
				changed = map[string]bool{}
			}
			changed[files[i]] = true
		}
	}
	return changed, len(files), true
}

// readFresh reads the candidates that lead to added or changed names as
// a scan does, in directory order, and returns their libraries; false
// when one shares a SONAME with the kept entries of the directory (the
// merge would need the files those entries came from), or when an
// entry dropped for leading to such a name is not read again with its
// type.
func (s *dirScan) readFresh(fresh []*cand, kept []scanned, dropped []Entry) ([]*dlib, bool) {
	if len(fresh) == 0 {
		return nil, len(dropped) == 0
	}
	s.files, s.ordered, s.slow, s.listOnly = map[string]*fileResult{}, nil, nil, false
	for _, c := range fresh {
		switch c.kind {
		case kindFile:
			s.need(c.name)
		case kindLocalLink:
			s.need(c.target)
		case kindSlowLink:
			c.slow = &slowLink{}
			s.slow = append(s.slow, c)
		}
	}
	s.classifyAll()
	var libs []*dlib
	bySoname := map[string]*dlib{}
	for _, c := range fresh {
		if l := s.decide(c); l != nil {
			libs = mergeLib(libs, bySoname, l, s.b.t.signed)
		}
	}
	for i := range kept {
		if bySoname[kept[i].Name] != nil {
			return nil, false
		}
	}
	for _, e := range dropped {
		if l := bySoname[e.Name]; l == nil || l.flag != e.Flags {
			return nil, false
		}
	}
	return libs, true
}

// priorDir returns d's entries in the prior cache and the path they name
// d by: d's own path, or the one other path that leads to d (as
// /lib/x86_64-linux-gnu does to /usr/lib/x86_64-linux-gnu on a merged
// /usr, when the cache was written without d on the command line), if it
// led there when the cache was written.
func (b *builder) priorDir(d *dirEnt) (string, []Entry) {
	p := b.prior
	if e, ok := p.byDir[d.path]; ok {
		return d.path, e
	}
	if p.dirsByKey == nil {
		p.dirsByKey = map[dirKey][]string{}
		for dir := range p.byDir {
			if st, err := b.stat(dir); err == nil {
				k := dirKey{st.Dev, st.Ino}
				p.dirsByKey[k] = append(p.dirsByKey[k], dir)
			}
		}
	}
	alias := p.dirsByKey[dirKey{d.dev, d.ino}]
	if len(alias) != 1 {
		return d.path, nil
	}
	if ok, touched := b.pathOlder(alias[0]); !ok || touched {
		return d.path, nil
	}
	return alias[0], p.byDir[alias[0]]
}
