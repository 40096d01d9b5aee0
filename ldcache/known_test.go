package ldcache_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/ldcache"
)

// knownRoot is a root with /lib/libone.so.1 and /lib/libtwo.so.2 (both
// added, no cache to reuse) and what BuildOptions.Known took and read.
type knownRoot struct {
	root       string
	added      []string
	mu         sync.Mutex
	took, read map[string]int
}

func newKnownRoot(t *testing.T) *knownRoot {
	k := &knownRoot{root: t.TempDir(), took: map[string]int{}, read: map[string]int{}}
	writeLibs(t, k.root, []lib{{"lib/libone.so.1", x64("libone.so.1", "libc.so.6")}, {"lib/libtwo.so.2", x64("libtwo.so.2")}})
	k.added = []string{"/lib/libone.so.1", "/lib/libtwo.so.2"}
	ldcache.SetKnownHooks(func(p string) { k.mu.Lock(); k.took[p]++; k.mu.Unlock() }, func(p string) { k.mu.Lock(); k.read[p]++; k.mu.Unlock() })
	t.Cleanup(func() { ldcache.SetKnownHooks(nil, nil) })
	return k
}

func (k *knownRoot) lib(t *testing.T, rel string) ldcache.Library {
	l, ok := readLibrary(t, filepath.Join(k.root, rel))
	require.True(t, ok, "ReadLibrary %s", rel)
	return l
}

func (k *knownRoot) build(t *testing.T, added []string, known map[string]ldcache.Library) []byte {
	c, err := ldcache.Build(context.Background(), k.root, &ldcache.BuildOptions{Dirs: []string{"/lib"}, OnlyDirs: true, NoLinks: true, GOARCH: "amd64", Added: added, Known: known})
	require.NoError(t, err)
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	return b
}

// TestKnownTaken: the added libraries' facts are taken, not read, and
// the cache is the one reading them gives.
func TestKnownTaken(t *testing.T) {
	k := newKnownRoot(t)
	want := k.build(t, nil, nil)
	require.Equal(t, 1, k.read["/lib/libone.so.1"], "a build without Known reads the library")
	got := k.build(t, k.added, map[string]ldcache.Library{"/lib/libone.so.1": k.lib(t, "lib/libone.so.1"), "/lib/libtwo.so.2": k.lib(t, "lib/libtwo.so.2")})
	require.Equal(t, want, got, "the cache built with Known differs")
	require.Equal(t, map[string]int{"/lib/libone.so.1": 1, "/lib/libtwo.so.2": 1}, k.took, "Known's libraries were not taken")
	require.Equal(t, 1, k.read["/lib/libone.so.1"], "a library Known held was read")
}

// TestKnownRefused: facts that do not belong to the file at an added
// path (another file's, or the file's before it was rewritten), or that
// are for a path not added, are not taken; the file is read.
func TestKnownRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		added []string
		known func(t *testing.T, k *knownRoot) map[string]ldcache.Library
	}{
		{"another file's facts", []string{"/lib/libone.so.1"}, func(t *testing.T, k *knownRoot) map[string]ldcache.Library {
			return map[string]ldcache.Library{"/lib/libone.so.1": k.lib(t, "lib/libtwo.so.2")}
		}},
		{"rewritten since read", []string{"/lib/libone.so.1"}, func(t *testing.T, k *knownRoot) map[string]ldcache.Library {
			l := k.lib(t, "lib/libone.so.1")
			require.NoError(t, os.WriteFile(filepath.Join(k.root, "lib/libone.so.1"), mustBytes(t, x64("libother.so.1")), 0o644))
			return map[string]ldcache.Library{"/lib/libone.so.1": l}
		}},
		{"replaced since read", []string{"/lib/libone.so.1"}, func(t *testing.T, k *knownRoot) map[string]ldcache.Library {
			l := k.lib(t, "lib/libone.so.1")
			writeLibs(t, k.root, []lib{{"lib/new", x64("libother.so.1")}})
			require.NoError(t, os.Rename(filepath.Join(k.root, "lib/new"), filepath.Join(k.root, "lib/libone.so.1")))
			return map[string]ldcache.Library{"/lib/libone.so.1": l}
		}},
		{"not added", []string{"/lib/libtwo.so.2"}, func(t *testing.T, k *knownRoot) map[string]ldcache.Library {
			return map[string]ldcache.Library{"/lib/libone.so.1": k.lib(t, "lib/libone.so.1")}
		}},
		{"another architecture", []string{"/lib/libone.so.1"}, func(t *testing.T, k *knownRoot) map[string]ldcache.Library {
			l, ok := readLibraryFor(t, filepath.Join(k.root, "lib/libone.so.1"), "arm64")
			require.True(t, ok)
			return map[string]ldcache.Library{"/lib/libone.so.1": l}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKnownRoot(t)
			known := tc.known(t, k)
			want := k.build(t, nil, nil)
			got := k.build(t, tc.added, known)
			require.Equal(t, want, got, "the cache built with Known differs")
			require.Empty(t, k.took, "facts were taken")
			require.Equal(t, 2, k.read["/lib/libone.so.1"], "the file was not read again")
		})
	}
}

// TestReadLibrary: the SONAME as a cache entry names it; a file that is
// no library is no error; an unknown architecture or a negative size is
// one.
func TestReadLibrary(t *testing.T) {
	k := newKnownRoot(t)
	soname, ok := k.lib(t, "lib/libone.so.1").Soname()
	require.True(t, ok)
	require.Equal(t, "libone.so.1", soname)
	require.NoError(t, os.WriteFile(filepath.Join(k.root, "notelf.so"), []byte("text"), 0o644))
	_, ok = k.lib(t, "notelf.so").Soname()
	require.False(t, ok, "a text file has a SONAME")
	_, err := ldcache.ReadLibrary(strings.NewReader(""), ldcache.FileID{}, "pdp11")
	require.Error(t, err, "an unknown architecture")
	_, err = ldcache.ReadLibrary(strings.NewReader(""), ldcache.FileID{Size: -1}, "amd64")
	require.Error(t, err, "a negative size")
}
