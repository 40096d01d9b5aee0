package driver

import (
	"debug/elf"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/internal/elfwriter"
	"github.com/go-nvc/nvc/internal/testutil"
)

// TestEGLPlatformRules: with graphics, an EGL platform library is taken
// when its file is "<name>.X.Y…" (its own version, not the driver's) and
// of the native class; a platform file is given only with its library;
// no 32-bit copies and no warnings for missing ones; none without
// graphics.
func TestEGLPlatformRules(t *testing.T) {
	r := newRuleRoot(t)
	// gbm: two passing candidates, the later one in the cache wins.
	r.lib("/a/libnvidia-egl-gbm.so.1.1.1", "libnvidia-egl-gbm.so.1", lib64("libnvidia-egl-gbm.so.1"))
	r.lib("/b/libnvidia-egl-gbm.so.1.1.2", "libnvidia-egl-gbm.so.1", lib64("libnvidia-egl-gbm.so.1"))
	// wayland: a file with one version component only.
	r.lib("/a/libnvidia-egl-wayland.so.1", "", lib64("libnvidia-egl-wayland.so.1"))
	r.link("/a/libnvidia-egl-wayland.so.1.key", "libnvidia-egl-wayland.so.1", true)
	// xcb: a native entry leading to a 32-bit object.
	r.lib("/a/libnvidia-egl-xcb.so.1.0.0", "libnvidia-egl-xcb.so.1", &elfwriter.Object{Class: elf.ELFCLASS32, Machine: elf.EM_386, Soname: "libnvidia-egl-xcb.so.1"})
	r.entries[len(r.entries)-1].Flags = 0x0303
	// xlib: a 32-bit copy only.
	r.lib("/c/libnvidia-egl-xlib.so.1.0.0", "libnvidia-egl-xlib.so.1", &elfwriter.Object{Class: elf.ELFCLASS32, Machine: elf.EM_386, Soname: "libnvidia-egl-xlib.so.1"})
	var spec strings.Builder
	for _, p := range eglPlatforms {
		spec.WriteString("file usr/share/" + p.config + " {}\n")
	}
	testutil.BuildTree(t, r.root, spec.String())
	d := r.open(Options{})

	fs, err := d.Files(capabilities.Of(capabilities.Graphics, capabilities.Compat32))
	require.NoError(t, err)
	assert.Equal(t, "/b/libnvidia-egl-gbm.so.1.1.2", libPaths(fs.Libraries)["libnvidia-egl-gbm.so"], "gbm: selected")
	var libs, configs []string
	for _, f := range fs.Libraries {
		if strings.HasPrefix(f.Name, "libnvidia-egl-") {
			libs = append(libs, f.Name+"="+f.Soname)
		}
	}
	for _, f := range fs.Configs {
		if strings.Contains(f.Path, "egl_external_platform.d") {
			configs = append(configs, f.Path)
		}
	}
	assert.Equal(t, []string{"libnvidia-egl-gbm.so=libnvidia-egl-gbm.so.1"}, libs, "EGL platform libraries")
	assert.Equal(t, []string{"/usr/share/egl/egl_external_platform.d/15_nvidia_gbm.json"}, configs, "EGL platform files (only those whose library was found)")
	for _, f := range fs.Libraries32 {
		assert.False(t, strings.HasPrefix(f.Name, "libnvidia-egl-"), "32-bit EGL platform library given: %+v", f)
	}
	for _, w := range fs.Warnings {
		assert.False(t, strings.HasPrefix(w.Name, "libnvidia-egl-"), "warning for an EGL platform library: %s", w)
	}
	fs, _ = d.Files(capabilities.Of(capabilities.Compute, capabilities.Utility))
	for _, f := range fs.All() {
		assert.NotContains(t, f.Path, "egl", "without graphics: %+v", f)
	}
}
