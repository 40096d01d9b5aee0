package cgroup

import (
	"fmt"
	"strconv"
	"strings"

	devconfig "github.com/opencontainers/cgroups/devices/config"
)

// devicesList is a v1 devices.list: either default-allow ("a *:* rwm", whose
// deny exceptions the kernel does not list) or the allowed exceptions of a
// default-deny cgroup.
type devicesList struct {
	allowAll bool
	rules    []devconfig.Rule
}

// parseDevicesList parses devices.list, one "TYPE MAJOR:MINOR ACCESS" per
// line with "*" for any number.
func parseDevicesList(b []byte) (devicesList, error) {
	var l devicesList
	for n, line := range strings.Split(string(b), "\n") {
		if line == "" {
			continue
		}
		r, err := parseListLine(line)
		if err != nil {
			return devicesList{}, fmt.Errorf("parsing devices.list line %d %q: %w", n+1, line, err)
		}
		if r.Type == devconfig.WildcardDevice {
			l.allowAll = true
			continue
		}
		l.rules = append(l.rules, r)
	}
	return l, nil
}

func parseListLine(line string) (devconfig.Rule, error) {
	f := strings.Fields(line)
	if len(f) != 3 || len(f[0]) != 1 {
		return devconfig.Rule{}, fmt.Errorf("want TYPE MAJOR:MINOR ACCESS: %w", ErrInvalid)
	}
	t := devconfig.Type(f[0][0])
	if !t.CanCgroup() {
		return devconfig.Rule{}, fmt.Errorf("device type %q: %w", f[0], ErrInvalid)
	}
	majS, minS, ok := strings.Cut(f[1], ":")
	maj, err1 := parseDevNum(majS)
	minor, err2 := parseDevNum(minS)
	if !ok || err1 != nil || err2 != nil {
		return devconfig.Rule{}, fmt.Errorf("device number %q: %w", f[1], ErrInvalid)
	}
	acc, err := parseAccess(f[2])
	if err != nil {
		return devconfig.Rule{}, err
	}
	return devconfig.Rule{Type: t, Major: maj, Minor: minor, Permissions: acc, Allow: true}, nil
}

func parseDevNum(s string) (int64, error) {
	if s == "*" {
		return devconfig.Wildcard, nil
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err == nil && n < 0 {
		err = ErrInvalid
	}
	return n, err
}

// missing returns the access of the normalized rule r that the list does not
// grant. The kernel grants an access only when one exception covers all of
// it, so a rule already covered by one entry misses nothing; otherwise what
// it misses is what its exact entry (same type and numbers, no wildcard)
// lacks, since an allow write merges into that entry.
func (l devicesList) missing(r devconfig.Rule) devconfig.Permissions {
	if l.allowAll {
		return ""
	}
	exact := devconfig.Permissions("")
	for _, e := range l.rules {
		if matches(e, r) && r.Permissions.Difference(e.Permissions).IsEmpty() {
			return ""
		}
		if e.Type == r.Type && e.Major == r.Major && e.Minor == r.Minor {
			exact = exact.Union(e.Permissions)
		}
	}
	return r.Permissions.Difference(exact)
}

// matches reports whether exception e applies to the device of r.
func matches(e, r devconfig.Rule) bool {
	return (e.Type == r.Type || e.Type == devconfig.WildcardDevice) &&
		(e.Major == devconfig.Wildcard || e.Major == r.Major) &&
		(e.Minor == devconfig.Wildcard || e.Minor == r.Minor)
}
