package ldcache_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/ldcache"
)

// glibcCache runs glibc's ldconfig over root in format f (without touching
// symlinks) and returns the file it wrote and its parsed form.
func glibcCache(t *testing.T, root string, f ldcache.Format) (string, *ldcache.Cache) {
	t.Helper()
	runLdconfig(t, "-r", root, "-X", "-c", f.String(), "-C", "/etc/glibc.cache")
	p := filepath.Join(root, "etc/glibc.cache")
	c, err := ldcache.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

// printed is `ldconfig -p -C path` with the path in the header line
// replaced by NAME, so listings of two files compare.
func printed(t *testing.T, path string) string {
	t.Helper()
	return strings.Replace(string(runLdconfig(t, "-p", "-C", path)), "`"+path+"'", "`NAME'", 1)
}

func TestBuildMatchesLdconfig(t *testing.T) {
	for _, f := range []ldcache.Format{ldcache.FormatNew, ldcache.FormatCompat, ldcache.FormatOld} {
		t.Run(f.String(), func(t *testing.T) {
			root := debianRoot(t)
			if f == ldcache.FormatNew {
				writeLibs(t, root, legacyHWCapLibs)
			}
			glibcPath, glibc := glibcCache(t, root, f)
			c, err := ldcache.Build(root, &ldcache.BuildOptions{Format: f, Generator: glibc.Generator})
			if err != nil {
				t.Fatal(err)
			}
			ours := filepath.Join(root, "etc/ours.cache")
			if err := ldcache.WriteFile(ours, c); err != nil {
				t.Fatal(err)
			}
			want, got := printed(t, glibcPath), printed(t, ours)
			if got != want {
				t.Fatalf("ldconfig -p of our cache differs from its own:\n--- glibc\n%s--- ours\n%s", want, got)
			}
			if strings.Count(want, "\n") < 20 {
				t.Fatalf("fixture lists too few libraries:\n%s", want)
			}
			wantB, _ := os.ReadFile(glibcPath)
			gotB, _ := os.ReadFile(ours)
			if !bytes.Equal(gotB, wantB) {
				t.Errorf("files differ: ours %d bytes, glibc %d bytes", len(gotB), len(wantB))
			}
		})
	}
}
