package cgroup

import (
	"errors"
	"fmt"
	"strings"

	devconfig "github.com/opencontainers/cgroups/devices/config"

	"github.com/go-nvc/nvc/internal/sentinel"
)

// Sentinel errors; errors returned by this package match one of them with
// [errors.Is] where a caller may need to branch.
var (
	// ErrNotFound: the process, its device cgroup or the hierarchy's mount
	// cannot be found from the caller's view.
	ErrNotFound = errors.New("device cgroup not found")
	// ErrInvalid: a rule, or a file read from the kernel, is malformed.
	ErrInvalid = errors.New("invalid device cgroup data")
	// ErrNotSupported: the kernel or the attached programs do not allow the
	// change to be made faithfully; nothing was changed.
	ErrNotSupported = sentinel.Mark(errors.New("device cgroup change not supported"), sentinel.ErrNotSupported)
)

// Largest device numbers the kernel's dev_t can carry.
const (
	maxMajor = 1<<12 - 1
	maxMinor = 1<<20 - 1
)

// Rule grants access to one device node.
type Rule struct {
	// Type is 'c' for a character device or 'b' for a block device; zero
	// means 'c'.
	Type byte
	// Major is the device's major number (at most 4095).
	Major uint32
	// Minor is the device's minor number (at most 1048575).
	Minor uint32
	// Access is a non-empty subset of "rwm" (read, write, mknod) in any
	// order; empty means "rw".
	Access string
}

// String formats r as a devices.allow line, such as "c 195:255 rw".
func (r Rule) String() string {
	t := r.Type
	if t == 0 {
		t = 'c'
	}
	acc := r.Access
	if acc == "" {
		acc = "rw"
	}
	return fmt.Sprintf("%c %d:%d %s", t, r.Major, r.Minor, acc)
}

// normalize fills in defaults and checks r, returning it with Access in the
// kernel's "rwm" order.
func (r Rule) normalize() (Rule, error) {
	if r.Type == 0 {
		r.Type = 'c'
	}
	if r.Type != 'c' && r.Type != 'b' {
		return r, fmt.Errorf("checking rule %q: type %q is not 'c' or 'b': %w", r, r.Type, ErrInvalid)
	}
	if r.Major > maxMajor || r.Minor > maxMinor {
		return r, fmt.Errorf("checking rule %q: device number beyond %d:%d: %w", r, maxMajor, maxMinor, ErrInvalid)
	}
	if r.Access == "" {
		r.Access = "rw"
	}
	acc, err := parseAccess(r.Access)
	if err != nil {
		return r, fmt.Errorf("checking rule %q: %w", r, err)
	}
	r.Access = string(acc)
	return r, nil
}

// parseAccess checks a non-empty "rwm" subset without repeats and returns it
// in canonical order.
func parseAccess(s string) (devconfig.Permissions, error) {
	if s == "" || len(s) > 3 || strings.Trim(s, "rwm") != "" {
		return "", fmt.Errorf("access %q is not a subset of \"rwm\": %w", s, ErrInvalid)
	}
	p := devconfig.Permissions(s).Union("")
	if len(p) != len(s) {
		return "", fmt.Errorf("access %q repeats a letter: %w", s, ErrInvalid)
	}
	return p, nil
}

// oci returns a normalized r as an opencontainers rule.
func (r Rule) oci() devconfig.Rule {
	return devconfig.Rule{
		Type:        devconfig.Type(r.Type),
		Major:       int64(r.Major),
		Minor:       int64(r.Minor),
		Permissions: devconfig.Permissions(r.Access),
		Allow:       true,
	}
}

// normalizeAll normalizes every rule.
func normalizeAll(rules []Rule) ([]Rule, error) {
	out := make([]Rule, len(rules))
	for i, r := range rules {
		n, err := r.normalize()
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// rulesString lists rules for error messages.
func rulesString(rules []Rule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = r.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
