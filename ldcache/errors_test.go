package ldcache_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

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
			if c != nil || err == nil {
				t.Fatalf("Parse = %v, %v; want an error", c, err)
			}
			var pe *ldcache.ParseError
			if !errors.As(err, &pe) || !errors.Is(err, tc.sentinel) {
				t.Fatalf("error %v (%T) does not match %v", err, err, tc.sentinel)
			}
			if pe.Offset != tc.offset || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q at offset %#x; want offset %#x and %q", err, pe.Offset, tc.offset, tc.msg)
			}
		})
	}
}

func TestEmptyMatchesNotCache(t *testing.T) {
	if _, err := ldcache.Parse(nil); !errors.Is(err, ldcache.ErrNotCache) {
		t.Errorf("empty input: %v does not match ErrNotCache", err)
	}
}

func TestBigEndianCache(t *testing.T) {
	c := sampleCache(ldcache.FormatCompat)
	c.Order = binary.BigEndian
	b := mustMarshal(c)
	if b[0x10] != 0 || b[0x13] == 0 {
		t.Fatalf("old count not big-endian: % x", b[:20])
	}
	got, err := ldcache.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Order != binary.BigEndian || len(got.Entries) != len(c.Entries) || got.Entries[3].Name != "libfoo.so" {
		t.Errorf("big-endian cache read back as %v with %d entries", got.Order, len(got.Entries))
	}
}

func TestFindByArch(t *testing.T) {
	c, err := ldcache.Parse(mustMarshal(sampleCache(ldcache.FormatNew)))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Find("libfoo.so.1", ldcache.ArchX8664); len(got) != 2 || !got[0].HWCapsExtension() || got[1].HWCapsExtension() {
		t.Errorf("x86-64 libfoo.so.1: %+v; want the hwcaps entry, then the plain one", got)
	}
	if got := c.Find("libfoo.so.1", ldcache.ArchI386); len(got) != 1 || got[0].Path != "/lib/i386-linux-gnu/libfoo.so.1" {
		t.Errorf("i386 libfoo.so.1: %+v", got)
	}
	if got := c.Find("libfoo.so", ldcache.ArchI386); len(got) != 0 {
		t.Errorf("i386 libfoo.so: %+v; want none", got)
	}
	var names []string
	for _, e := range c.FindPrefix(ldcache.ArchX8664, "libfoo.so", "libbar") {
		names = append(names, e.Name)
	}
	if strings.Join(names, " ") != "libfoo.so.1 libfoo.so.1 libfoo.so libbar.so.2" {
		t.Errorf("prefix matches in file order: %q", names)
	}
}

func TestArchNames(t *testing.T) {
	for goarch, want := range map[string]string{"amd64": "x86-64", "arm64": "aarch64", "ppc64le": "ppc64", "s390x": "s390x", "riscv64": "riscv64", "386": "i386"} {
		a, ok := ldcache.ArchOf(goarch)
		if !ok || a.String() != want {
			t.Errorf("ArchOf(%s) = %v %v, want %s", goarch, a, ok, want)
		}
	}
	if a, ok := ldcache.Compat32Of("arm64"); !ok || a != ldcache.ArchARMHF {
		t.Errorf("Compat32Of(arm64) = %v %v", a, ok)
	}
	if _, ok := ldcache.Compat32Of("ppc64le"); ok {
		t.Error("ppc64le has no 32-bit libraries")
	}
	if s := ldcache.Arch(0x7700).String(); s != "0x7700" {
		t.Errorf("unknown arch prints %q", s)
	}
}
