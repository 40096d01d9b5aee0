package nvcli_test

import (
	"bytes"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/nvcontainer/nvcli"
)

// TestWriteVersion: the seven lines of --version; lib-version is this
// module's version, also when the program is another module's.
func TestWriteVersion(t *testing.T) {
	settings := []debug.BuildSetting{{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.revision", Value: "abc123"},
		{Key: "-compiler", Value: "gc"}, {Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
		{Key: "CGO_ENABLED", Value: "0"}, {Key: "-trimpath", Value: "true"}}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "cli-version: (devel)\nlib-version: (devel) (github.com/go-nvc/nvc)\nbuild date: unknown\n" +
			"build revision: unknown\nbuild compiler: \nbuild platform: /\nbuild flags: \n"},
		{"this module", &debug.BuildInfo{Main: debug.Module{Path: "github.com/go-nvc/nvc", Version: "v1.2.3"}, Settings: settings},
			"cli-version: v1.2.3\nlib-version: v1.2.3 (github.com/go-nvc/nvc)\nbuild date: 2026-01-02T03:04:05Z\n" +
				"build revision: abc123\nbuild compiler: gc\nbuild platform: linux/arm64\nbuild flags: CGO_ENABLED=0 -trimpath=true\n"},
		{"a dependency", &debug.BuildInfo{Main: debug.Module{Path: "example.com/cli", Version: "v0.1.0"},
			Deps: []*debug.Module{{Path: "github.com/go-nvc/nvc", Version: "v1.4.0"}}},
			"cli-version: v0.1.0\nlib-version: v1.4.0 (github.com/go-nvc/nvc)\n"},
		{"a replaced dependency", &debug.BuildInfo{Main: debug.Module{Path: "example.com/cli", Version: "v0.1.0"},
			Deps: []*debug.Module{{Path: "github.com/go-nvc/nvc", Version: "v1.4.0", Replace: &debug.Module{Path: "../nvc"}}}},
			"cli-version: v0.1.0\nlib-version: (devel) (github.com/go-nvc/nvc)\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, nvcli.WriteVersion(&b, tc.bi))
			if tc.bi == nil || tc.bi.Deps == nil {
				assert.Equal(t, tc.want, b.String())
				return
			}
			assert.Equal(t, tc.want, b.String()[:len(tc.want)])
			assert.Equal(t, 7, bytes.Count(b.Bytes(), []byte("\n")), "lines")
		})
	}
}
