package driver

import (
	"debug/elf"
	"slices"
	"strings"
	"testing"

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
	if err != nil {
		t.Fatal(err)
	}
	if got, want := libPaths(fs.Libraries)["libnvidia-egl-gbm.so"], "/b/libnvidia-egl-gbm.so.1.1.2"; got != want {
		t.Errorf("gbm: selected %q, want %q", got, want)
	}
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
	if want := []string{"libnvidia-egl-gbm.so=libnvidia-egl-gbm.so.1"}; !slices.Equal(libs, want) {
		t.Errorf("EGL platform libraries %q, want %q", libs, want)
	}
	if want := []string{"/usr/share/egl/egl_external_platform.d/15_nvidia_gbm.json"}; !slices.Equal(configs, want) {
		t.Errorf("EGL platform files %q, want %q (only those whose library was found)", configs, want)
	}
	for _, f := range fs.Libraries32 {
		if strings.HasPrefix(f.Name, "libnvidia-egl-") {
			t.Errorf("32-bit EGL platform library given: %+v", f)
		}
	}
	for _, w := range fs.Warnings {
		if strings.HasPrefix(w.Name, "libnvidia-egl-") {
			t.Errorf("warning for an EGL platform library: %s", w)
		}
	}
	fs, _ = d.Files(capabilities.Of(capabilities.Compute, capabilities.Utility))
	for _, f := range fs.All() {
		if strings.Contains(f.Path, "egl") {
			t.Errorf("without graphics: %+v", f)
		}
	}
}
