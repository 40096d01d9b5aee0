package ldcache_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// sampleCache is a small cache with every feature: two architectures, a
// glibc-hwcaps entry, a legacy hwcap entry and a generator.
func sampleCache(f ldcache.Format) *ldcache.Cache {
	return &ldcache.Cache{
		Format:    f,
		Generator: "test generator",
		Entries: []ldcache.Entry{
			{Name: "libfoo.so.1", Path: "/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libfoo.so.1.2", Flags: 0x303, HWCaps: "x86-64-v3"},
			{Name: "libfoo.so.1", Path: "/lib/x86_64-linux-gnu/libfoo.so.1", Flags: 0x303},
			{Name: "libfoo.so.1", Path: "/lib/i386-linux-gnu/libfoo.so.1", Flags: 0x3},
			{Name: "libfoo.so", Path: "/lib/x86_64-linux-gnu/libfoo.so", Flags: 0x303},
			{Name: "libbar.so.2", Path: "/lib/x86_64-linux-gnu/tls/libbar.so.2", Flags: 0x303, HWCap: 1 << 63},
		},
	}
}

// mustMarshal encodes c, panicking on error.
func mustMarshal(c *ldcache.Cache) []byte {
	b, err := c.MarshalBinary()
	if err != nil {
		panic(err)
	}
	return b
}

func FuzzParse(f *testing.F) {
	for _, fm := range []ldcache.Format{ldcache.FormatNew, ldcache.FormatCompat, ldcache.FormatOld} {
		f.Add(mustMarshal(sampleCache(fm)))
	}
	if b, err := os.ReadFile("/etc/ld.so.cache"); err == nil && len(b) < 1<<20 {
		f.Add(b)
	}
	f.Add([]byte("glibc-ld.so.cache1.1"))
	f.Add([]byte("ld.so-1.7.0\x00\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ldcache.Parse(b)
		if (c == nil) == (err == nil) {
			t.Fatalf("Parse returned cache %v and error %v: want exactly one", c != nil, err)
		}
		if err != nil {
			if !errors.Is(err, ldcache.ErrNotCache) && !errors.Is(err, ldcache.ErrCorrupt) {
				t.Fatalf("error %v matches neither sentinel", err)
			}
			return
		}
		if err := c.Print(io.Discard, "x"); err != nil {
			t.Fatal(err)
		}
		roundTrip(t, c)
	})
}

// roundTrip checks that what Parse read, written again, reads the same.
func roundTrip(t *testing.T, c *ldcache.Cache) {
	t.Helper()
	out, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	c2, err := ldcache.Parse(out)
	if err != nil {
		t.Fatalf("re-parsing our own encoding: %v", err)
	}
	if len(c2.Entries) != len(c.Entries) || c2.Format != c.Format {
		t.Fatalf("round trip: %d entries (%v), want %d (%v)", len(c2.Entries), c2.Format, len(c.Entries), c.Format)
	}
	// glibc's compat layout records glibc-hwcaps names at offsets its own
	// reader resolves from another base, so names need not survive there.
	compat := c.Format == ldcache.FormatCompat
	for i, e := range c.Entries {
		g := c2.Entries[i]
		if g.Name != e.Name || g.Path != e.Path || g.Flags != e.Flags || (g.HWCaps != e.HWCaps && !compat) || g.HWCapsExtension() != e.HWCapsExtension() {
			t.Fatalf("round trip entry %d: %+v, want %+v", i, g, e)
		}
	}
}

func TestRoundTripFormats(t *testing.T) {
	for _, fm := range []ldcache.Format{ldcache.FormatNew, ldcache.FormatCompat, ldcache.FormatOld} {
		c, err := ldcache.Parse(mustMarshal(sampleCache(fm)))
		if err != nil {
			t.Fatalf("%v: %v", fm, err)
		}
		if c.Format != fm {
			t.Errorf("read back as %v, want %v", c.Format, fm)
		}
		want := 5
		if fm == ldcache.FormatOld {
			want = 4 // the legacy-hwcap entry stays out of the old table
		}
		if len(c.Entries) != want {
			t.Errorf("%v: %d entries, want %d", fm, len(c.Entries), want)
		}
		if fm == ldcache.FormatNew && c.Entries[0].HWCaps != "x86-64-v3" {
			t.Errorf("hwcaps name %q, want x86-64-v3", c.Entries[0].HWCaps)
		}
		if fm != ldcache.FormatOld && (!c.Entries[0].HWCapsExtension() || c.Generator != "test generator") {
			t.Errorf("%v: hwcaps %q, generator %q", fm, c.Entries[0].HWCaps, c.Generator)
		}
		roundTrip(t, c)
	}
}

// TestParseAllocationBounded: hostile files that claim many entries, or
// many entries naming one long string, cost memory in proportion to their
// size.
func TestParseAllocationBounded(t *testing.T) {
	long := bytes.Repeat([]byte("a"), 1<<20)
	n := 40000
	b := make([]byte, 48+24*n)
	copy(b, "glibc-ld.so.cache1.1")
	binary.LittleEndian.PutUint32(b[20:], uint32(n))
	for i := range n {
		binary.LittleEndian.PutUint32(b[48+24*i+4:], uint32(len(b))) // key: the long string
		binary.LittleEndian.PutUint32(b[48+24*i+8:], uint32(len(b))) // value: the same
	}
	b = append(append(b, long...), 0)
	for name, in := range map[string][]byte{
		"one string, many entries": b,
		"count beyond the file":    append([]byte("glibc-ld.so.cache1.1\xff\xff\xff\x7f"), make([]byte, 100)...),
		"old count beyond":         append([]byte("ld.so-1.7.0\x00\xff\xff\xff\x7f"), make([]byte, 100)...),
	} {
		got, err := testutil.MinAlloc(func() error { _, err := ldcache.Parse(in); return err })
		if limit := uint64(8*len(in) + 16<<10); got > limit {
			t.Errorf("%s: Parse of %d bytes allocated %d (limit %d), err %v", name, len(in), got, limit, err)
		}
	}
}
