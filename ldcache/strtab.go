package ldcache

import (
	"slices"
	"strings"
)

// strtab is glibc's ldconfig string table (elf/stringtable.c): a set of
// strings laid out so that a string that ends another shares its bytes
// ("tail merging"). The layout only depends on the set, so building it the
// same way gives the same bytes as ldconfig.
type strtab struct {
	off  map[string]uint32
	list []string
}

func newStrtab(capacity int) *strtab {
	return &strtab{off: make(map[string]uint32, capacity)}
}

func (t *strtab) add(s string) {
	if _, ok := t.off[s]; !ok {
		t.off[s] = 0
		t.list = append(t.list, s)
	}
}

// tailCompare orders strings by their reversed bytes, descending, with a
// string before any string it ends (glibc's finalize_compare).
func tailCompare(l, r string) int {
	n := min(len(l), len(r))
	for i := 1; i <= n; i++ {
		lc, rc := l[len(l)-i], r[len(r)-i]
		if lc != rc {
			return int(rc) - int(lc)
		}
	}
	return len(r) - len(l)
}

// finalize assigns offsets and returns the table's bytes.
func (t *strtab) finalize() []byte {
	if len(t.list) == 0 {
		return nil
	}
	slices.SortFunc(t.list, tailCompare)
	prev := t.list[0]
	t.off[prev] = 0
	for _, s := range t.list[1:] {
		if strings.HasSuffix(prev, s) {
			t.off[s] = t.off[prev] + uint32(len(prev)-len(s))
		} else {
			t.off[s] = t.off[prev] + uint32(len(prev)) + 1
		}
		prev = s
	}
	out := make([]byte, t.off[prev]+uint32(len(prev))+1)
	for _, s := range t.list {
		copy(out[t.off[s]:], s)
	}
	return out
}
