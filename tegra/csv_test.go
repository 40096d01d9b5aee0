package tegra

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	// The toolkit's spaced sample: space around kind and path is ignored.
	got, err := Parse(strings.NewReader("   dev   , /dev/target \nlib,      /lib/target\n\ndir,/lib/target   \n\nsym, /source\n   \n# c\n  # indented comment\n"), "spaced.csv")
	require.NoError(t, err)
	want := []Entry{
		{KindDev, "/dev/target", "spaced.csv", 1},
		{KindLib, "/lib/target", "spaced.csv", 2},
		{KindDir, "/lib/target", "spaced.csv", 4},
		{KindSym, "/source", "spaced.csv", 6},
	}
	assert.Equal(t, want, got)

	got, err = Parse(strings.NewReader("dev, nvhost-gpu\ndev, /dev/dri/card*\nlib, /usr/lib/x//y/./libz.so\n"), "old.csv")
	require.NoError(t, err)
	assert.Equal(t, []string{"/dev/nvhost-gpu", "/dev/dri/card*", "/usr/lib/x/y/libz.so"},
		[]string{got[0].Path, got[1].Path, got[2].Path})
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, line, want string }{
		{"no comma", "dir", "want KIND, PATH"},
		{"unknown kind", "file, /x", `kind "file"`},
		{"upper-case kind", "LIB, /x", `kind "LIB"`},
		{"empty path", "lib,  ", "empty path"},
		{"relative", "lib, usr/lib/x", "not absolute"},
		{"dotdot", "lib, /usr/../etc/shadow", `".." element`},
		{"dotdot dev", "dev, ../etc/x", `".." element`},
		{"root", "dir, /", "names the root"},
		{"dev outside /dev", "dev, /etc/passwd", "not below /dev"},
		{"bad pattern", "lib, /usr/lib/[", "pattern"},
		{"nul", "lib, /a\x00b", "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader("# first\nlib, /ok\n"+tt.line+"\n"), "f.csv")
			require.ErrorIs(t, err, ErrSyntax)
			assert.Contains(t, err.Error(), "f.csv:3: ")
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := Parse(strings.NewReader("lib, /"+strings.Repeat("a", maxLine)+"\n"), "long.csv")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "long.csv")
}

func TestFilesAndSelect(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"devices.csv", "drivers.csv", "extra.CSV", ".csv", "other.not_csv", "l4t.csv.bak"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("lib, /x\n"), 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub.csv"), 0o755))
	files, err := Files("/", dir)
	require.NoError(t, err)
	base := func(fs []string) (out []string) {
		for _, f := range fs {
			out = append(out, filepath.Base(f))
		}
		return out
	}
	assert.Equal(t, []string{"devices.csv", "drivers.csv", "extra.CSV"}, base(files))
	assert.Equal(t, []string{"devices.csv", "drivers.csv"}, base(SelectFiles(files, "")))
	assert.Equal(t, []string{"devices.csv", "drivers.csv"}, base(SelectFiles(files, MountsBaseOnly)))
	assert.Equal(t, []string{"devices.csv", "drivers.csv", "extra.CSV"}, base(SelectFiles(files, MountsAll)))
	none, err := Files("", filepath.Join(dir, "missing"))
	require.NoError(t, err)
	assert.Empty(t, none)

	es, err := Load("/", append(DefaultFiles(dir), filepath.Join(dir, "extra.CSV")))
	require.NoError(t, err, "l4t.csv is missing and skipped")
	assert.Len(t, es, 3)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "drivers.csv"), []byte("lib, /x\nbogus\n"), 0o644))
	_, err = Load("", DefaultFiles(dir))
	require.ErrorIs(t, err, ErrSyntax)
	assert.Contains(t, err.Error(), filepath.Join(dir, "drivers.csv")+":2:")
}

// FuzzParse: Parse never panics, and every entry it returns is clean: a
// known kind, an absolute cleaned path without "..", a dev entry below
// /dev, a line number within the input.
func FuzzParse(f *testing.F) {
	f.Add("dev, /dev/nvmap\nlib, /usr/lib/x.so\n# c\n\nsym, /a\ndir, /b\n")
	f.Add("dev, nvhost-gpu\ndev, /dev/dri/card*\n")
	f.Add("lib,/a/../b\n")
	f.Add("   dev   , /dev/target \n")
	f.Fuzz(func(t *testing.T, in string) {
		es, err := Parse(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		lines := strings.Count(in, "\n") + 1
		for _, e := range es {
			switch e.Kind {
			case KindDev, KindLib, KindSym, KindDir:
			default:
				t.Fatalf("kind %q", e.Kind)
			}
			if !filepath.IsAbs(e.Path) || filepath.Clean(e.Path) != e.Path || strings.Contains(e.Path, "..") && hasDotDot(e.Path) {
				t.Fatalf("path %q", e.Path)
			}
			if e.Kind == KindDev && !strings.HasPrefix(e.Path, "/dev/") {
				t.Fatalf("dev path %q", e.Path)
			}
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("line %d of %d", e.Line, lines)
			}
		}
	})
}

func hasDotDot(p string) bool {
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return true
		}
	}
	return false
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
