package ldcache

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
		got := libcmp(tc.a, tc.b, tc.signed)
		if sign(got) != tc.sign {
			t.Errorf("libcmp(%q, %q, signed %v) = %d, want sign %d", tc.a, tc.b, tc.signed, got, tc.sign)
		}
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
	if !slices.EqualFunc(got, want, func(a, b confLine) bool {
		return a.line == b.line && a.dir == b.dir && slices.Equal(a.includes, b.includes)
	}) {
		t.Errorf("parseConf:\n got %+v\nwant %+v", got, want)
	}
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
		p, f := dirLine(tc.in)
		if p != tc.path || f != tc.flag {
			t.Errorf("dirLine(%q) = %q, %d; want %q, %d", tc.in, p, f, tc.path, tc.flag)
		}
	}
	if got := includePattern("/etc/ld.so.conf.d/a.conf", "sub/*.conf"); got != "/etc/ld.so.conf.d/sub/*.conf" {
		t.Errorf("relative include resolves to %q", got)
	}
}

// TestStrtabTailMerge: a string that ends another is stored inside it.
func TestStrtabTailMerge(t *testing.T) {
	st := newStrtab(4)
	for _, s := range []string{"libfoo.so.1", "/lib/libfoo.so.1", "x86-64-v3", "so.1", "libfoo.so.1"} {
		st.add(s)
	}
	b := st.finalize()
	if want := "x86-64-v3\x00/lib/libfoo.so.1\x00"; string(b) != want { // reversed bytes, descending
		t.Errorf("table %q, want %q", b, want)
	}
	for s, off := range st.off {
		if !strings.HasPrefix(string(b[off:]), s+"\x00") {
			t.Errorf("%q at %d reads %q", s, off, b[off:])
		}
	}
}

func TestIsDSO(t *testing.T) {
	for name, want := range map[string]bool{
		"libc.so.6": true, "ld-linux-x86-64.so.2": true, "ld.so.1": true, "ld64.so.2": true,
		"libfoo.a": false, "foo.so": false, "lib": false, "libx.so": true,
	} {
		if isDSO(name) != want {
			t.Errorf("isDSO(%q) = %v", name, !want)
		}
	}
}

// TestGlobLimits: include globs over many distinct directories stop at
// maxGlobMatches paths and maxGlobDirs directory opens per Build, and the
// matches found are kept, sorted.
func TestGlobLimits(t *testing.T) {
	root := t.TempDir()
	for i := range 65 {
		dir := filepath.Join(root, "b", fmt.Sprintf("d%02d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for j := range 65 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.conf", j)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	r, err := openRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	b := &builder{r: r, buf: make([]byte, 32<<10)}
	got := b.glob("/b/*/*.conf")
	if len(got) != maxGlobMatches-65 || b.globMatches != maxGlobMatches || b.globDirs > maxGlobDirs {
		t.Fatalf("%d paths, %d matches, %d directories opened; want %d paths (the 65 directories count), %d matches, at most %d opens",
			len(got), b.globMatches, b.globDirs, maxGlobMatches-65, maxGlobMatches, maxGlobDirs)
	}
	if !slices.IsSorted(got) || got[0] != "/b/d00/f00.conf" {
		t.Errorf("paths not sorted from /b/d00/f00.conf: %q…", got[:3])
	}
	if more := b.glob("/b/*"); len(more) != 0 {
		t.Errorf("after the limit a pattern matched %d paths", len(more))
	}
	b = &builder{r: r, buf: make([]byte, 32<<10), globDirs: maxGlobDirs - 1}
	if got := b.glob("/b/*/*.conf"); len(got) != 0 || b.globDirs != maxGlobDirs {
		t.Errorf("with one directory open left: %d paths, %d opens; want none past /b", len(got), b.globDirs)
	}
}
