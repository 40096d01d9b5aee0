package devices

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// minorTable is /proc/driver/nvidia-caps/mig-minors: every MIG capability
// the driver could create ("config", "monitor", "gpuN/giG/access",
// "gpuN/giG/ciC/access") and the nvidia-caps minor of its node. The file
// has some 4300 lines, so entries are keyed by numbers, not names.
type minorTable struct {
	// entries are the "gpu…" lines sorted by key (the driver writes them
	// in that order); a slice, not a map: a quarter of the memory for the
	// file's some 4300 lines, which configure reads at every start.
	entries []migEntry
	global  map[string]uint32 // config, monitor, and what later drivers add
}

type migEntry struct {
	key   capKey
	minor uint32
}

// capKey identifies a GPU instance's access capability (ci < 0) or a
// compute instance's.
type capKey struct{ gpu, gi, ci int32 }

func (k capKey) compare(o capKey) int {
	return cmp.Or(cmp.Compare(k.gpu, o.gpu), cmp.Compare(k.gi, o.gi), cmp.Compare(k.ci, o.ci))
}

// parseMIGMinors reads mig-minors ("name minor" lines).
func parseMIGMinors(data []byte) (*minorTable, error) {
	return readMIGMinors(bytes.NewReader(data))
}

// readMIGMinors reads mig-minors line by line, without holding the file.
func readMIGMinors(r io.Reader) (*minorTable, error) {
	t := &minorTable{global: map[string]uint32{}}
	sc := bufio.NewScanner(r)
	sorted := true
	for n := 1; sc.Scan(); n++ {
		if err := t.add(strings.TrimSpace(string(sc.Bytes()))); err != nil {
			return nil, fmt.Errorf("%w: mig-minors line %d %q", ErrInvalid, n, sc.Bytes())
		}
		if k := len(t.entries); k > 1 && t.entries[k-2].key.compare(t.entries[k-1].key) > 0 {
			sorted = false
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: mig-minors: %w", ErrInvalid, err)
	}
	if !sorted {
		slices.SortStableFunc(t.entries, func(a, b migEntry) int { return a.key.compare(b.key) })
	}
	return t, nil
}

func (t *minorTable) add(line string) error {
	if line == "" {
		return nil
	}
	name, num, ok := strings.Cut(line, " ")
	m, okNum := digits(strings.TrimSpace(num), math.MaxUint32)
	if !ok || !okNum {
		return ErrInvalid
	}
	if !strings.HasPrefix(name, "gpu") {
		t.global[strings.Clone(name)] = uint32(m)
		return nil
	}
	k, ok := capKeyOf(name)
	if !ok {
		return ErrInvalid
	}
	t.entries = append(t.entries, migEntry{k, uint32(m)})
	return nil
}

// lookup returns the minor of the capability named as in mig-minors (of
// a name listed twice, the later line's, as a map would keep).
func (t *minorTable) lookup(name string) (uint32, bool) {
	if t == nil {
		return 0, false
	}
	if !strings.HasPrefix(name, "gpu") {
		m, ok := t.global[name]
		return m, ok
	}
	k, ok := capKeyOf(name)
	if !ok {
		return 0, false
	}
	i, found := slices.BinarySearchFunc(t.entries, k, func(e migEntry, k capKey) int { return e.key.compare(k) })
	if !found {
		return 0, false
	}
	for i+1 < len(t.entries) && t.entries[i+1].key == k {
		i++
	}
	return t.entries[i].minor, true
}

// gpuMinors returns the minors of the entries "gpu<gpu>/…", sorted.
func (t *minorTable) gpuMinors(gpu uint32) []uint32 {
	if t == nil || gpu > math.MaxInt32 {
		return nil
	}
	g := int32(gpu)
	i, _ := slices.BinarySearchFunc(t.entries, g, func(e migEntry, g int32) int { return cmp.Compare(e.key.gpu, g) })
	var out []uint32
	for ; i < len(t.entries) && t.entries[i].key.gpu == g; i++ {
		out = append(out, t.entries[i].minor)
	}
	slices.Sort(out)
	return out
}

// capKeyOf parses "gpuN/giG/access" and "gpuN/giG/ciC/access" (numbers
// up to 65535). It runs for each of mig-minors' some 4300 lines at every
// discovery, so it reads the digits itself rather than cutting strings.
func capKeyOf(name string) (capKey, bool) {
	rest, ok := strings.CutPrefix(name, "gpu")
	if !ok {
		return capKey{}, false
	}
	k := capKey{ci: -1}
	var okGPU, okGI, okCI bool
	k.gpu, rest, okGPU = numberThen(rest, "/gi")
	k.gi, rest, okGI = numberThen(rest, "/")
	if ci, ok := strings.CutPrefix(rest, "ci"); ok {
		k.ci, rest, okCI = numberThen(ci, "/")
	} else {
		okCI = true
	}
	return k, okGPU && okGI && okCI && rest == "access"
}

// numberThen reads a decimal up to 65535 at the start of s, which sep must
// follow, and returns what follows sep.
func numberThen(s, sep string) (int32, string, bool) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	n, ok := digits(s[:i], math.MaxUint16)
	rest, okSep := strings.CutPrefix(s[i:], sep)
	return int32(n), rest, ok && okSep
}

// digits is s, a non-empty string of decimal digits only, if its value
// is at most max.
func digits(s string, max uint64) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d := uint64(s[i] - '0')
		if s[i] < '0' || s[i] > '9' || n > (max-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
