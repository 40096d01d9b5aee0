package ldcache_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// reuseTree is the skeleton of the generated roots: merged /usr (/lib is
// a symlink), an include, a glibc-hwcaps directory, and /opt/c, which
// only a configuration change lists.
const reuseTree = `
file etc/debian_version "12\n"
file etc/ld.so.conf "include /etc/ld.so.conf.d/*.conf\n"
file etc/ld.so.conf.d/x86_64-linux-gnu.conf "/usr/local/lib\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n"
file etc/ld.so.conf.d/opt.conf "/opt/a\n/opt/b\n"
symlink lib usr/lib
dir usr/local/lib
dir opt/drv
`

var reuseDirs = []string{"usr/lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3",
	"usr/local/lib", "opt/a", "opt/b", "opt/c", "opt/drv"}

// genRoot writes a random root: in each directory a few libraries with
// SONAME links, some with development links, older versions, 32-bit
// builds or no SONAME link, and non-ELF files.
type genRoot struct {
	t    *testing.T
	root string
	rnd  *rand.Rand
	n    int
	// allLinks gives every library its SONAME link (a cache written with
	// -X lists the link's path anyway: an entry whose file is missing,
	// which makes its directory scanned)
	allLinks bool
}

func (g *genRoot) lib(dir string) {
	g.n++
	soname := fmt.Sprintf("libg%d.so.%d", g.n, g.rnd.IntN(3))
	file := fmt.Sprintf("%s.%d.%d", soname, g.rnd.IntN(3), g.rnd.IntN(12))
	obj := x64(soname, "libc.so.6")
	if g.rnd.IntN(8) == 0 {
		obj = i386(soname)
	}
	g.write(filepath.Join(dir, file), obj)
	if g.rnd.IntN(5) != 0 || g.allLinks {
		g.symlink(file, filepath.Join(dir, soname))
	}
	switch dev := filepath.Join(dir, fmt.Sprintf("libg%d.so", g.n)); g.rnd.IntN(6) {
	case 0, 1:
		g.symlink(soname, dev)
	case 2: // absolute, resolved through the root
		g.symlink("/"+filepath.Join(dir, file), dev)
	case 3: // through the parent
		g.symlink(filepath.Join("..", filepath.Base(dir), file), dev)
	}
	if g.rnd.IntN(6) == 0 { // an older version with the same SONAME
		g.write(filepath.Join(dir, soname+".0.0"), x64(soname))
	}
	if g.rnd.IntN(8) == 0 {
		g.file(filepath.Join(dir, fmt.Sprintf("libtext%d.so.1", g.n)), "not ELF\n")
	}
}

func (g *genRoot) write(rel string, o *elfwriter.Object) {
	p := filepath.Join(g.root, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.Remove(p)
	require.NoError(g.t, elfwriter.WriteFile(p, o, 0o644), p)
}

func (g *genRoot) file(rel, data string) {
	require.NoError(g.t, os.WriteFile(filepath.Join(g.root, rel), []byte(data), 0o644))
}

func (g *genRoot) symlink(target, rel string) {
	p := filepath.Join(g.root, rel)
	os.Remove(p)
	require.NoError(g.t, os.Symlink(target, p))
}

// entries lists a directory's names, for picking one at random.
func (g *genRoot) entries(dir string) []string {
	ents, _ := os.ReadDir(filepath.Join(g.root, dir))
	var names []string
	for _, e := range ents {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

func (g *genRoot) pick(dir string) (string, bool) {
	names := g.entries(dir)
	if len(names) == 0 {
		return "", false
	}
	return filepath.Join(g.root, dir, names[g.rnd.IntN(len(names))]), true
}

// pickLib returns a regular library file of dir.
func (g *genRoot) pickLib(dir string) (string, bool) {
	var libs []string
	for _, n := range g.entries(dir) {
		if st, err := os.Lstat(filepath.Join(g.root, dir, n)); err == nil && st.Mode().IsRegular() && strings.HasPrefix(n, "libg") {
			libs = append(libs, n)
		}
	}
	if len(libs) == 0 {
		return "", false
	}
	return filepath.Join(g.root, dir, libs[g.rnd.IntN(len(libs))]), true
}

// linkElsewhere gives /usr/local/lib a link into a directory no
// configuration lists, /opt/ext, beside a directory /opt/ext2 holding a
// file of the same name with another SONAME (see changeOp 14).
func (g *genRoot) linkElsewhere() {
	g.write("opt/ext/libext.so.1", x64("libext.so.1"))
	g.write("opt/ext2/libext.so.1", x64("libswapped.so.1"))
	g.symlink("/opt/ext/libext.so.1", "usr/local/lib/libext.so.1")
}

// change makes one random change and names it.
func (g *genRoot) change() string {
	return g.changeOp(g.rnd.IntN(15), reuseDirs[g.rnd.IntN(len(reuseDirs))])
}

// changeOp makes change op in dir.
func (g *genRoot) changeOp(op int, dir string) string {
	abs := filepath.Join(g.root, dir)
	past := time.Now().Add(-time.Hour)
	switch op {
	case 0:
		g.lib(dir)
		return "add a library to " + dir
	case 1:
		if p, ok := g.pick(dir); ok {
			os.Remove(p)
		}
		return "remove an entry of " + dir
	case 2: // replace by rename
		if p, ok := g.pick(dir); ok {
			g.write(filepath.Join(dir, ".new"), x64("libreplaced.so.1"))
			os.Rename(filepath.Join(abs, ".new"), p)
		}
		return "replace a file of " + dir
	case 3: // rewrite in place, its times put back: only its ctime tells
		if p, ok := g.pickLib(dir); ok {
			b, _ := x64(fmt.Sprintf("libinplace%d.so.1", g.n)).Bytes()
			os.WriteFile(p, b, 0o644)
			os.Chtimes(p, past, past)
		}
		return "rewrite a file of " + dir + " in place"
	case 4:
		os.Chtimes(abs, time.Now(), time.Now())
		return "touch " + dir
	case 12:
		if p, ok := g.pickLib(dir); ok {
			os.Remove(p)
			os.Chtimes(abs, past, past)
		}
		return "remove a library of " + dir
	case 5:
		g.file("etc/ld.so.conf.d/opt.conf", "/opt/a\n/opt/c\n/opt/b\n")
		return "list /opt/c"
	case 6: // a development link: a new entry, only the directory changed
		if p, ok := g.pickLib(dir); ok {
			name, _, _ := strings.Cut(filepath.Base(p), ".so")
			g.symlink(filepath.Base(p), filepath.Join(dir, name+".so"))
			os.Chtimes(abs, past, past)
		}
		return "add a symlink to " + dir
	case 7:
		g.write(filepath.Join(dir, "tls/libtls.so.1"), x64("libtls.so.1"))
		return "add a tls subdirectory to " + dir
	case 8:
		os.Remove(filepath.Join(g.root, "etc/ld.so.cache"))
		return "remove the cache"
	case 9:
		g.file("etc/ld.so.cache", "glibc-ld.so.cache1.1 garbage")
		return "corrupt the cache"
	case 14: // /opt/ext swapped (renamed, or replaced by a symlink) for
		// /opt/ext2, whose file is as old as the rest, /opt's times put
		// back: the link of /usr/local/lib, its directory and the file it
		// now leads to are all older than the cache; only /opt's ctime
		// tells that the link leads elsewhere
		ext := filepath.Join(g.root, "opt/ext")
		if _, err := os.Lstat(ext + ".old"); err == nil {
			return "swap /opt/ext again (nothing done)"
		}
		require.NoError(g.t, os.Rename(ext, ext+".old"))
		if g.rnd.IntN(2) == 0 {
			require.NoError(g.t, os.Rename(ext+"2", ext))
		} else {
			require.NoError(g.t, os.Symlink("ext2", ext))
		}
		os.Chtimes(filepath.Join(g.root, "opt"), past, past)
		return "swap /opt/ext, which a link of /usr/local/lib leads through"
	case 10: // a lie: an entry for a file that is not there
		c, err := ldcache.OpenInRoot(g.root, "/etc/ld.so.cache")
		if err == nil {
			c.Entries = append([]ldcache.Entry{{Name: "libzz.so.1", Path: "/usr/local/lib/libzz.so.1", Flags: 0x303}}, c.Entries...)
			ldcache.WriteFileInRoot(g.root, "/etc/ld.so.cache", c)
		}
		return "a cache entry for a missing file"
	}
	g.write(filepath.Join(dir, "glibc-hwcaps/x86-64-v3/libv3.so.1"), x64("libv3.so.1"))
	return "a glibc-hwcaps library in " + dir
}

// TestIncrementalEqualsFull: over generated roots whose cache was written
// (by Build or by glibc's ldconfig) and which were then changed at
// random, an incremental Build gives the bytes of a full Build, and of
// glibc's ldconfig where the full Build matches it. The unchanged roots
// must have reused directories, so the test cannot pass by never reusing.
func TestIncrementalEqualsFull(t *testing.T) {
	glibc := os.Geteuid() == 0
	if glibc {
		testutil.GlibcLdconfig(t)
	}
	reused := 0
	ldcache.SetReusedHook(func(string) { reused++ })
	defer ldcache.SetReusedHook(nil)
	for seed := range 108 {
		// the roots of the single changes have every SONAME link, so
		// that the directory changed is otherwise reusable
		g := &genRoot{t: t, root: testutil.Tree(t, reuseTree), rnd: rand.New(rand.NewPCG(uint64(seed), 7)), allLinks: seed < 30}
		for _, d := range reuseDirs {
			for range 2 + g.rnd.IntN(6) {
				g.lib(d)
			}
		}
		g.linkElsewhere()
		time.Sleep(12 * time.Millisecond) // past the kernel's clock tick
		if glibc && seed%2 == 0 {
			runLdconfig(t, "-r", g.root, "-X")
		} else {
			require.NoError(t, ldcache.Update(context.Background(), g.root, nil), "seed %d: Update", seed)
		}
		var what []string
		if seed < 30 { // each change alone, in a directory that is reused
			what = append(what, g.changeOp(seed/2, []string{"usr/local/lib", "opt/a"}[seed%2]))
		} else {
			for range g.rnd.IntN(4) {
				what = append(what, g.change())
			}
		}
		inject := []string{"/opt/drv"}
		if seed%3 == 0 {
			inject = append(inject, "/usr/lib/x86_64-linux-gnu")
		}
		before := reused
		checkIncremental(t, g.root, inject, glibc, what)
		if len(what) == 0 {
			assert.NotEqual(t, before, reused, "seed %d: unchanged root, no directories reused", seed)
		}
	}
	t.Logf("%d directories reused", reused)
}

func checkIncremental(t *testing.T, root string, inject []string, glibc bool, what []string) {
	t.Helper()
	gen := ""
	var want []byte
	if glibc {
		want, _ = glibcWrites(t, root, inject...)
		c, _ := ldcache.Parse(want)
		gen = c.Generator
	}
	full, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Dirs: inject, Generator: gen, NoLinks: true})
	require.NoError(t, err, "full Build")
	inc, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Dirs: inject, Generator: gen, Reuse: "/etc/ld.so.cache", NoLinks: true})
	require.NoError(t, err, "incremental Build")
	fb, _ := full.MarshalBinary()
	ib, _ := inc.MarshalBinary()
	if !bytes.Equal(fb, ib) {
		var f, i bytes.Buffer
		full.Print(&f, "full")
		inc.Print(&i, "incremental")
		require.FailNow(t, "the incremental cache differs from the full one", "after %q:\n%s\n%s", what, f.String(), i.String())
	}
	if glibc && bytes.Equal(fb, want) {
		require.True(t, bytes.Equal(ib, want), "after %q the incremental cache differs from glibc's", what)
	}
}
