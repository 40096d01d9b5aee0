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

// finalize assigns offsets and returns the table's bytes. Sorting the
// reversed strings in descending byte order is glibc's finalize_compare
// order (a string before any string it ends: its reversal is a prefix,
// which sorts after the longer one), with the runtime's string compare
// instead of a byte loop.
func (t *strtab) finalize() []byte {
	n := len(t.list)
	if n == 0 {
		return nil
	}
	total := 0
	for _, s := range t.list {
		total += len(s)
	}
	buf := make([]byte, 0, total)
	for _, s := range t.list {
		for i := len(s) - 1; i >= 0; i-- {
			buf = append(buf, s[i])
		}
	}
	all := string(buf)
	type item struct{ rev, s string }
	items := make([]item, n)
	pos := 0
	for i, s := range t.list {
		items[i] = item{all[pos : pos+len(s)], s}
		pos += len(s)
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(b.rev, a.rev) })
	off := uint32(0)
	t.off[items[0].s] = 0
	for i := 1; i < n; i++ {
		prev, cur := &items[i-1], &items[i]
		if strings.HasPrefix(prev.rev, cur.rev) {
			off += uint32(len(prev.s) - len(cur.s))
		} else {
			off += uint32(len(prev.s)) + 1
		}
		t.off[cur.s] = off
	}
	out := make([]byte, off+uint32(len(items[n-1].s))+1)
	for i := range items {
		t.list[i] = items[i].s
		copy(out[t.off[items[i].s]:], items[i].s)
	}
	return out
}
