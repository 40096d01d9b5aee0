package tegra

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/internal/testutil"
)

func TestIsTegraAndRelease(t *testing.T) {
	h, err := fakehost.GenerateTegra(t.TempDir(), nil)
	require.NoError(t, err)
	roots := driver.Roots{Driver: h.Root, Sys: filepath.Join(h.Root, "sys")}
	ok, why := IsTegra(roots)
	assert.True(t, ok, why)
	rel, err := Release(h.Root)
	require.NoError(t, err)
	assert.Equal(t, fakehost.TegraRelease, rel)

	require.NoError(t, os.Remove(filepath.Join(h.Root, ReleaseFile)))
	ok, why = IsTegra(roots)
	assert.True(t, ok, "soc0/family says Tegra: %s", why)
	_, err = Release(h.Root)
	require.Error(t, err)
	empty := t.TempDir()
	ok, _ = IsTegra(driver.Roots{Driver: empty, Sys: empty})
	assert.False(t, ok)
}

// TestReleaseStaysInRoot: an absolute link at the root's release file or
// SoC family names a file of the root, not of the host running the test.
func TestReleaseStaysInRoot(t *testing.T) {
	outside := t.TempDir()
	testutil.BuildTree(t, outside, `
file nv_tegra_release # R36 (release), REVISION: 3.0
file family Tegra234
`)
	root := testutil.Tree(t, `
dir etc
dir sys/devices/soc0
`)
	require.NoError(t, os.Symlink(filepath.Join(outside, "nv_tegra_release"), filepath.Join(root, ReleaseFile)))
	require.NoError(t, os.Symlink(filepath.Join(outside, "family"), filepath.Join(root, "sys/devices/soc0/family")))
	_, err := Release(root)
	require.ErrorIs(t, err, os.ErrNotExist)
	ok, why := IsTegra(driver.Roots{Driver: root, Sys: filepath.Join(root, "sys")})
	assert.False(t, ok, why)
}

// TestCSVMode: CSV mode is a Tegra host without <proc>/driver/nvidia; a
// Tegra host whose procfs has the driver (Thor) and a host that is not a
// Tegra are not.
func TestCSVMode(t *testing.T) {
	for _, tc := range []struct {
		name          string
		tegra, procfs bool
		want          bool
	}{
		{"Tegra without procfs driver", true, false, true},
		{"Tegra with procfs driver", true, true, false},
		{"discrete GPU", false, true, false},
		{"neither", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			roots := driver.Roots{Driver: root, Proc: filepath.Join(root, "proc"), Sys: filepath.Join(root, "sys")}
			testutil.BuildTree(t, root, "dir etc\ndir proc\ndir sys\n")
			if tc.tegra {
				require.NoError(t, os.WriteFile(filepath.Join(root, ReleaseFile), []byte("# R36 (release), REVISION: 3.0\n"), 0o644))
			}
			if tc.procfs {
				require.NoError(t, os.MkdirAll(filepath.Join(roots.Proc, "driver/nvidia"), 0o755))
			}
			got, why := CSVMode(roots)
			assert.Equal(t, tc.want, got, why)
		})
	}
}

// TestResolve finds the simulated Orin's base files: nodes with their
// numbers (patterns expanded), libraries at the path their chain ends at,
// links of sym entries made with their content, the dir, the release
// file; a missing node is a warning. The absolute link
// /usr/lib/aarch64-linux-gnu/libnvos.so is followed inside the root.
func TestResolve(t *testing.T) {
	testutil.RequireRoot(t) // real nodes
	h, err := fakehost.GenerateTegra(t.TempDir(), &fakehost.TegraOptions{RealNodes: true})
	require.NoError(t, err)
	files, err := Files(h.Root, DefaultMountSpecPath)
	require.NoError(t, err)
	es, err := Load(h.Root, SelectFiles(files, ""))
	require.NoError(t, err)
	m, err := Resolve(es, driver.Roots{Driver: h.Root})
	require.NoError(t, err)

	var nodes []string
	for _, n := range m.Nodes {
		nodes = append(nodes, n.Path)
		assert.Equal(t, filepath.Join(h.Root, n.Path), n.Source)
	}
	assert.Equal(t, []string{"/dev/nvmap", "/dev/nvhost-ctrl-gpu", "/dev/nvhost-gpu", "/dev/nvhost-as-gpu", "/dev/nvhost-prof-gpu",
		"/dev/host1x-fence", "/dev/nvgpu/igpu0/as", "/dev/nvgpu/igpu0/channel", "/dev/nvgpu/igpu0/ctrl", "/dev/dri/card0", "/dev/dri/renderD128"}, nodes)
	assert.Equal(t, uint32(fakehost.MajorMisc), m.Nodes[0].Major)
	assert.Equal(t, uint32(121), m.Nodes[0].Minor)
	assert.Equal(t, uint32(128), m.Nodes[10].Minor)

	lib := fakehost.TegraLibDir
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
		assert.Equal(t, filepath.Join(h.Root, f.Path), f.Source)
		assert.Equal(t, f.Path == "/usr/lib/aarch64-linux-gnu/tegra-egl", f.Dir, f.Path)
	}
	assert.Equal(t, []string{lib + "/libcuda.so.1.1", lib + "/libnvidia-ptxjitcompiler.so." + fakehost.TegraRelease,
		lib + "/libnvrm_gpu.so", lib + "/libnvrm_host1x.so", lib + "/libnvrm_mem.so", lib + "/libnvos.so",
		"/usr/lib/aarch64-linux-gnu/tegra-egl", ReleaseFile}, paths)
	assert.Equal(t, []Link{
		{Path: lib + "/libcuda.so.1", Target: "libcuda.so.1.1"},
		{Path: lib + "/libcuda.so", Target: "libcuda.so.1.1"},
		{Path: "/usr/lib/aarch64-linux-gnu/libcuda.so", Target: "tegra/libcuda.so"},
		{Path: lib + "/libnvidia-ptxjitcompiler.so.1", Target: "libnvidia-ptxjitcompiler.so." + fakehost.TegraRelease},
		{Path: "/usr/lib/aarch64-linux-gnu/libnvos.so", Target: lib + "/libnvos.so"},
	}, withoutEntries(m.Links))
	require.Len(t, m.Warnings, 1)
	assert.Contains(t, m.Warnings[0], "devices.csv:7: dev, /dev/nvhost-dbg-gpu: not found")
}

// TestResolveStaysInRoot: links that climb out of the root, or point at
// an absolute host path, are read inside the root; nothing of the host
// running the test is named.
func TestResolveStaysInRoot(t *testing.T) {
	root := testutil.Tree(t, `
dir usr/lib
symlink usr/lib/up ../../../../../../etc
symlink usr/lib/abs /etc/passwd
symlink usr/lib/dirlink /etc
file etc/passwd root-of-fake
`)
	es, err := Parse(stringsReader("sym, /usr/lib/abs\nlib, /usr/lib/up/passwd\ndir, /usr/lib/dirlink\nsym, /usr/lib/missing\n"), "t.csv")
	require.NoError(t, err)
	m, err := Resolve(es, driver.Roots{Driver: root})
	require.NoError(t, err)
	for _, f := range m.Files {
		assert.Truef(t, filepath.HasPrefix(f.Source, root+"/"), "%s resolves to %s, outside the root", f.Path, f.Source)
		if !f.Dir {
			b, err := os.ReadFile(f.Source)
			require.NoError(t, err)
			assert.Equal(t, "root-of-fake", string(b))
		}
	}
	require.Len(t, m.Files, 2, "%+v", m.Files)
	assert.Equal(t, "/etc/passwd", m.Files[0].Path)
	assert.Equal(t, "/usr/lib/dirlink", m.Files[1].Path)
	assert.Equal(t, filepath.Join(root, "etc"), m.Files[1].Source)
	assert.Len(t, m.Warnings, 1, "%q", m.Warnings)
}

// TestResolvePlainNodes: stand-in files are not nodes; each is a warning.
func TestResolvePlainNodes(t *testing.T) {
	h, err := fakehost.GenerateTegra(t.TempDir(), nil)
	require.NoError(t, err)
	es, err := Load(h.Root, DefaultFiles(DefaultMountSpecPath))
	require.NoError(t, err)
	m, err := Resolve(es, driver.Roots{Driver: h.Root})
	require.NoError(t, err)
	assert.Empty(t, m.Nodes)
	assert.Len(t, m.Warnings, 12)
}

func withoutEntries(ls []Link) []Link {
	out := make([]Link, len(ls))
	for i, l := range ls {
		out[i] = Link{Path: l.Path, Target: l.Target}
	}
	return out
}

func TestParseRelease(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"# R36 (release), REVISION: 3.0, GCID: 36106755, BOARD: generic, EABI: aarch64, DATE: Thu Apr 25 03:14:05 UTC 2024", "36.3.0"},
		{"# R35 (release), REVISION: 4.1", "35.4.1"},
		{"# R32 (release), REVISION: 7.12x", "32.7.12"},
		{"# R36 (release), REVISION: 3", ""},
		{"# R36 (release), REVISION: 3.", ""},
		{"# R36 (release), REVISION: .0", ""},
		{"# Rx (release), REVISION: 3.0", ""},
		{"# R (release), REVISION: 3.0", ""},
		{"R36 (release), REVISION: 3.0", ""},
		{" # R36 (release), REVISION: 3.0", ""},
		{"# R36 (beta), REVISION: 3.0", ""},
		{"# R٣6 (release), REVISION: 3.0", ""},
		{"", ""},
	} {
		t.Run(tc.line, func(t *testing.T) {
			got, ok := parseRelease(tc.line)
			assert.Equal(t, tc.want != "", ok, "ok")
			assert.Equal(t, tc.want, got)
		})
	}
}
