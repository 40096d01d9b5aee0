package driver_test

import (
	"encoding/json"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
)

// platformLibrary reads the library_path an EGL external platform file
// names ("libnvidia-egl-gbm.so.1").
func platformLibrary(t *testing.T, hostPath string) string {
	t.Helper()
	b, err := os.ReadFile(hostPath)
	if err != nil {
		t.Fatal(err)
	}
	var icd struct {
		ICD struct {
			LibraryPath string `json:"library_path"`
		} `json:"ICD"`
	}
	if err := json.Unmarshal(b, &icd); err != nil || icd.ICD.LibraryPath == "" {
		t.Fatalf("platform file %s: %v, %q", hostPath, err, b)
	}
	return icd.ICD.LibraryPath
}

// TestEGLPlatformFilesHaveLibraries: with graphics, on the generated
// hosts, each EGL external platform file Files gives names a library
// Files also gives, by its SONAME (the name a plan links beside each
// library it mounts); before, the files came alone and pointed at
// libraries the container lacked. The toolkit mounts both.
func TestEGLPlatformFilesHaveLibraries(t *testing.T) {
	for _, o := range hosts {
		for _, caps := range []capabilities.Set{capabilities.Of(capabilities.Graphics), capabilities.Of(capabilities.Display), capabilities.All} {
			h, d := generate(t, o, driver.Options{})
			fs, err := d.Files(caps)
			if err != nil {
				t.Fatal(err)
			}
			libs := map[string]bool{}
			for _, f := range fs.Libraries {
				libs[f.Soname], libs[path.Base(f.Path)] = true, true
			}
			platforms := 0
			for _, f := range fs.Configs {
				if !strings.Contains(f.Path, "/egl_external_platform.d/") {
					continue
				}
				platforms++
				if lib := platformLibrary(t, f.HostPath); !libs[lib] {
					t.Errorf("%s %s %s: platform file %s names %s, which is not among the libraries", h.DriverVersion, h.Layout, caps, f.Path, lib)
				}
			}
			if platforms != 2 {
				t.Errorf("%s %s %s: %d EGL platform files, want 2 (gbm, wayland)", h.DriverVersion, h.Layout, caps, platforms)
			}
		}
	}
}
