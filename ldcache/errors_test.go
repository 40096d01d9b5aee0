package ldcache_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/ldcache"
)

// corruptCase is a valid new-format cache with one change.
func corruptCase(change func(b []byte) []byte) []byte {
	return change(mustMarshal(sampleCache(ldcache.FormatNew)))
}

func put32(b []byte, off int, v uint32) []byte {
	binary.LittleEndian.PutUint32(b[off:], v)
	return b
}

func TestParseErrors(t *testing.T) {
	valid := mustMarshal(sampleCache(ldcache.FormatNew))
	extOff := int(binary.LittleEndian.Uint32(valid[32:]))
	for _, tc := range []struct {
		name     string
		data     []byte
		sentinel error
		offset   int64
		msg      string
	}{
		{"empty", nil, ldcache.ErrEmpty, 0, "empty file"},
		{"unknown magic", []byte("ELF\x00garbage"), ldcache.ErrNotCache, 0, `unknown magic "ELF\x00garbage"`},
		{"truncated header", []byte("glibc-ld.so.cache1.1\x01\x00"), ldcache.ErrCorrupt, 0, "header truncated"},
		{"count beyond file", corruptCase(func(b []byte) []byte { return put32(b, 20, 1000) }), ldcache.ErrCorrupt, 20, "count 1000 needs 24000 bytes"},
		{"key past end", corruptCase(func(b []byte) []byte { return put32(b, 48+4, 0x1f000) }), ldcache.ErrCorrupt, 52, "entry 0 key: string offset 0x1f000 past end of file"},
		{"value past end", corruptCase(func(b []byte) []byte { return put32(b, 48+24+8, 0xffffffff) }), ldcache.ErrCorrupt, 80, "entry 1 value: string offset 0xffffffff"},
		{"unterminated", corruptCase(func(b []byte) []byte { return put32(put32(b, 32, 0), 48+4, uint32(len(b)-1)) }), ldcache.ErrCorrupt, 52, "not NUL-terminated"},
		{"endianness invalid", corruptCase(func(b []byte) []byte { b[28] = 1; return b }), ldcache.ErrCorrupt, 28, "mark the cache invalid"},
		{"extension misaligned", corruptCase(func(b []byte) []byte { return put32(b, 32, uint32(extOff+2)) }), ldcache.ErrCorrupt, 32, "not a multiple of 4"},
		{"extension magic", corruptCase(func(b []byte) []byte { return put32(b, extOff, 0x12345678) }), ldcache.ErrCorrupt, int64(extOff), "extension magic 0x12345678"},
		{"extension count", corruptCase(func(b []byte) []byte { return put32(b, extOff+4, 1<<30) }), ldcache.ErrCorrupt, int64(extOff + 4), "extension sections do not fit"},
		{"section past end", corruptCase(func(b []byte) []byte { return put32(b, extOff+8+12, 1<<20) }), ldcache.ErrCorrupt, int64(extOff + 8 + 8), "extension section 0"},
		{"old count beyond", []byte("ld.so-1.7.0\x00\x10\x00\x00\x00" + strings.Repeat("\x00", 24)), ldcache.ErrCorrupt, 12, "old-format count 16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ldcache.Parse(tc.data)
			require.Error(t, err, "Parse = %v; want an error", c)
			require.Nil(t, c, "Parse with error %v", err)
			var pe *ldcache.ParseError
			require.ErrorAs(t, err, &pe, "error %v (%T)", err, err)
			require.ErrorIs(t, err, tc.sentinel, "error %v (%T)", err, err)
			assert.Equal(t, tc.offset, pe.Offset, "error %q: offset", err)
			assert.ErrorContains(t, err, tc.msg)
		})
	}
}

func TestEmptyMatchesNotCache(t *testing.T) {
	_, err := ldcache.Parse(nil)
	assert.ErrorIs(t, err, ldcache.ErrNotCache, "empty input")
}

func TestBigEndianCache(t *testing.T) {
	c := sampleCache(ldcache.FormatCompat)
	c.Order = binary.BigEndian
	b := mustMarshal(c)
	require.Zero(t, b[0x10], "old count not big-endian: % x", b[:20])
	require.NotZero(t, b[0x13], "old count not big-endian: % x", b[:20])
	got, err := ldcache.Parse(b)
	require.NoError(t, err, "Parse")
	assert.Equal(t, binary.BigEndian, got.Order, "big-endian cache read back")
	require.Len(t, got.Entries, len(c.Entries), "big-endian cache read back")
	assert.Equal(t, "libfoo.so", got.Entries[3].Name, "big-endian cache entry 3")
}

func TestFindByArch(t *testing.T) {
	c, err := ldcache.Parse(mustMarshal(sampleCache(ldcache.FormatNew)))
	require.NoError(t, err, "Parse")
	got := c.Find("libfoo.so.1", ldcache.ArchX8664)
	if assert.Len(t, got, 2, "x86-64 libfoo.so.1: want the hwcaps entry, then the plain one") {
		assert.True(t, got[0].HWCapsExtension(), "x86-64 libfoo.so.1: %+v; want the hwcaps entry first", got)
		assert.False(t, got[1].HWCapsExtension(), "x86-64 libfoo.so.1: %+v; want the plain entry second", got)
	}
	got = c.Find("libfoo.so.1", ldcache.ArchI386)
	if assert.Len(t, got, 1, "i386 libfoo.so.1") {
		assert.Equal(t, "/lib/i386-linux-gnu/libfoo.so.1", got[0].Path, "i386 libfoo.so.1")
	}
	assert.Empty(t, c.Find("libfoo.so", ldcache.ArchI386), "i386 libfoo.so: want none")
	var names []string
	for _, e := range c.FindPrefix(ldcache.ArchX8664, "libfoo.so", "libbar") {
		names = append(names, e.Name)
	}
	assert.Equal(t, []string{"libfoo.so.1", "libfoo.so.1", "libfoo.so", "libbar.so.2"}, names, "prefix matches in file order")
}

func TestArchNames(t *testing.T) {
	for goarch, want := range map[string]string{"amd64": "x86-64", "arm64": "aarch64", "ppc64le": "ppc64", "s390x": "s390x", "riscv64": "riscv64", "386": "i386"} {
		t.Run(goarch, func(t *testing.T) {
			a, ok := ldcache.ArchOf(goarch)
			assert.True(t, ok, "ArchOf(%s)", goarch)
			assert.Equal(t, want, a.String(), "ArchOf(%s)", goarch)
		})
	}
	a, ok := ldcache.Compat32Of("arm64")
	assert.True(t, ok, "Compat32Of(arm64)")
	assert.Equal(t, ldcache.ArchARMHF, a, "Compat32Of(arm64)")
	_, ok = ldcache.Compat32Of("ppc64le")
	assert.False(t, ok, "ppc64le has no 32-bit libraries")
	assert.Equal(t, "0x7700", ldcache.Arch(0x7700).String(), "unknown arch prints")
}
