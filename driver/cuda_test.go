package driver_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/fakehost"
)

// publishedTable is NVIDIA's "CUDA Toolkit and Corresponding Driver
// Versions" (Linux x86_64 column) as the CUDA Toolkit release notes print
// it, rows through 13.2 Update 2 from the 13.2 Update 2 notes and the
// 13.3 rows from the 13.3 Update 1 notes: toolkit release, its driver.
// It is written out again here, apart from the package's copy, so that a
// typo in one shows.
const publishedTable = `
CUDA 13.3 Update 1 | >=610.43.02
CUDA 13.3 GA | >=610.43.02
CUDA 13.2 Update 2 | >=595.71.05
CUDA 13.2 Update 1 | >=595.58.03
CUDA 13.2 GA | >=595.45.04
CUDA 13.1 Update 1 | >=590.48.01
CUDA 13.1 GA | >=590.44.01
CUDA 13.0 Update 2 | >=580.95.05
CUDA 13.0 Update 1 | >=580.82.07
CUDA 13.0 GA | >=580.65.06
CUDA 12.9 Update 1 | >=575.57.08
CUDA 12.9 GA | >=575.51.03
CUDA 12.8 Update 1 | >=570.124.06
CUDA 12.8 GA | >=570.26
CUDA 12.6 Update 3 | >=560.35.05
CUDA 12.6 Update 2 | >=560.35.03
CUDA 12.6 Update 1 | >=560.35.03
CUDA 12.6 GA | >=560.28.03
CUDA 12.5 Update 1 | >=555.42.06
CUDA 12.5 GA | >=555.42.02
CUDA 12.4 Update 1 | >=550.54.15
CUDA 12.4 GA | >=550.54.14
CUDA 12.3 Update 1 | >=545.23.08
CUDA 12.3 GA | >=545.23.06
CUDA 12.2 Update 2 | >=535.104.05
CUDA 12.2 Update 1 | >=535.86.09
CUDA 12.2 GA | >=535.54.03
CUDA 12.1 Update 1 | >=530.30.02
CUDA 12.1 GA | >=530.30.02
CUDA 12.0 Update 1 | >=525.85.12
CUDA 12.0 GA | >=525.60.13
CUDA 11.8 GA | >=520.61.05
CUDA 11.7 Update 1 | >=515.48.07
CUDA 11.7 GA | >=515.43.04
CUDA 11.6 Update 2 | >=510.47.03
CUDA 11.6 Update 1 | >=510.47.03
CUDA 11.6 GA | >=510.39.01
CUDA 11.5 Update 2 | >=495.29.05
CUDA 11.5 Update 1 | >=495.29.05
CUDA 11.5 GA | >=495.29.05
CUDA 11.4 Update 4 | >=470.82.01
CUDA 11.4 Update 3 | >=470.82.01
CUDA 11.4 Update 2 | >=470.57.02
CUDA 11.4 Update 1 | >=470.57.02
CUDA 11.4.0 GA | >=470.42.01
CUDA 11.3.1 Update 1 | >=465.19.01
CUDA 11.3.0 GA | >=465.19.01
CUDA 11.2.2 Update 2 | >=460.32.03
CUDA 11.2.1 Update 1 | >=460.32.03
CUDA 11.2.0 GA | >=460.27.03
CUDA 11.1.1 Update 1 | >=455.32
CUDA 11.1 GA | >=455.23
CUDA 11.0.3 Update 1 | >= 450.51.06
CUDA 11.0.2 GA | >= 450.51.05
CUDA 11.0.1 RC | >= 450.36.06
CUDA 10.2.89 | >= 440.33
CUDA 10.1 (10.1.105 general release, and updates) | >= 418.39
CUDA 10.0.130 | >= 410.48
CUDA 9.2 (9.2.148 Update 1) | >= 396.37
CUDA 9.2 (9.2.88) | >= 396.26
CUDA 9.1 (9.1.85) | >= 390.46
CUDA 9.0 (9.0.76) | >= 384.81
CUDA 8.0 (8.0.61 GA2) | >= 375.26
CUDA 8.0 (8.0.44) | >= 367.48
CUDA 7.5 (7.5.16) | >= 352.31
CUDA 7.0 (7.0.28) | >= 346.46
`

// publishedRow is one row: the CUDA MAJOR.MINOR its toolkit column names
// and its driver.
type publishedRow struct{ label, cuda, driver string }

func publishedRows(t *testing.T) []publishedRow {
	var rows []publishedRow
	for _, line := range strings.Split(strings.TrimSpace(publishedTable), "\n") {
		label, drv, ok := strings.Cut(line, " | ")
		require.True(t, ok, "bad row %q", line)
		f := strings.Fields(strings.TrimPrefix(label, "CUDA "))
		parts := strings.Split(f[0], ".")
		rows = append(rows, publishedRow{label, parts[0] + "." + parts[1], strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(drv), ">="))})
	}
	return rows
}

// TestCUDAVersionForDriverPublished: every row's driver maps to its
// toolkit's CUDA version, and the driver just below it (last number minus
// one) to an older one, the previous row's when the row starts a CUDA
// version. Only the newest driver's answer is a lower bound.
func TestCUDAVersionForDriverPublished(t *testing.T) {
	rows := publishedRows(t)
	require.Len(t, rows, 66, "rows parsed")
	for i, r := range rows {
		t.Run(r.label, func(t *testing.T) {
			newest := r.driver == rows[0].driver
			v, atLeast, err := driver.CUDAVersionForDriver(r.driver)
			assert.NoError(t, err, "CUDAVersionForDriver(%s)", r.driver)
			assert.Equal(t, r.cuda, v, "CUDAVersionForDriver(%s)", r.driver)
			assert.Equal(t, newest, atLeast, "CUDAVersionForDriver(%s): at least", r.driver)
			below := justBelow(r.driver)
			older := ""
			for _, o := range rows[i+1:] {
				if o.driver != r.driver {
					older = o.cuda
					break
				}
			}
			v, _, err = driver.CUDAVersionForDriver(below)
			if older == "" {
				assert.ErrorIs(t, err, driver.ErrUnknownCUDAVersion, "CUDAVersionForDriver(%s) = %q", below, v)
				return
			}
			assert.NoError(t, err, "CUDAVersionForDriver(%s)", below)
			assert.Equal(t, older, v, "CUDAVersionForDriver(%s)", below)
		})
	}
}

// justBelow is the version before v: its last number minus one, written
// as wide (550.54.14 → 550.54.13, 570.26 → 570.25, 346.46 → 346.45).
func justBelow(v string) string {
	parts := strings.Split(v, ".")
	last := parts[len(parts)-1]
	n, err := strconv.Atoi(last)
	if err != nil || n == 0 {
		panic("justBelow: " + v) // not in the table
	}
	parts[len(parts)-1] = fmt.Sprintf("%0*d", len(last), n-1)
	return strings.Join(parts, ".")
}

// TestCUDAVersionForDriverBetween: drivers between rows, beyond the last
// row and before the first, and malformed versions.
func TestCUDAVersionForDriverBetween(t *testing.T) {
	for _, tc := range []struct {
		nvrm, cuda string
		atLeast    bool
	}{
		{"550.54.14", "12.4", false},
		{"550.127.05", "12.4", false}, // a later 550 driver
		{"550.40.07", "12.3", false},  // a 550 beta, older than 12.4's driver: conservative
		{"535.230.02", "12.2", false}, // an R535 long-term driver
		{"565.57.01", "12.6", false},  // R565 reports 12.7, which no toolkit is
		{"570.26.0", "12.8", false},   // a trailing zero is 570.26
		{"570.86.10", "12.8", false},  // between 12.8 GA and Update 1
		{"580.105.08", "13.0", false}, // between 13.0 Update 2 and 13.1
		{"470.256.02", "11.4", false}, // the last R470 drivers
		{"418.87.00", "10.1", false},  // leading zeros
		{"346.46", "7.0", false},      // the first row
		{"610.43.02", "13.3", true},   // the last row
		{"616.10", "13.3", true},      // beyond: R616 is CUDA 13.4, unlisted
		{"999.99.99", "13.3", true},   // far beyond
		{"1000.1", "13.3", true},      // a fourth digit in the branch
	} {
		t.Run(tc.nvrm, func(t *testing.T) {
			v, atLeast, err := driver.CUDAVersionForDriver(tc.nvrm)
			assert.NoError(t, err, "CUDAVersionForDriver(%s)", tc.nvrm)
			assert.Equal(t, tc.cuda, v, "CUDAVersionForDriver(%s)", tc.nvrm)
			assert.Equal(t, tc.atLeast, atLeast, "CUDAVersionForDriver(%s): at least", tc.nvrm)
		})
	}
	for _, nvrm := range []string{"346.45", "340.108", "", "550", "550.54.x", "v550.54.15", "550..54", "99999999999999999999.1"} {
		t.Run("unknown "+nvrm, func(t *testing.T) {
			v, _, err := driver.CUDAVersionForDriver(nvrm)
			assert.Empty(t, v, "CUDAVersionForDriver(%q)", nvrm)
			if assert.ErrorIs(t, err, driver.ErrUnknownCUDAVersion, "CUDAVersionForDriver(%q)", nvrm) {
				assert.ErrorContains(t, err, nvrm, "CUDAVersionForDriver(%q): want the version named", nvrm)
			}
		})
	}
}

// TestCUDAInfo: NVML's CUDA version when NVML is given, the table's for
// the procfs version without it.
func TestCUDAInfo(t *testing.T) {
	h, err := fakehost.Generate(t.TempDir(), &fakehost.Options{DriverVersion: "535.161.08"})
	require.NoError(t, err)
	d := open(t, driver.Options{Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}})
	c, err := d.CUDAInfo()
	assert.NoError(t, err, "procfs: CUDAInfo")
	assert.Equal(t, driver.CUDAInfo{Version: "12.2", Source: driver.CUDAFromTable}, c, "procfs: CUDAInfo; want 12.2 from the table")
	d = open(t, driver.Options{Roots: driver.Roots{Driver: h.Root, Proc: h.ProcRoot, Dev: h.DevRoot}, NVML: h.NVML})
	c, err = d.CUDAInfo()
	assert.NoError(t, err, "NVML: CUDAInfo")
	assert.Equal(t, driver.CUDAInfo{Version: h.CUDAVersion, Source: driver.CUDAFromNVML}, c, "NVML: CUDAInfo; want the version from NVML")
	old, err := fakehost.Generate(t.TempDir(), &fakehost.Options{DriverVersion: "340.108"})
	require.NoError(t, err)
	d = open(t, driver.Options{Roots: driver.Roots{Driver: old.Root, Proc: old.ProcRoot, Dev: old.DevRoot}})
	c, err = d.CUDAInfo()
	if assert.ErrorIs(t, err, driver.ErrUnknownCUDAVersion, "a driver older than the table: CUDAInfo %+v", c) {
		assert.ErrorContains(t, err, "no NVML", "a driver older than the table: CUDAInfo")
		assert.ErrorContains(t, err, "340.108", "a driver older than the table: CUDAInfo")
	}
}
