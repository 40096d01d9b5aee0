package ldcache

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLibcmp(t *testing.T) {
	for _, tc := range []struct {
		a, b   string
		signed bool
		sign   int
	}{
		{"libfoo.so.10", "libfoo.so.9", true, 1},
		{"libfoo.so.1.2", "libfoo.so.1.10", true, -1},
		{"libfoo.so.01", "libfoo.so.1", true, 0},
		{"libfoo.so", "libfoo.so.1", true, -1},
		{"a1", "ab", true, 1}, // a digit run sorts after any other byte
		{"ab", "a1", true, -1},
		{"libz.so", "libz.so", true, 0},
		{"lib\xc3.so", "liba.so", true, -1}, // signed char, as on x86
		{"lib\xc3.so", "liba.so", false, 1},
	} {
		t.Run(fmt.Sprintf("%q-%q-signed=%v", tc.a, tc.b, tc.signed), func(t *testing.T) {
			got := libcmp(tc.a, tc.b, tc.signed)
			assert.Equal(t, tc.sign, sign(got), "libcmp(%q, %q, signed %v) = %d: sign", tc.a, tc.b, tc.signed, got)
		})
	}
}

func sign(i int) int {
	switch {
	case i < 0:
		return -1
	case i > 0:
		return 1
	}
	return 0
}

func TestParseConf(t *testing.T) {
	got := parseConf([]byte("# comment\n  /usr/lib/x # trailing\ninclude a/*.conf\t/b/*.conf\nhwcap 0 nosegneg\nHWCAP\t1 x\n\n/with=libc6\n/nul\x00ignored\ninclude\n/last"))
	want := []confLine{
		{line: 2, dir: "/usr/lib/x "},
		{line: 3, includes: []string{"a/*.conf", "/b/*.conf"}},
		{line: 7, dir: "/with=libc6"},
		{line: 8, dir: "/nul"},
		{line: 9, dir: "include"},
		{line: 10, dir: "/last"},
	}
	assert.Equal(t, want, got, "parseConf")
}

func TestDirLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		path string
		flag int32
	}{
		{"/usr/lib/x ", "/usr/lib/x", flagAny},
		{"/usr/lib//  ", "/usr/lib", flagAny},
		{"/opt=libc6", "/opt", flagLibc6},
		{"/opt=libc5", "/opt", flagLibc5},
		{"/opt=bogus", "/opt", flagAny},
		{"/", "", flagAny},
	} {
		t.Run(tc.in, func(t *testing.T) {
			p, f := dirLine(tc.in)
			assert.Equal(t, tc.path, p, "dirLine(%q): path", tc.in)
			assert.Equal(t, tc.flag, f, "dirLine(%q): flag", tc.in)
		})
	}
	assert.Equal(t, "/etc/ld.so.conf.d/sub/*.conf", includePattern("/etc/ld.so.conf.d/a.conf", "sub/*.conf"), "relative include resolves to")
}

// TestStrtabTailMerge: a string that ends another is stored inside it.
func TestStrtabTailMerge(t *testing.T) {
	st := newStrtab(4)
	for _, s := range []string{"libfoo.so.1", "/lib/libfoo.so.1", "x86-64-v3", "so.1", "libfoo.so.1"} {
		st.add(s)
	}
	b := st.finalize()
	assert.Equal(t, "x86-64-v3\x00/lib/libfoo.so.1\x00", string(b), "table") // reversed bytes, descending
	for _, s := range st.list {
		off := st.off(s)
		assert.True(t, strings.HasPrefix(string(b[off:]), s+"\x00"), "%q at %d reads %q", s, off, b[off:])
	}
}

// TestStrtabOrder: finalize lays strings out in glibc's
// finalize_compare order (tailCompare, written as glibc writes it).
func TestStrtabOrder(t *testing.T) {
	words := []string{"libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", "c.so.6", "libz.so.1", "/lib/libz.so.1",
		"x86-64-v2", "x86-64-v3", "a", "b", "ab", "ba", "libfoo.so", "/lib/libfoo.so", "o"}
	st := newStrtab(len(words))
	for _, w := range words {
		st.add(w)
	}
	b := st.finalize()
	want := slices.Clone(words)
	slices.SortFunc(want, tailCompare)
	for i := 1; i < len(want); i++ {
		assert.Less(t, st.off(want[i-1]), st.off(want[i])+uint32(len(want[i])), "%q laid out after %q", want[i-1], want[i])
	}
	var sb strings.Builder // glibc's layout, from tailCompare's order
	for i, s := range want {
		if i == 0 || !strings.HasSuffix(want[i-1], s) {
			if i > 0 {
				sb.WriteByte(0)
			}
			sb.WriteString(s)
		}
	}
	assert.Equal(t, sb.String()+"\x00", string(b), "table")
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

func TestIsDSO(t *testing.T) {
	for name, want := range map[string]bool{
		"libc.so.6": true, "ld-linux-x86-64.so.2": true, "ld.so.1": true, "ld64.so.2": true,
		"libfoo.a": false, "foo.so": false, "lib": false, "libx.so": true,
	} {
		assert.Equal(t, want, isDSO(name), "isDSO(%q)", name)
	}
}

// TestGlobLimits: include globs over many distinct directories stop at
// maxGlobMatches paths and maxGlobDirs directory opens per Build, and the
// matches found are kept, sorted.
func TestGlobLimits(t *testing.T) {
	root := t.TempDir()
	for i := range 65 {
		dir := filepath.Join(root, "b", fmt.Sprintf("d%02d", i))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for j := range 65 {
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.conf", j)), nil, 0o644))
		}
	}
	r, err := openRoot(root)
	require.NoError(t, err, "openRoot")
	defer r.close()
	b := &builder{r: r, buf: make([]byte, 32<<10)}
	got := b.glob("/b/*/*.conf")
	require.Len(t, got, maxGlobMatches-65, "paths (the 65 directories count)")
	require.Equal(t, maxGlobMatches, b.globMatches, "matches")
	require.LessOrEqual(t, b.globDirs, maxGlobDirs, "directories opened")
	assert.True(t, slices.IsSorted(got), "paths not sorted: %q…", got[:3])
	assert.Equal(t, "/b/d00/f00.conf", got[0], "first path")
	assert.Empty(t, b.glob("/b/*"), "after the limit a pattern matched")
	b = &builder{r: r, buf: make([]byte, 32<<10), globDirs: maxGlobDirs - 1}
	assert.Empty(t, b.glob("/b/*/*.conf"), "with one directory open left: want none past /b")
	assert.Equal(t, maxGlobDirs, b.globDirs, "with one directory open left: opens")
}
