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
	idx  map[string]int32 // index in list
	list []string         // in the order added
	offs []uint32         // by index, once finalized
}

func newStrtab(capacity int) *strtab {
	return &strtab{idx: make(map[string]int32, capacity), list: make([]string, 0, capacity)}
}

// add puts s in the table and returns its index.
func (t *strtab) add(s string) int32 {
	i, ok := t.idx[s]
	if !ok {
		i = int32(len(t.list))
		t.idx[s] = i
		t.list = append(t.list, s)
	}
	return i
}

// offset is the offset of the string of index i, once finalized.
func (t *strtab) offset(i int32) uint32 { return t.offs[i] }

// off is the offset of s, once finalized (s must have been added).
func (t *strtab) off(s string) uint32 { return t.offs[t.idx[s]] }

// finalize assigns offsets and returns the table's bytes. The strings
// are laid out in glibc's finalize_compare order: by their reversed
// bytes, descending, a string before any string it ends (its reversal is
// a prefix of the other's, which sorts after it). The reversals are
// sorted as indices, with the runtime's string compare.
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
	revs := make([]string, n)
	order := make([]int32, n)
	pos := 0
	for i, s := range t.list {
		revs[i] = all[pos : pos+len(s)]
		order[i] = int32(i)
		pos += len(s)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(revs[b], revs[a]) })
	t.offs = make([]uint32, n)
	off := uint32(0)
	for k := 1; k < n; k++ {
		prev, cur := order[k-1], order[k]
		if strings.HasPrefix(revs[prev], revs[cur]) {
			off += uint32(len(revs[prev]) - len(revs[cur]))
		} else {
			off += uint32(len(revs[prev])) + 1
		}
		t.offs[cur] = off
	}
	out := make([]byte, off+uint32(len(revs[order[n-1]]))+1)
	for i, s := range t.list {
		copy(out[t.offs[i]:], s)
	}
	return out
}
