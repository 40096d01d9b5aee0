package cgroup

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/moby/sys/mountinfo"
)

// Version is the cgroup hierarchy kind that holds a process's device rules.
type Version int

// The two device cgroup mechanisms.
const (
	// V1 is the cgroup v1 devices controller (devices.allow, devices.deny).
	V1 Version = 1
	// V2 is the cgroup2 hierarchy, where BPF_CGROUP_DEVICE programs decide.
	V2 Version = 2
)

// String returns "v1", "v2" or "v?" for anything else.
func (v Version) String() string {
	switch v {
	case V1:
		return "v1"
	case V2:
		return "v2"
	}
	return "v?"
}

// Entry is one line of /proc/PID/cgroup: "ID:CONTROLLERS:PATH".
type Entry struct {
	// ID is the hierarchy ID; 0 is the cgroup2 hierarchy.
	ID int
	// Controllers lists the v1 controllers bound to the hierarchy (and
	// "name=..." for named ones); empty for cgroup2.
	Controllers []string
	// Path is the cgroup's path relative to the reader's cgroup namespace
	// root; it starts with "/.." where the process lies outside it.
	Path string
}

// ParseProcCgroup parses the content of /proc/PID/cgroup. Blank lines are
// skipped; a line without two colons or with a bad ID is an error wrapping
// [ErrInvalid].
func ParseProcCgroup(r io.Reader) ([]Entry, error) {
	var entries []Entry
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		if sc.Text() == "" {
			continue
		}
		e, err := parseEntry(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("parsing cgroup line %d %q: %w", n, sc.Text(), err)
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading cgroup file: %w", err)
	}
	return entries, nil
}

func parseEntry(line string) (Entry, error) {
	f := strings.SplitN(line, ":", 3)
	if len(f) != 3 {
		return Entry{}, fmt.Errorf("want ID:CONTROLLERS:PATH: %w", ErrInvalid)
	}
	id, err := strconv.Atoi(f[0])
	if err != nil || id < 0 {
		return Entry{}, fmt.Errorf("hierarchy ID %q: %w", f[0], ErrInvalid)
	}
	e := Entry{ID: id, Path: f[2]}
	if f[1] != "" {
		e.Controllers = strings.Split(f[1], ",")
	}
	return e, nil
}

// Location says where a process's device cgroup is, as seen by the process
// whose mountinfo was read.
type Location struct {
	// Version is the mechanism that holds the device rules.
	Version Version
	// Path is the cgroup directory: Mountpoint joined with Cgroup less Root.
	Path string
	// Mountpoint is where the hierarchy is mounted.
	Mountpoint string
	// Root is the hierarchy directory at the root of that mount.
	Root string
	// Cgroup is the process's cgroup from /proc/PID/cgroup.
	Cgroup string
}

// Locate finds the device cgroup from the entries of a process's
// /proc/PID/cgroup and the mounts of the process that will change it. A
// "devices" entry means v1, whose mount is a "cgroup" file system with the
// devices controller; otherwise the "0::" entry means v2, on a "cgroup2"
// mount. The first mount whose root holds the cgroup serves; mounts whose
// root begins with "/.." lie outside the reader's cgroup namespace and cannot.
// Errors wrap [ErrNotFound] or [ErrInvalid].
func Locate(entries []Entry, mounts []*mountinfo.Info) (Location, error) {
	e, v, err := deviceEntry(entries)
	if err != nil {
		return Location{}, err
	}
	if err := checkCgroupPath(e.Path); err != nil {
		return Location{}, err
	}
	return locateMount(e.Path, v, mounts)
}

// deviceEntry picks the entry that holds the device rules.
func deviceEntry(entries []Entry) (Entry, Version, error) {
	for _, e := range entries {
		if slices.Contains(e.Controllers, "devices") {
			return e, V1, nil
		}
	}
	for _, e := range entries {
		if e.ID == 0 && len(e.Controllers) == 0 {
			return e, V2, nil
		}
	}
	return Entry{}, 0, fmt.Errorf("finding a devices or 0:: line in the cgroup file: %w", ErrNotFound)
}

func checkCgroupPath(p string) error {
	if strings.HasSuffix(p, " (deleted)") {
		return fmt.Errorf("cgroup %q has been removed: %w", p, ErrNotFound)
	}
	if outsideNamespace(p) {
		return fmt.Errorf("cgroup %q lies outside the caller's cgroup namespace: %w", p, ErrNotFound)
	}
	if !path.IsAbs(p) || path.Clean(p) != p {
		return fmt.Errorf("cgroup path %q is not a clean absolute path: %w", p, ErrInvalid)
	}
	return nil
}

// outsideNamespace reports whether a kernel-given cgroup path starts with
// "/..", which the kernel writes for a cgroup above the reader's namespace.
func outsideNamespace(p string) bool {
	return p == "/.." || strings.HasPrefix(p, "/../")
}

func locateMount(cg string, v Version, mounts []*mountinfo.Info) (Location, error) {
	var outside string
	for _, m := range mounts {
		if !servesVersion(m, v) {
			continue
		}
		if outsideNamespace(m.Root) {
			outside = m.Root
			continue
		}
		if rel, ok := within(m.Root, cg); ok {
			return Location{Version: v, Path: path.Join(m.Mountpoint, rel), Mountpoint: m.Mountpoint, Root: m.Root, Cgroup: cg}, nil
		}
	}
	if outside != "" {
		return Location{}, fmt.Errorf("finding the %s mount of cgroup %q: mount root %q lies outside the caller's cgroup namespace: %w", v, cg, outside, ErrNotFound)
	}
	return Location{}, fmt.Errorf("finding the %s mount of cgroup %q: no mount holds it: %w", v, cg, ErrNotFound)
}

func servesVersion(m *mountinfo.Info, v Version) bool {
	if v == V2 {
		return m.FSType == "cgroup2"
	}
	return m.FSType == "cgroup" && slices.Contains(strings.Split(m.VFSOptions, ","), "devices")
}

// within returns p relative to root ("/" for root itself) if p is root or
// below it.
func within(root, p string) (string, bool) {
	if root == "/" {
		return p, true
	}
	if p == root {
		return "/", true
	}
	rest, ok := strings.CutPrefix(p, root)
	if !ok || !strings.HasPrefix(rest, "/") {
		return "", false
	}
	return rest, true
}
