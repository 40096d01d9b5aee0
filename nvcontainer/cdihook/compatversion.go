package cdihook

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CompatNote is what the .note.cuda.fwd_compatibility ELF note of a
// compat libcuda.so says (owner "NVIDIA Corporation", a JSON description).
type CompatNote struct {
	// CUDAVersion is the CUDA version the library provides ("12.8").
	CUDAVersion string `json:"CUDA Version"`
	// Driver are the host driver majors the library may be used with.
	Driver []int `json:"Driver"`
}

// version is a dotted version of up to three numbers, compared as
// semantic versions are ("12.4" is 12.4.0); pre is its pre-release
// ("-rc1"), which sorts before the release.
type version struct {
	n   [3]uint64
	pre string
}

// parseVersion reads "570.86.10", "12.4", "550" or "v12.4.1-rc1+meta",
// as NVIDIA's hook (Masterminds semver, loose) does; leading zeros
// ("575.57.08") are accepted.
func parseVersion(s string) (version, error) {
	var v version
	t := strings.TrimPrefix(s, "v")
	t, _, _ = strings.Cut(t, "+")
	t, v.pre, _ = strings.Cut(t, "-")
	parts := strings.Split(t, ".")
	if len(parts) > 3 {
		return v, fmt.Errorf("version %q is not N[.N[.N]]", s)
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64) // no sign, no empty part
		if err != nil {
			return v, fmt.Errorf("version %q is not N[.N[.N]]", s)
		}
		v.n[i] = n
	}
	return v, nil
}

// compare orders a and b: -1, 0 or +1.
func (a version) compare(b version) int {
	if c := slices.Compare(a.n[:], b.n[:]); c != 0 {
		return c
	}
	switch {
	case a.pre == b.pre:
		return 0
	case a.pre == "":
		return 1
	case b.pre == "":
		return -1
	}
	return strings.Compare(a.pre, b.pre)
}

// compatHost is what the host's versions say; a nil field was not given.
type compatHost struct {
	driver, cuda *version
}

// compatReason says why compat is not used with libs in the compat dir dir,
// the note of the one library (nil: none) and the host; "" when it is
// used. With a note, the host driver's major must be one the note lists
// and the library's version greater than the driver's; without a host
// driver version, the note's CUDA version must be greater than the
// host's. Without a note, a host CUDA version alone says nothing, and
// the library's major must be greater than the driver's (the toolkit's
// rules).
func compatReason(dir string, libs []string, note *CompatNote, host compatHost) string {
	if len(libs) != 1 {
		return fmt.Sprintf("want exactly one %s in %s, found %d", compatLibGlob, dir, len(libs))
	}
	lib, err := parseVersion(strings.TrimPrefix(libs[0], "libcuda.so."))
	libOK := err == nil
	switch {
	case note != nil && libOK && host.driver != nil:
		if !slices.Contains(note.Driver, int(host.driver.n[0])) {
			return fmt.Sprintf("%s does not support host driver major %d (its note lists %v)", libs[0], host.driver.n[0], note.Driver)
		}
		if lib.compare(*host.driver) <= 0 {
			return fmt.Sprintf("%s is not newer than the host driver", libs[0])
		}
		return ""
	case note != nil:
		nc, err := parseVersion(note.CUDAVersion)
		if host.cuda == nil || err != nil || nc.compare(*host.cuda) <= 0 {
			return fmt.Sprintf("CUDA %q of %s is not newer than the host's", note.CUDAVersion, libs[0])
		}
		return ""
	case host.cuda != nil:
		return fmt.Sprintf("%s has no %s note to compare with the host CUDA version", libs[0], compatNoteSection)
	case !libOK || host.driver == nil || lib.n[0] <= host.driver.n[0]:
		return fmt.Sprintf("%s is not newer than the host driver (major %d)", libs[0], hostMajor(host))
	}
	return ""
}

func hostMajor(h compatHost) uint64 {
	if h.driver == nil {
		return 0
	}
	return h.driver.n[0]
}
