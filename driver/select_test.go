package driver

import (
	"debug/elf"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/ldcache"
)

const testVer = "550.54.15"

// ruleRoot is a driver root for selection rules: a dir per candidate, a
// cache listing candidates in the order given.
type ruleRoot struct {
	t       *testing.T
	root    string
	entries []ldcache.Entry
}

func newRuleRoot(t *testing.T) *ruleRoot {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	testutil.BuildTree(t, root, "dir etc\n")
	return &ruleRoot{t: t, root: root}
}

// lib writes an ELF file at p (inside the root) and, when link is set, a
// cache entry link -> p in p's dir.
func (r *ruleRoot) lib(p, link string, o *elfwriter.Object) {
	r.t.Helper()
	full := filepath.Join(r.root, p)
	require.NoError(r.t, os.MkdirAll(filepath.Dir(full), 0o755))
	if o != nil {
		require.NoError(r.t, elfwriter.WriteFile(full, o, 0o644))
	}
	if link != "" {
		r.link(filepath.Join(filepath.Dir(p), link), filepath.Base(p), o == nil || o.Class != elf.ELFCLASS32)
	}
}

// link writes a symlink at p to target and a cache entry for it.
func (r *ruleRoot) link(p, target string, native bool) {
	r.t.Helper()
	require.NoError(r.t, os.Symlink(target, filepath.Join(r.root, p)))
	flags := int32(0x0303)
	if !native {
		flags = 0x0003
	}
	r.entries = append(r.entries, ldcache.Entry{Name: filepath.Base(p), Path: p, Flags: flags})
}

func (r *ruleRoot) open(o Options) *Driver {
	r.t.Helper()
	require.NoError(r.t, ldcache.WriteFile(filepath.Join(r.root, "etc/ld.so.cache"), &ldcache.Cache{Entries: r.entries}))
	proc := testutil.Tree(r.t, "file driver/nvidia/version \"NVRM version: NVIDIA UNIX x86_64 Kernel Module  "+testVer+"  Tue Mar  5 22:23:56 UTC 2024\\n\"\n")
	o.Roots.Driver, o.Roots.Proc, o.GOARCH = r.root, proc, "amd64"
	if o.Roots.Dev == "" {
		o.Roots.Dev = r.t.TempDir()
	}
	d, err := Open(&o)
	require.NoError(r.t, err)
	return d
}

func lib64(soname string, needed ...string) *elfwriter.Object {
	return elfwriter.Library(soname, needed...)
}

// libPaths maps each selected library's list name to its path.
func libPaths(fs []File) map[string]string {
	m := make(map[string]string)
	for _, f := range fs {
		m[f.Name] = f.Path
	}
	return m
}

// TestSelectionRules checks each rule of libnvidia-container's
// select_libraries on candidates built for it, in cache order.
func TestSelectionRules(t *testing.T) {
	r := newRuleRoot(t)
	v := "." + testVer
	// Two passing candidates: the later one in the cache wins.
	r.lib("/a/libcuda.so"+v, "libcuda.so.1", lib64("libcuda.so.1"))
	r.lib("/b/libcuda.so"+v, "libcuda.so.1", lib64("libcuda.so.1"))
	// GL compat: the later candidate lacks libnvidia-glcore and loses.
	r.lib("/a/libGL.so"+v, "libGL.so.1", lib64("libGL.so.1", "libnvidia-glcore.so"+v))
	r.lib("/b/libGL.so"+v, "libGL.so.1", lib64("libGL.so.1", "libglapi.so.0"))
	r.lib("/a/libEGL.so"+v, "libEGL.so.1", lib64("libEGL.so.1", "libnvidia-eglcore.so"+v))
	r.lib("/a/libGLESv2.so"+v, "libGLESv2.so.2", lib64("libGLESv2.so.2"))
	// TLS: the later candidate lacks the 2.3.99 note and loses.
	tls := lib64("libnvidia-tls.so" + v)
	tls.ABITag = &elfwriter.ABITag{Major: 2, Minor: 3, Patch: 99}
	r.lib("/a/libnvidia-tls.so"+v, "", tls)
	r.link("/a/libnvidia-tls.so"+v+".key", "libnvidia-tls.so"+v, true)
	r.lib("/b/libnvidia-tls.so"+v, "", lib64("libnvidia-tls.so"+v))
	r.link("/b/libnvidia-tls.so"+v+".key", "libnvidia-tls.so"+v, true)
	// The version is checked on the file the entry leads to.
	r.lib("/a/libnvidia-ml.so"+v+".orig", "libnvidia-ml.so.1", lib64("libnvidia-ml.so.1"))
	// A native entry leading to a 32-bit object.
	r.lib("/a/libnvidia-encode.so"+v, "libnvidia-encode.so.1", &elfwriter.Object{Class: elf.ELFCLASS32, Machine: elf.EM_386, Soname: "libnvidia-encode.so.1"})
	r.entries[len(r.entries)-1].Flags = 0x0303
	// Not ELF; a directory; a link out of the root (".." stops at it).
	testutil.BuildTree(t, r.root, "file a/libnvidia-fbc.so"+v+" text\ndir a/libnvidia-ifr.so"+v+"\n")
	r.link("/a/libnvidia-fbc.so.1", "libnvidia-fbc.so"+v, true)
	r.link("/a/libnvidia-ifr.so.1", "libnvidia-ifr.so"+v, true)
	require.NoError(t, elfwriter.WriteFile(filepath.Join(r.root, "../libnvidia-cfg.so"+v), lib64("libnvidia-cfg.so.1"), 0o644))
	r.link("/a/libnvidia-cfg.so.1", "../../libnvidia-cfg.so"+v, true)
	d := r.open(Options{NoGLVND: true})

	fs, err := d.Files(capabilities.All)
	require.NoError(t, err)
	got := libPaths(fs.Libraries)
	want := map[string]string{
		"libcuda.so":       "/b/libcuda.so" + v,
		"libGL.so":         "/a/libGL.so" + v,
		"libEGL.so":        "/a/libEGL.so" + v,
		"libnvidia-tls.so": "/a/libnvidia-tls.so" + v,
	}
	for name, p := range want {
		assert.Equal(t, p, got[name], "%s: selected", name)
	}
	for _, name := range []string{"libGLESv2.so", "libnvidia-ml.so", "libnvidia-encode.so", "libnvidia-fbc.so", "libnvidia-ifr.so", "libnvidia-cfg.so"} {
		assert.NotContains(t, got, name, "%s: selected, want none", name)
		assert.Contains(t, fs.Warnings, Warning{Kind: Library, Name: name}, "%s: no warning", name)
	}
	assert.Len(t, got, len(want), "selected %v", got)
}

// TestSelectionWSL: on WSL the first candidate is taken unchecked, later
// ones replace it, except that one from /usr/lib/wsl/lib stays; libdxcore is
// looked up whatever the capabilities; firmware is not looked up.
func TestSelectionWSL(t *testing.T) {
	r := newRuleRoot(t)
	r.lib("/usr/lib/wsl/lib/libcuda.so.1.1", "libcuda.so.1", lib64("libcuda.so.1"))
	r.lib("/usr/lib/x86_64-linux-gnu/libcuda.so"+"."+testVer, "libcuda.so.1", lib64("libcuda.so.1"))
	r.lib("/usr/lib/wsl/lib/libdxcore.so", "", lib64(""))
	r.link("/usr/lib/wsl/lib/libdxcore.so.key", "libdxcore.so", true)
	r.lib("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "", nil)
	testutil.BuildTree(t, r.root, "file opt/x/libnvidia-ml.so.9 not-elf\nfile opt/y/libnvidia-ml.so.8 not-elf\nfile usr/lib/wsl/drivers/nv_dispi.inf_amd64_1/nvidia-smi 0755\n")
	r.link("/opt/x/libnvidia-ml.so.1", "libnvidia-ml.so.9", true)
	r.link("/opt/y/libnvidia-ml.so.1", "libnvidia-ml.so.8", true)
	d := r.open(Options{Roots: Roots{Dev: testutil.Tree(t, "file dxg\n")}})
	require.True(t, d.WSL(), "WSL not detected")
	fs, err := d.Files(capabilities.Of(capabilities.Utility))
	require.NoError(t, err)
	got := libPaths(fs.Libraries)
	want := map[string]string{
		"libnvidia-ml.so": "/opt/y/libnvidia-ml.so.8",
		"libdxcore.so":    "/usr/lib/wsl/lib/libdxcore.so",
	}
	assert.Equal(t, want, got, "utility on WSL selected")
	if assert.NotEmpty(t, fs.Binaries, "nvidia-smi on WSL") {
		assert.Equal(t, "/usr/lib/wsl/drivers/nv_dispi.inf_amd64_1/nvidia-smi", fs.Binaries[0].Path, "nvidia-smi on WSL: %+v", fs.Binaries)
	}
	fs, _ = d.Files(capabilities.Of(capabilities.Compute))
	assert.Equal(t, "/usr/lib/wsl/lib/libcuda.so.1.1", libPaths(fs.Libraries)["libcuda.so"], "libcuda on WSL")
	assert.Empty(t, fs.Firmware, "firmware looked up on WSL")
	assert.False(t, slices.ContainsFunc(fs.Warnings, func(w Warning) bool { return w.Kind == Firmware }), "firmware looked up on WSL: %v", fs.Warnings)
}

// TestEmulatedResolution runs the rules again with filepath-securejoin's
// emulation instead of openat2, as on kernels before 5.6.
func TestEmulatedResolution(t *testing.T) {
	r := newRuleRoot(t)
	v := "." + testVer
	r.lib("/a/libcuda.so"+v, "libcuda.so.1", lib64("libcuda.so.1"))
	r.lib("/b/libcuda.so"+v, "libcuda.so.1", lib64("libcuda.so.1"))
	require.NoError(t, elfwriter.WriteFile(filepath.Join(r.root, "../libnvidia-cfg.so"+v), lib64("libnvidia-cfg.so.1"), 0o644))
	r.link("/a/libnvidia-cfg.so.1", "/../../libnvidia-cfg.so"+v, true)
	d := r.open(Options{})
	for _, emulate := range []bool{false, true} {
		rd, err := openRoot(d.root)
		require.NoError(t, err)
		rd.noOpenat2 = emulate
		fs := d.filesIn(rd, capabilities.All)
		rd.close()
		got := libPaths(fs.Libraries)
		assert.Equal(t, map[string]string{"libcuda.so": "/b/libcuda.so" + v}, got, "emulated=%v: selected", emulate)
	}
}

func TestParseNVRMLine(t *testing.T) {
	for in, want := range map[string]string{
		"NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 12.2.0\n":                     "550.54.15",
		"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  560.35.03  Release Build  (dvs-builder@U16-I3-B03-4-3)  Fri Aug 16 21:42:42 UTC 2024\n": "560.35.03",
		"NVRM version: NVIDIA UNIX aarch64 Kernel Module  390.157  Wed Oct 12 09:19:07 UTC 2022\n":                                                        "390.157",
		"GCC version: 12\nNVRM version: NVIDIA UNIX x86_64 Kernel Module  535.161.08  Tue Mar  5 22:23:56 UTC 2024\n":                                     "535.161.08",
		"NVRM version: NVIDIA UNIX x86_64 Kernel Module\n":                                                                                                "",
		"nothing here\n": "",
		// The rows of package devices' former parser: package driver alone
		// reads the version.
		"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 2025\n": "570.86.15",
		"NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.104.05  Sat Aug 19 01:13:45 UTC 2023\n":                                        "535.104.05",
		"":                      "",
		"NVRM version: none\n":  "",
		"GCC version: 12.2.0\n": "",
	} {
		t.Run(in, func(t *testing.T) {
			got, ok := parseNVRMLine([]byte(in))
			assert.Equal(t, want, got, "parseNVRMLine(%q)", in)
			assert.Equal(t, want != "", ok, "parseNVRMLine(%q): ok", in)
		})
	}
}

func FuzzParseNVRMLine(f *testing.F) {
	f.Add([]byte("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, ok := parseNVRMLine(data)
		require.Equal(t, ok, v != "", "result %q, ok %v", v, ok)
		if ok {
			require.True(t, isVersion(v), "result %q", v)
		}
	})
}

// TestListNames checks the index's premise: no list name holds ".so" but
// at its end, and none is a prefix of another, so the first ".so" of a key
// names the one list entry libnvidia-container's prefix scan would match.
func TestListNames(t *testing.T) {
	all := allLibraryNames()
	for _, n := range all {
		got, ok := listName(n)
		assert.True(t, ok, "list name %q: first .so is not its end", n)
		assert.Equal(t, n, got, "list name %q: first .so is not its end", n)
		for _, m := range all {
			if m != n {
				assert.False(t, strings.HasPrefix(m, n), "list name %q is a prefix of %q", n, m)
			}
		}
	}
	for key, want := range map[string]string{"libcuda.so.1": "libcuda.so", "libcuda.so": "libcuda.so", "libGLX_nvidia.so.0": "libGLX_nvidia.so"} {
		got, _ := listName(key)
		assert.Equal(t, want, got, "listName(%q)", key)
	}
}
