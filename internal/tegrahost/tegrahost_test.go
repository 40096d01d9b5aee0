package tegrahost_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/tegrahost"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/tegra"
)

// A Rule row is a host: what its driver root holds at
// /etc/nv_tegra_release and its sysfs root at devices/soc0/family.
type ruleRow struct {
	name string
	// release: "file", "dir", "outside" (an absolute link to a file
	// outside the driver root) or "" (none).
	release string
	// family is the sysfs root's soc0/family; driverSys the same file
	// under <driver root>/sys instead (not the sysfs root).
	family, driverSys string
	want              bool
}

// rules pins the one rule. Before it, tegra.IsTegra(root) read the family
// under <root>/sys, case-insensitively, without trimming, and
// devices.isTegra(sys) only a family of exactly "Tegra" (trimmed), never
// the release file; the rows marked disagree were answered differently
// by the two (or wrongly by both).
var rules = []ruleRow{
	{name: "release file", release: "file", want: true},                            // disagree: devices said no
	{name: "family Tegra", family: "Tegra\n", want: true},                          // both yes
	{name: "family tegra234", family: "tegra234\n", want: true},                    // disagree: devices said no
	{name: "family TEGRA", family: "TEGRA", want: true},                            // disagree: devices said no
	{name: "family after space", family: "  Tegra\n", want: true},                  // disagree: tegra said no
	{name: "family Orin", family: "Orin\n", want: false},                           // both no
	{name: "family NVIDIA Tegra", family: "NVIDIA Tegra\n", want: false},           // both no
	{name: "family under the driver root only", driverSys: "Tegra\n", want: false}, // disagree: tegra said yes
	{name: "release a directory", release: "dir", want: false},
	{name: "release a link out of the root", release: "outside", want: false},
	{name: "nothing", want: false},
}

func (r ruleRow) build(t *testing.T) driver.Roots {
	t.Helper()
	roots := driver.Roots{Driver: testutil.Tree(t, "dir etc\n"), Sys: testutil.Tree(t, "dir devices/soc0\n")}
	rel := filepath.Join(roots.Driver, tegrahost.ReleaseFile)
	switch r.release {
	case "file":
		require.NoError(t, os.WriteFile(rel, []byte("# R36 (release), REVISION: 3.0\n"), 0o644))
	case "dir":
		require.NoError(t, os.Mkdir(rel, 0o755))
	case "outside":
		out := filepath.Join(t.TempDir(), "nv_tegra_release")
		require.NoError(t, os.WriteFile(out, []byte("# R36 (release), REVISION: 3.0\n"), 0o644))
		require.NoError(t, os.Symlink(out, rel))
	}
	if r.family != "" {
		require.NoError(t, os.WriteFile(filepath.Join(roots.Sys, tegrahost.FamilyFile), []byte(r.family), 0o444))
	}
	if r.driverSys != "" {
		testutil.BuildTree(t, roots.Driver, "dir sys/devices/soc0\n")
		require.NoError(t, os.WriteFile(filepath.Join(roots.Driver, "sys", tegrahost.FamilyFile), []byte(r.driverSys), 0o444))
	}
	return roots
}

// TestIsTegraRule: tegrahost.IsTegra and tegra.IsTegra (which devices'
// --load-kmods and tegra.CSVMode use) answer every row alike.
func TestIsTegraRule(t *testing.T) {
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			roots := r.build(t)
			got, why := tegrahost.IsTegra(roots.Driver, roots.Sys)
			assert.Equal(t, r.want, got, why)
			got, why = tegra.IsTegra(roots)
			assert.Equal(t, r.want, got, "tegra.IsTegra: %s", why)
		})
	}
}
