package request

import (
	"errors"
	"strconv"
	"strings"
)

// errNotSemver is the reason a CUDA_VERSION is refused.
var errNotSemver = errors.New("not a semantic version (MAJOR[.MINOR[.PATCH[-PRE][+BUILD]]])")

// cudaMajorMinor returns "MAJOR.MINOR" of a CUDA_VERSION the way the runtime
// hook reads it: an optional "v", then a semantic version in the lenient
// form golang.org/x/mod/semver accepts ("12", "12.4", "12.4.1",
// "12.4.1-rc1+b2"; no leading zeros), with MAJOR and MINOR below 2^32. A
// missing MINOR is 0.
func cudaMajorMinor(v string) (string, error) {
	s := strings.TrimPrefix(v, "v")
	major, s, ok := semverNumber(s)
	minor := "0"
	if ok && s != "" {
		minor, s, ok = dotNumber(s)
	}
	if ok && s != "" {
		_, s, ok = dotNumber(s)
		ok = ok && semverSuffix(s)
	}
	if !ok || !fits32(major) || !fits32(minor) {
		return "", errNotSemver
	}
	return major + "." + minor, nil
}

func dotNumber(s string) (string, string, bool) {
	if !strings.HasPrefix(s, ".") {
		return "", s, false
	}
	return semverNumber(s[1:])
}

// semverNumber reads a run of digits without a leading zero.
func semverNumber(s string) (num, rest string, ok bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || (s[0] == '0' && i > 1) {
		return "", s, false
	}
	return s[:i], s[i:], true
}

// semverSuffix checks an optional -prerelease then an optional +build.
func semverSuffix(s string) bool {
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		pre, build, hasBuild := strings.Cut(rest, "+")
		if !identifiers(pre, true) {
			return false
		}
		return !hasBuild || identifiers(build, false)
	}
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		return identifiers(rest, false)
	}
	return s == ""
}

// identifiers checks dot-separated non-empty [0-9A-Za-z-] identifiers;
// numeric ones in a prerelease may not have leading zeros.
func identifiers(s string, pre bool) bool {
	for id := range strings.SplitSeq(s, ".") {
		if id == "" || strings.IndexFunc(id, notIdentChar) >= 0 {
			return false
		}
		if pre && len(id) > 1 && id[0] == '0' && strings.Trim(id, "0123456789") == "" {
			return false
		}
	}
	return true
}

func notIdentChar(r rune) bool {
	return !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
}

func fits32(num string) bool {
	_, err := strconv.ParseUint(num, 10, 32)
	return err == nil
}
