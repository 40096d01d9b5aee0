package ldcache_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// injector puts libraries into a generated root as a configure does,
// after the snapshot, and lists what it added.
type injector struct {
	g     *genRoot
	added []string
	n     int
}

func (in *injector) add(rel string) { in.added = append(in.added, "/"+rel) }

// newLib writes a library with a SONAME of its own into dir and names
// its file.
func (in *injector) newLib(dir string) (file, soname string) {
	in.n++
	soname = fmt.Sprintf("libnv%d.so.1", in.n)
	file = soname + ".550.54"
	in.g.write(filepath.Join(dir, file), x64(soname, "libc.so.6"))
	in.add(filepath.Join(dir, file))
	return file, soname
}

func (in *injector) symlink(target, rel string) {
	in.g.symlink(target, rel)
	in.add(rel)
}

// Injections: the first ones leave the directory reusable.
const (
	injLib = iota
	injLinked
	injAbsLink
	injDangling
	injSubdir
	injClean   // those above keep the image's entries usable
	injCollide = injClean + iota - 5
	injReplaceLink
	injMountOver
	injForeignLink
	injHWCaps
	injOps
)

// inject makes injection op in dir and names it.
func (in *injector) inject(t *testing.T, op int, dir string) string {
	g := in.g
	switch op {
	case injLib:
		in.newLib(dir)
		return "a library in " + dir
	case injLinked:
		file, soname := in.newLib(dir)
		in.symlink(file, filepath.Join(dir, soname))
		return "a library and its SONAME link in " + dir
	case injAbsLink:
		file, soname := in.newLib(dir)
		in.symlink("/"+filepath.Join(dir, file), filepath.Join(dir, strings.TrimSuffix(soname, ".1")))
		return "a library and an absolute development link in " + dir
	case injDangling:
		in.symlink("libnothing.so.7", filepath.Join(dir, "libdangling.so.7"))
		return "a dangling link in " + dir
	case injSubdir:
		if _, err := os.Stat(filepath.Join(g.root, dir, "nvidia")); err != nil {
			in.add(filepath.Join(dir, "nvidia"))
		}
		g.write(filepath.Join(dir, "nvidia/xorg/libglxserver_nvidia.so.1"), x64("libglxserver_nvidia.so.1"))
		return "a library in a new subdirectory of " + dir
	case injCollide:
		if p, ok := g.pickLib(dir); ok {
			soname, _, _ := strings.Cut(filepath.Base(p), ".so.")
			soname = soname + ".so." + strings.Split(filepath.Base(p), ".")[2]
			rel := filepath.Join(dir, soname+".99")
			g.write(rel, x64(soname))
			in.add(rel)
		}
		return "a library sharing a SONAME of " + dir
	case injReplaceLink:
		if p, ok := g.pick(dir); ok {
			if st, err := os.Lstat(p); err == nil && st.Mode()&os.ModeSymlink != 0 {
				file, _ := in.newLib(dir)
				rel, _ := filepath.Rel(g.root, p)
				in.symlink(file, rel)
			}
		}
		return "an image link of " + dir + " replaced"
	case injMountOver:
		if p, ok := g.pickLib(dir); ok {
			src := filepath.Join(t.TempDir(), "host.so")
			require.NoError(t, os.WriteFile(src, mustBytes(t, x64("libmounted.so.1")), 0o644))
			require.NoError(t, unix.Mount(src, p, "", unix.MS_BIND, ""), "bind %s", p)
			t.Cleanup(func() { unix.Unmount(p, unix.MNT_DETACH) })
			rel, _ := filepath.Rel(g.root, p)
			in.add(rel)
		}
		return "a library mounted over one of " + dir
	case injForeignLink:
		file, _ := in.newLib(dir)
		in.symlink("/"+filepath.Join(dir, file), "usr/local/lib/libnvforeign.so.1")
		return "a link from /usr/local/lib to a library added to " + dir
	}
	if _, err := os.Stat(filepath.Join(g.root, dir, "glibc-hwcaps")); err != nil {
		in.add(filepath.Join(dir, "glibc-hwcaps"))
	}
	rel := filepath.Join(dir, "glibc-hwcaps/x86-64-v3/libnvv3.so.1")
	g.write(rel, x64("libnvv3.so.1"))
	in.add(rel)
	return "a glibc-hwcaps library in " + dir
}

func mustBytes(t *testing.T, o interface{ Bytes() ([]byte, error) }) []byte {
	b, err := o.Bytes()
	require.NoError(t, err)
	return b
}

// TestIncrementalAddedEqualsFull is the property of BuildOptions.Before
// and Added: over generated roots whose cache was written (by glibc's
// ldconfig or Update), changed at random by someone else, snapshotted,
// then injected into as a configure does (libraries, links, mounts over
// image files, subdirectories, links from elsewhere) with the injected
// paths listed, the incremental Build gives the bytes of the full one,
// and of glibc's ldconfig where the full one does. A directory injected
// into with nothing else changed must be reused, so the test cannot pass
// by never reusing.
func TestIncrementalAddedEqualsFull(t *testing.T) {
	testutil.RequireRoot(t) // glibc's -r and the bind mounts
	testutil.GlibcLdconfig(t)
	reused := 0
	for seed := range 40 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			var dirs []string
			ldcache.SetReusedHook(func(d string) { dirs = append(dirs, d) })
			defer ldcache.SetReusedHook(nil)
			g := &genRoot{t: t, root: testutil.Tree(t, reuseTree), rnd: rand.New(rand.NewPCG(uint64(seed), 13)), allLinks: seed%4 != 3}
			for _, d := range reuseDirs {
				for range 2 + g.rnd.IntN(5) {
					g.lib(d)
				}
			}
			g.linkElsewhere()
			time.Sleep(12 * time.Millisecond) // past the kernel's clock tick
			if seed%2 == 0 {
				runLdconfig(t, "-r", g.root, "-X")
			} else {
				require.NoError(t, ldcache.Update(context.Background(), g.root, nil), "Update")
			}
			var what []string
			if seed%3 == 2 { // someone else's changes, before the snapshot
				for range 1 + g.rnd.IntN(2) {
					what = append(what, g.change())
				}
			}
			inject := []string{"/usr/lib/x86_64-linux-gnu", "/opt/drv"}
			recorded := inject
			if seed%5 == 4 {
				recorded = inject[1:]
			}
			before, err := ldcache.TakeSnapshot(g.root, "", recorded)
			require.NoError(t, err, "TakeSnapshot")
			in := &injector{g: g}
			clean := len(what) == 0 && len(recorded) == 2 && g.allLinks
			for range 1 + g.rnd.IntN(4) {
				op := g.rnd.IntN(injOps)
				if seed < 2*injOps { // each injection alone first
					op = seed / 2
				}
				clean = clean && op < injClean
				what = append(what, in.inject(t, op, strings.TrimPrefix(inject[g.rnd.IntN(2)], "/")))
				if seed < 2*injOps {
					break
				}
			}
			checkAdded(t, g.root, inject, before, in.added, what)
			if clean {
				assert.Contains(t, dirs, "/usr/lib/x86_64-linux-gnu", "after %q: not reused", what)
				reused++
			}
		})
	}
	t.Logf("%d roots reused their injected library directory", reused)
	assert.GreaterOrEqual(t, reused, 5, "too few clean injections to check reuse")
}

func checkAdded(t *testing.T, root string, inject []string, before *ldcache.Snapshot, added, what []string) {
	t.Helper()
	want, _ := glibcWrites(t, root, inject...)
	c, err := ldcache.Parse(want)
	require.NoError(t, err)
	full, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Dirs: inject, Generator: c.Generator, NoLinks: true})
	require.NoError(t, err, "full Build")
	inc, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Dirs: inject, Generator: c.Generator, NoLinks: true,
		Reuse: "/etc/ld.so.cache", Before: before, Added: added})
	require.NoError(t, err, "incremental Build")
	fb, _ := full.MarshalBinary()
	ib, _ := inc.MarshalBinary()
	if string(fb) != string(ib) {
		var f, i strings.Builder
		full.Print(&f, "full")
		inc.Print(&i, "incremental")
		require.FailNow(t, "the incremental cache differs from the full one", "after %q (added %q):\n%s\n%s", what, added, f.String(), i.String())
	}
	if string(fb) == string(want) {
		require.Equal(t, want, ib, "after %q the incremental cache differs from glibc's", what)
	}
	checkKnown(t, root, inject, before, added, what, c.Generator, fb)
}

// checkKnown builds again with BuildOptions.Known holding the added
// libraries as ReadLibrary reads them, and an image library that was
// not added with its own facts: the bytes are the full Build's, no added
// library with facts is read, and the image library's facts are not
// taken (only added paths' are).
func checkKnown(t *testing.T, root string, inject []string, before *ldcache.Snapshot, added, what []string, gen string, full []byte) {
	t.Helper()
	known := map[string]ldcache.Library{}
	for _, a := range added {
		l, ok := readLibrary(t, filepath.Join(root, a))
		if !ok {
			continue
		}
		known[a] = l
	}
	var stranger string
	if len(known) > 0 {
		for _, d := range inject {
			if ents, err := os.ReadDir(filepath.Join(root, d)); err == nil {
				for _, e := range ents {
					p := d + "/" + e.Name()
					if _, isAdded := known[p]; !isAdded && e.Type().IsRegular() && strings.Contains(e.Name(), ".so") && stranger == "" {
						stranger = p
					}
				}
			}
		}
		if l, ok := readLibrary(t, filepath.Join(root, stranger)); ok && stranger != "" {
			known[stranger] = l // facts for a path not added
		}
	}
	var mu sync.Mutex
	read, took := map[string]bool{}, map[string]bool{}
	ldcache.SetKnownHooks(func(p string) { mu.Lock(); took[p] = true; mu.Unlock() }, func(p string) { mu.Lock(); read[p] = true; mu.Unlock() })
	defer ldcache.SetKnownHooks(nil, nil)
	kc, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Dirs: inject, Generator: gen, NoLinks: true,
		Reuse: "/etc/ld.so.cache", Before: before, Added: added, Known: known})
	require.NoError(t, err, "Build with Known")
	kb, _ := kc.MarshalBinary()
	require.Equal(t, full, kb, "after %q (added %q) the cache built with Known differs from the full one", what, added)
	for p := range known {
		if p != stranger {
			assert.False(t, read[p], "after %q: %s read although Known held it", what, p)
		}
	}
	assert.False(t, took[stranger], "after %q: Known's facts for %s, not added, were taken", what, stranger)
}

// readLibrary reads the regular file p, not followed, with
// ldcache.ReadLibrary for amd64; false when it is no regular file.
func readLibrary(t *testing.T, p string) (ldcache.Library, bool) {
	return readLibraryFor(t, p, "amd64")
}

func readLibraryFor(t *testing.T, p, goarch string) (ldcache.Library, bool) {
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return ldcache.Library{}, false
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return ldcache.Library{}, false
	}
	id := ldcache.FileID{Dev: st.Dev, Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
	l, err := ldcache.ReadLibrary(f, id, goarch)
	require.NoError(t, err, "ReadLibrary %s", p)
	return l, true
}
