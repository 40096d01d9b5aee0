package ldcache_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/ldcache"
)

// treeListing describes every file under root: path, type and, for
// symlinks, the target.
func treeListing(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if strings.HasPrefix(rel, "etc/") && strings.HasSuffix(rel, ".cache") {
			return nil
		}
		line := rel + " " + d.Type().String()
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			line += " -> " + target
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestLinksLikeLdconfig: with Links, Build creates, replaces and removes
// the same symlinks glibc's ldconfig (without -X) does on an identical
// root, prints the same -v listing, and writes the same cache.
func TestLinksLikeLdconfig(t *testing.T) {
	theirs, ours := debianRoot(t), debianRoot(t)
	// A wrong SONAME link to replace and a regular file in a link's place.
	for _, r := range []string{theirs, ours} {
		if err := os.Symlink("libnv.so.535.1", filepath.Join(r, "opt/a/libnv.so.1")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r, "opt/b/libb.so.1.0"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if treeListing(t, theirs) != treeListing(t, ours) {
		t.Fatal("fixtures differ before the test")
	}
	wantV := runLdconfig(t, "-r", theirs, "-v", "-C", "/etc/glibc.cache")
	glibc, err := ldcache.Open(filepath.Join(theirs, "etc/glibc.cache"))
	if err != nil {
		t.Fatal(err)
	}
	var gotV bytes.Buffer
	c, err := ldcache.Build(context.Background(), ours, &ldcache.BuildOptions{Verbose: &gotV, Generator: glibc.Generator})
	if err != nil {
		t.Fatal(err)
	}
	if err := ldcache.WriteFile(filepath.Join(ours, "etc/glibc.cache"), c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(wantV), "(changed)") {
		t.Fatalf("glibc changed no link; the fixture tests nothing:\n%s", wantV)
	}
	if got := strings.ReplaceAll(gotV.String(), ours, theirs); got != string(wantV) {
		t.Errorf("-v listing differs:\n--- glibc\n%s--- ours\n%s", wantV, got)
	}
	if a, b := treeListing(t, theirs), treeListing(t, ours); a != b {
		t.Errorf("trees differ after linking:\n--- glibc\n%s\n--- ours\n%s", a, b)
	}
	a, _ := os.ReadFile(filepath.Join(theirs, "etc/glibc.cache"))
	b, _ := os.ReadFile(filepath.Join(ours, "etc/glibc.cache"))
	if !bytes.Equal(a, b) {
		t.Errorf("caches differ: %d vs %d bytes", len(b), len(a))
	}
}

// TestLinksOffWritesNothing: without Links, Build leaves the root as it
// was (ldconfig -X), dangling links included.
func TestLinksOffWritesNothing(t *testing.T) {
	root := debianRoot(t)
	before := treeListing(t, root)
	if _, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{NoLinks: true}); err != nil {
		t.Fatal(err)
	}
	if after := treeListing(t, root); after != before {
		t.Errorf("Build without Links changed the root:\n%s\n---\n%s", before, after)
	}
}

// TestZeroOptionsLink: nil and zero BuildOptions mean plain ldconfig -r,
// which writes the SONAME links, not ldconfig -X.
func TestZeroOptionsLink(t *testing.T) {
	for name, opts := range map[string]*ldcache.BuildOptions{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			root := debianRoot(t)
			before := treeListing(t, root)
			if _, err := ldcache.Build(context.Background(), root, opts); err != nil {
				t.Fatal(err)
			}
			if after := treeListing(t, root); after == before {
				t.Errorf("Build with %s options wrote no link:\n%s", name, before)
			}
		})
	}
}
