package driver_test

import (
	"encoding/json"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/driver"
)

// platformLibrary reads the library_path an EGL external platform file
// names ("libnvidia-egl-gbm.so.1").
func platformLibrary(t *testing.T, hostPath string) string {
	t.Helper()
	b, err := os.ReadFile(hostPath)
	require.NoError(t, err)
	var icd struct {
		ICD struct {
			LibraryPath string `json:"library_path"`
		} `json:"ICD"`
	}
	require.NoError(t, json.Unmarshal(b, &icd), "platform file %s: %q", hostPath, b)
	require.NotEmpty(t, icd.ICD.LibraryPath, "platform file %s: %q", hostPath, b)
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
			require.NoError(t, err)
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
				lib := platformLibrary(t, f.HostPath)
				assert.True(t, libs[lib], "%s %s %s: platform file %s names %s, which is not among the libraries", h.DriverVersion, h.Layout, caps, f.Path, lib)
			}
			assert.Equal(t, 2, platforms, "%s %s %s: EGL platform files (gbm, wayland)", h.DriverVersion, h.Layout, caps)
		}
	}
}
