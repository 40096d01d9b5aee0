package devices

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/tegrahost"
	"github.com/go-nvc/nvc/internal/testutil"
)

// TestModulesToLoadTegra: without a PCI GPU, --load-kmods loads
// nvidia_modeset on exactly the hosts the module's one Tegra rule
// (internal/tegrahost, tegra.IsTegra) calls Tegra. Before it, devices
// wanted a family of exactly "Tegra" and ignored the release file.
func TestModulesToLoadTegra(t *testing.T) {
	for _, tc := range []struct {
		name           string
		release        bool
		family, drvSys string
		want           []string
	}{
		{name: "release file", release: true, want: []string{"nvidia_modeset"}},
		{name: "family Tegra", family: "Tegra\n", want: []string{"nvidia_modeset"}},
		{name: "family tegra234", family: "tegra234\n", want: []string{"nvidia_modeset"}},
		{name: "family Orin", family: "Orin\n"},
		{name: "family under the driver root only", drvSys: "Tegra\n"},
		{name: "nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			roots := driver.Roots{Driver: testutil.Tree(t, "dir etc\n"), Sys: testutil.Tree(t, "dir bus/pci/devices\ndir devices/soc0\n")}
			if tc.release {
				require.NoError(t, os.WriteFile(filepath.Join(roots.Driver, tegrahost.ReleaseFile), []byte("# R36 (release), REVISION: 3.0\n"), 0o644))
			}
			if tc.family != "" {
				require.NoError(t, os.WriteFile(filepath.Join(roots.Sys, tegrahost.FamilyFile), []byte(tc.family), 0o444))
			}
			if tc.drvSys != "" {
				testutil.BuildTree(t, roots.Driver, "dir sys/devices/soc0\n")
				require.NoError(t, os.WriteFile(filepath.Join(roots.Driver, "sys", tegrahost.FamilyFile), []byte(tc.drvSys), 0o444))
			}
			r := &NodeReport{}
			got := modulesToLoad(roots.WithDefaults(), map[string]bool{}, r)
			assert.Equal(t, tc.want, got, "warnings %q", r.Warnings)
		})
	}
}
