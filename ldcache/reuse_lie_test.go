package ldcache_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

// reuseRoot is a small Debian root whose cache Update wrote a tick after
// its files, so that an incremental Build may reuse every directory.
func reuseRoot(t *testing.T) string {
	t.Helper()
	root := testutil.Tree(t, `
file etc/debian_version "12\n"
file etc/ld.so.conf "/usr/lib/x86_64-linux-gnu\n/opt/a\n/opt/c\n"
file usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 ""
symlink usr/lib/x86_64-linux-gnu/libfoo.so.1 libfoo.so.1.0
symlink opt/a/libbar.so.2 libbar.so.2.0
symlink opt/c/libnvidia-ml.so /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1
`)
	writeLibs(t, root, []lib{
		{"usr/lib/x86_64-linux-gnu/libfoo.so.1.0", x64("libfoo.so.1")},
		{"opt/a/libbar.so.2.0", x64("libbar.so.2")},
	})
	time.Sleep(12 * time.Millisecond)
	require.NoError(t, ldcache.Update(context.Background(), root, nil), "Update")
	return root
}

func buildBoth(t *testing.T, root string, dirs ...string) (full, inc *ldcache.Cache, reused []string) {
	t.Helper()
	ldcache.SetReusedHook(func(d string) { reused = append(reused, d) })
	defer ldcache.SetReusedHook(nil)
	var err error
	inc, err = ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Dirs: dirs, Reuse: "/etc/ld.so.cache", NoLinks: true})
	require.NoError(t, err, "incremental Build")
	full, err = ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Dirs: dirs, NoLinks: true})
	require.NoError(t, err, "full Build")
	return full, inc, reused
}

// TestIncrementalRescansInjectedDirs: a library mounted over a file of the
// image (as Apply mounts the driver's) changes neither the directory's
// times nor, seen through the mount, gives a file newer than the cache:
// only the rule that the injected directories are always scanned finds
// it, and the rule that a symlink into one (/opt/c's) makes its own
// directory scanned. Fails if either is dropped.
func TestIncrementalRescansInjectedDirs(t *testing.T) {
	testutil.RequireRoot(t)
	host := filepath.Join(t.TempDir(), "libnvidia-ml.so.550")
	require.NoError(t, elfwriter.WriteFile(host, x64("libnvidia-ml.so.1"), 0o644))
	root := reuseRoot(t)
	target := filepath.Join(root, "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1")
	if err := unix.Mount(host, target, "", unix.MS_BIND, ""); err != nil {
		testutil.RequireKernel(t, "bind mounts", err)
	}
	t.Cleanup(func() { unix.Unmount(target, unix.MNT_DETACH) })
	full, inc, reused := buildBoth(t, root, "/usr/lib/x86_64-linux-gnu")
	assert.Len(t, inc.Find("libnvidia-ml.so.1", ldcache.ArchX8664), 1, "the mounted library is missing from the incremental cache (reused %q)", reused)
	assert.Contains(t, reused, "/opt/a", "reused")
	assert.NotContains(t, reused, "/usr/lib/x86_64-linux-gnu", "reused")
	assert.NotContains(t, reused, "/opt/c", "reused")
	assert.Len(t, inc.Find("libnvidia-ml.so", ldcache.ArchX8664), 1, "/opt/c's link to the mounted library is missing from the incremental cache")
	requireSameCache(t, full, inc)
}

// TestIncrementalLie: a cache entry for a file that is not there is
// dropped (the directory is scanned); a wrong type claimed for a file
// that is there stays, for that name alone.
func TestIncrementalLie(t *testing.T) {
	root := reuseRoot(t)
	c, err := ldcache.OpenInRoot(root, "/etc/ld.so.cache")
	require.NoError(t, err, "OpenInRoot")
	for i := range c.Entries {
		if c.Entries[i].Name == "libbar.so.2" {
			c.Entries[i].Flags = int32(ldcache.TypeLibc6) // i386, not x86-64
		}
	}
	c.Entries = append(c.Entries, ldcache.Entry{Name: "libgone.so.1", Path: "/usr/lib/x86_64-linux-gnu/libgone.so.1", Flags: c.Entries[0].Flags})
	require.NoError(t, ldcache.WriteFileInRoot(root, "/etc/ld.so.cache", c), "WriteFileInRoot")
	full, inc, reused := buildBoth(t, root)
	assert.Contains(t, reused, "/opt/a", "reused")
	assert.NotContains(t, reused, "/usr/lib/x86_64-linux-gnu", "reused")
	require.Len(t, inc.Entries, len(full.Entries), "incremental entries vs full")
	for i, e := range inc.Entries {
		f := full.Entries[i]
		if e.Name == "libbar.so.2" {
			assert.Equal(t, int32(ldcache.TypeLibc6), e.Flags, "the lie about libbar.so.2 was not kept: %+v", e)
			e.Flags = f.Flags
		}
		assert.Equal(t, f, e, "entry %d: incremental vs full", i)
	}
}

func requireSameCache(t *testing.T, full, inc *ldcache.Cache) {
	t.Helper()
	fb, _ := full.MarshalBinary()
	ib, _ := inc.MarshalBinary()
	if !bytes.Equal(fb, ib) {
		var f, i bytes.Buffer
		full.Print(&f, "full")
		inc.Print(&i, "incremental")
		assert.Fail(t, "incremental cache differs from the full one", "%s\n%s", f.String(), i.String())
	}
}

// TestIncrementalLinkTargetRewritten: a library rewritten in place, its
// times put back, changes no directory; a symlink to it from another
// directory (absolute target) must still make that directory scanned.
func TestIncrementalLinkTargetRewritten(t *testing.T) {
	root := testutil.Tree(t, `
file etc/debian_version "12\n"
file etc/ld.so.conf "/opt/a\n/opt/b\n"
symlink opt/b/libbar.so /opt/a/libbar.so.2.0
`)
	writeLibs(t, root, []lib{{"opt/a/libbar.so.2.0", x64("libbar.so.2")}})
	time.Sleep(12 * time.Millisecond)
	require.NoError(t, ldcache.Update(context.Background(), root, nil), "Update")
	p := filepath.Join(root, "opt/a/libbar.so.2.0")
	st, err := os.Stat(p)
	require.NoError(t, err)
	b, _ := x64("libnew.so.1").Bytes()
	require.NoError(t, os.WriteFile(p, b, 0o644))
	os.Chtimes(p, st.ModTime(), st.ModTime())
	full, inc, reused := buildBoth(t, root)
	assert.NotContains(t, reused, "/opt/b", "reused /opt/b, whose link leads to a rewritten file")
	requireSameCache(t, full, inc)
}

// TestIncrementalLieInjected is TestIncrementalLie for a directory the
// caller injects into with a snapshot (Before and Added), whose entries
// are otherwise reused: a claimed entry for a missing file makes it
// scanned (nothing lost: the result is the full Build's); a wrong type
// claimed for a file that is there stays for that name alone, beside
// the injected library. Symlinks and claimed entries that point out of
// the root (absolute, through "..") are resolved inside it: the host's
// library they name is never read, by either Build.
func TestIncrementalLieInjected(t *testing.T) {
	hostDir := t.TempDir()
	require.NoError(t, elfwriter.WriteFile(filepath.Join(hostDir, "libhostonly.so.9"), x64("libhostonly.so.9"), 0o644))
	for _, tc := range []struct {
		name    string
		missing bool // the cache claims a file that is not there
	}{{"wrong-type", false}, {"missing-file", true}} {
		t.Run(tc.name, func(t *testing.T) {
			root := reuseRoot(t)
			dir := "/usr/lib/x86_64-linux-gnu"
			escape := "../../../../../../../../.." + hostDir + "/libhostonly.so.9"
			require.NoError(t, os.Symlink(escape, filepath.Join(root, dir, "libhostonly.so.9")))
			c, err := ldcache.OpenInRoot(root, "/etc/ld.so.cache")
			require.NoError(t, err, "OpenInRoot")
			flags := c.Entries[0].Flags
			for i := range c.Entries {
				if c.Entries[i].Name == "libfoo.so.1" {
					c.Entries[i].Flags = int32(ldcache.TypeLibc6) // i386, not x86-64
				}
			}
			c.Entries = append(c.Entries, ldcache.Entry{Name: "libhostonly.so.9", Path: "/../.." + hostDir + "/libhostonly.so.9", Flags: flags})
			if tc.missing {
				c.Entries = append(c.Entries, ldcache.Entry{Name: "libgone.so.1", Path: dir + "/libgone.so.1", Flags: flags})
			}
			time.Sleep(12 * time.Millisecond) // the escaping link older than the cache
			require.NoError(t, ldcache.WriteFileInRoot(root, "/etc/ld.so.cache", c), "WriteFileInRoot")
			before, err := ldcache.TakeSnapshot(root, "", []string{dir})
			require.NoError(t, err)
			writeLibs(t, root, []lib{{dir + "/libcuda.so.550", x64("libcuda.so.1")}})
			require.NoError(t, os.Symlink("libcuda.so.550", filepath.Join(root, dir, "libcuda.so.1")))
			var reused []string
			ldcache.SetReusedHook(func(d string) { reused = append(reused, d) })
			defer ldcache.SetReusedHook(nil)
			inc, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Dirs: []string{dir}, Reuse: "/etc/ld.so.cache", NoLinks: true,
				Before: before, Added: []string{dir + "/libcuda.so.550", dir + "/libcuda.so.1"}})
			require.NoError(t, err, "incremental Build")
			full, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Dirs: []string{dir}, NoLinks: true})
			require.NoError(t, err, "full Build")
			for _, c := range []*ldcache.Cache{inc, full} {
				assert.Empty(t, c.Find("libhostonly.so.9", ldcache.ArchX8664), "a library outside the root was read")
				assert.Len(t, c.Find("libcuda.so.1", ldcache.ArchX8664), 1, "the injected library")
			}
			assert.Equal(t, !tc.missing, slices.Contains(reused, dir), "%s reused (%q)", dir, reused)
			require.Len(t, inc.Entries, len(full.Entries), "incremental entries vs full")
			for i, e := range inc.Entries {
				if e.Name == "libfoo.so.1" && !tc.missing {
					assert.Equal(t, int32(ldcache.TypeLibc6), e.Flags, "the lie about libfoo.so.1 was not kept: %+v", e)
					e.Flags = full.Entries[i].Flags
				}
				assert.Equal(t, full.Entries[i], e, "entry %d: incremental vs full", i)
			}
		})
	}
}
