package driver

import (
	"fmt"
	"strconv"
	"strings"
)

// CUDASource says where a CUDA driver version came from.
type CUDASource string

// The CUDA version sources.
const (
	// CUDAFromNVML: nvmlSystemGetCudaDriverVersion, exact.
	CUDAFromNVML CUDASource = "nvml"
	// CUDAFromTable: the NVRM version mapped through NVIDIA's table.
	CUDAFromTable CUDASource = "table"
)

// CUDAInfo is the host's CUDA driver version and how it is known.
type CUDAInfo struct {
	// Version is "MAJOR.MINOR" ("12.4").
	Version string `json:"version"`
	// Source says where Version came from.
	Source CUDASource `json:"source"`
	// AtLeast is set when the driver is newer than the table's last row:
	// its CUDA version is Version or newer.
	AtLeast bool `json:"atLeast,omitempty"`
}

// CUDAInfo returns the CUDA driver version: NVML's when Open had NVML and
// it answered (see CUDAVersion), else the table's for the NVRM version.
// The error matches ErrUnknownCUDAVersion; it says why NVML gave none and
// why the table gives none (a driver older than CUDA 7.0's).
func (d *Driver) CUDAInfo() (CUDAInfo, error) {
	if v, err := d.CUDAVersion(); err == nil {
		return CUDAInfo{Version: v, Source: CUDAFromNVML}, nil
	}
	v, atLeast, err := CUDAVersionForDriver(d.version.NVRM)
	if err != nil {
		return CUDAInfo{}, fmt.Errorf("%w; %w", d.cudaErr, err)
	}
	return CUDAInfo{Version: v, Source: CUDAFromTable, AtLeast: atLeast}, nil
}

// CUDAVersionFromNVML formats NVML's CUDA driver version, major*1000 +
// minor*10 (12040), as "MAJOR.MINOR" ("12.4"). It is the one place the
// encoding is read: Open and callers that ask NVML themselves use it.
func CUDAVersionFromNVML(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// CUDAVersionForDriver maps the NVRM version nvrm ("550.54.15") to the
// CUDA driver version ("12.4") without NVML, through the table NVIDIA
// publishes in the CUDA Toolkit release notes, "CUDA Toolkit and
// Corresponding Driver Versions" (Linux x86_64 column): the driver bundled
// with each toolkit release, which is also the oldest driver that runs it
// without the forward compatibility package. The answer is the newest
// toolkit release whose driver nvrm meets. atLeast is set when nvrm is
// newer than the table's last row, whose version is then a lower bound.
// The error, matching ErrUnknownCUDAVersion, names a malformed nvrm or one
// older than the table's first row (CUDA 7.0's 346.46).
//
// How exact it is. NVML reports the CUDA version a driver supports
// (nvmlSystemGetCudaDriverVersion). NVIDIA numbers its drivers by branch,
// one branch per CUDA minor release, so for every production driver
// within the table the answer is the version NVML would report, and a
// requirement "cuda>=X" naming a released toolkit X is decided as NVML
// would decide it. The answer is lower than NVML's, never higher, in
// three cases:
//   - a pre-release driver of a branch, older than the branch's first
//     toolkit driver (a 550 beta such as 550.40.07 gets 12.3 where NVML
//     reports its branch's 12.4);
//   - a branch with no toolkit release (the R565 drivers report 12.7,
//     which no toolkit is; the table gives 12.6);
//   - a driver newer than the table's last row: from CUDA 13.4 on the
//     toolkit bundles no Linux driver and the table has no row, so the
//     answer is the last row's version as a lower bound (atLeast).
//
// The first two can refuse a container that libnvidia-container (which
// asks NVML) would accept, and only an image that asks for the very CUDA
// version of the driver's branch; for the third, package nvcontainer
// treats a requirement that a newer version could satisfy as unknown
// rather than false (requirement.Facts.CUDAAtLeast), and says so.
func CUDAVersionForDriver(nvrm string) (version string, atLeast bool, err error) {
	have, ok := parseDriverVersion(nvrm)
	if !ok {
		return "", false, fmt.Errorf("%w: driver version %q is not a dotted number", ErrUnknownCUDAVersion, nvrm)
	}
	for i, r := range cudaReleases {
		if compareDriverVersions(have, r.driver) >= 0 {
			return r.cuda, i == 0, nil
		}
	}
	last := cudaReleases[len(cudaReleases)-1]
	return "", false, fmt.Errorf("%w: driver %s is older than CUDA %s's (%s)", ErrUnknownCUDAVersion, nvrm, last.cuda, last.minDriver)
}

// cudaRelease is one row of NVIDIA's table.
type cudaRelease struct {
	cuda, release string // "12.4", "Update 1"
	minDriver     string // "550.54.15"
	driver        []uint64
}

// cudaTable is NVIDIA's table "CUDA Toolkit and Corresponding Driver
// Versions", Linux x86_64 column, newest first, as the CUDA Toolkit
// release notes print it: rows down to CUDA 13.2 Update 2 as in the 13.2
// Update 2 release notes, the two CUDA 13.3 rows as in the 13.3 Update 1
// release notes. From 13.4 on the toolkit bundles no Linux driver and the
// table has no row for it.
var cudaTable = [][3]string{
	{"13.3", "Update 1", "610.43.02"},
	{"13.3", "GA", "610.43.02"},
	{"13.2", "Update 2", "595.71.05"},
	{"13.2", "Update 1", "595.58.03"},
	{"13.2", "GA", "595.45.04"},
	{"13.1", "Update 1", "590.48.01"},
	{"13.1", "GA", "590.44.01"},
	{"13.0", "Update 2", "580.95.05"},
	{"13.0", "Update 1", "580.82.07"},
	{"13.0", "GA", "580.65.06"},
	{"12.9", "Update 1", "575.57.08"},
	{"12.9", "GA", "575.51.03"},
	{"12.8", "Update 1", "570.124.06"},
	{"12.8", "GA", "570.26"},
	{"12.6", "Update 3", "560.35.05"},
	{"12.6", "Update 2", "560.35.03"},
	{"12.6", "Update 1", "560.35.03"},
	{"12.6", "GA", "560.28.03"},
	{"12.5", "Update 1", "555.42.06"},
	{"12.5", "GA", "555.42.02"},
	{"12.4", "Update 1", "550.54.15"},
	{"12.4", "GA", "550.54.14"},
	{"12.3", "Update 1", "545.23.08"},
	{"12.3", "GA", "545.23.06"},
	{"12.2", "Update 2", "535.104.05"},
	{"12.2", "Update 1", "535.86.09"},
	{"12.2", "GA", "535.54.03"},
	{"12.1", "Update 1", "530.30.02"},
	{"12.1", "GA", "530.30.02"},
	{"12.0", "Update 1", "525.85.12"},
	{"12.0", "GA", "525.60.13"},
	{"11.8", "GA", "520.61.05"},
	{"11.7", "Update 1", "515.48.07"},
	{"11.7", "GA", "515.43.04"},
	{"11.6", "Update 2", "510.47.03"},
	{"11.6", "Update 1", "510.47.03"},
	{"11.6", "GA", "510.39.01"},
	{"11.5", "Update 2", "495.29.05"},
	{"11.5", "Update 1", "495.29.05"},
	{"11.5", "GA", "495.29.05"},
	{"11.4", "Update 4", "470.82.01"},
	{"11.4", "Update 3", "470.82.01"},
	{"11.4", "Update 2", "470.57.02"},
	{"11.4", "Update 1", "470.57.02"},
	{"11.4", "GA", "470.42.01"},
	{"11.3", "Update 1", "465.19.01"},
	{"11.3", "GA", "465.19.01"},
	{"11.2", "Update 2", "460.32.03"},
	{"11.2", "Update 1", "460.32.03"},
	{"11.2", "GA", "460.27.03"},
	{"11.1", "Update 1", "455.32"},
	{"11.1", "GA", "455.23"},
	{"11.0", "Update 1", "450.51.06"},
	{"11.0", "GA", "450.51.05"},
	{"11.0", "RC", "450.36.06"},
	{"10.2", "GA", "440.33"},
	{"10.1", "GA", "418.39"},
	{"10.0", "GA", "410.48"},
	{"9.2", "Update 1", "396.37"},
	{"9.2", "GA", "396.26"},
	{"9.1", "GA", "390.46"},
	{"9.0", "GA", "384.81"},
	{"8.0", "GA2", "375.26"},
	{"8.0", "GA", "367.48"},
	{"7.5", "GA", "352.31"},
	{"7.0", "GA", "346.46"},
}

// cudaReleases is cudaTable with the driver versions parsed.
var cudaReleases = parseCUDATable(cudaTable)

func parseCUDATable(t [][3]string) []cudaRelease {
	out := make([]cudaRelease, len(t))
	for i, row := range t {
		v, ok := parseDriverVersion(row[2])
		if !ok {
			panic("driver: bad version in the CUDA table: " + row[2])
		}
		out[i] = cudaRelease{cuda: row[0], release: row[1], minDriver: row[2], driver: v}
	}
	return out
}

// parseDriverVersion splits "550.54.15" into its numbers.
func parseDriverVersion(s string) ([]uint64, bool) {
	if !isVersion(s) {
		return nil, false
	}
	parts := strings.Split(s, ".")
	v := make([]uint64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return nil, false
		}
		v[i] = n
	}
	return v, true
}

// compareDriverVersions compares component by component; a missing
// component counts as 0 (570.26 = 570.26.0).
func compareDriverVersions(a, b []uint64) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y uint64
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	}
	return 0
}
