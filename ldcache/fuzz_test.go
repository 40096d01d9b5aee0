package ldcache_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		require.NotEqual(t, c == nil, err == nil, "Parse returned cache %v and error %v: want exactly one", c != nil, err)
		if err != nil {
			require.True(t, errors.Is(err, ldcache.ErrNotCache) || errors.Is(err, ldcache.ErrCorrupt), "error %v matches neither sentinel", err)
			return
		}
		require.NoError(t, c.Print(io.Discard, "x"), "Print")
		roundTrip(t, c)
	})
}

// roundTrip checks that what Parse read, written again, reads the same.
func roundTrip(t *testing.T, c *ldcache.Cache) {
	t.Helper()
	out, err := c.MarshalBinary()
	require.NoError(t, err, "MarshalBinary")
	c2, err := ldcache.Parse(out)
	require.NoError(t, err, "re-parsing our own encoding")
	require.Len(t, c2.Entries, len(c.Entries), "round trip: entries")
	require.Equal(t, c.Format, c2.Format, "round trip: format")
	// glibc's compat layout records glibc-hwcaps names at offsets its own
	// reader resolves from another base, so names need not survive there.
	compat := c.Format == ldcache.FormatCompat
	for i, e := range c.Entries {
		g := c2.Entries[i]
		require.Equal(t, e.Name, g.Name, "round trip entry %d: %+v, want %+v", i, g, e)
		require.Equal(t, e.Path, g.Path, "round trip entry %d: %+v, want %+v", i, g, e)
		require.Equal(t, e.Flags, g.Flags, "round trip entry %d: %+v, want %+v", i, g, e)
		if !compat {
			require.Equal(t, e.HWCaps, g.HWCaps, "round trip entry %d: %+v, want %+v", i, g, e)
		}
		require.Equal(t, e.HWCapsExtension(), g.HWCapsExtension(), "round trip entry %d: %+v, want %+v", i, g, e)
	}
}

func TestRoundTripFormats(t *testing.T) {
	for _, fm := range []ldcache.Format{ldcache.FormatNew, ldcache.FormatCompat, ldcache.FormatOld} {
		t.Run(fm.String(), func(t *testing.T) {
			c, err := ldcache.Parse(mustMarshal(sampleCache(fm)))
			require.NoError(t, err, "%v", fm)
			assert.Equal(t, fm, c.Format, "read back as")
			want := 5
			if fm == ldcache.FormatOld {
				want = 4 // the legacy-hwcap entry stays out of the old table
			}
			require.Len(t, c.Entries, want, "%v: entries", fm)
			if fm == ldcache.FormatNew {
				assert.Equal(t, "x86-64-v3", c.Entries[0].HWCaps, "hwcaps name")
			}
			if fm != ldcache.FormatOld {
				assert.True(t, c.Entries[0].HWCapsExtension(), "%v: hwcaps %q", fm, c.Entries[0].HWCaps)
				assert.Equal(t, "test generator", c.Generator, "%v: generator", fm)
			}
			roundTrip(t, c)
		})
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
		t.Run(name, func(t *testing.T) {
			got, err := testutil.MinAlloc(func() error { _, err := ldcache.Parse(in); return err })
			assert.LessOrEqual(t, got, uint64(8*len(in)+16<<10), "%s: Parse of %d bytes allocated too much, err %v", name, len(in), err)
		})
	}
}
