package devices

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

// overflowID is the kernel's overflow id when /proc/sys/kernel cannot be
// read: nobody.
const overflowID = 65534

// helperCredential is the identity the helper runs as for
// NVMLHelperOptions.User spec; nil: the caller's, unchanged.
func helperCredential(spec string) (*syscall.Credential, error) {
	if spec == "" {
		if os.Geteuid() != 0 {
			return nil, nil
		}
		return &syscall.Credential{Uid: overflow("uid"), Gid: overflow("gid"), Groups: []uint32{}}, nil
	}
	name, group, hasGroup := strings.Cut(spec, ":")
	uid, gid, err := lookupUser(name, !hasGroup)
	if err != nil {
		return nil, err
	}
	if hasGroup {
		if gid, err = lookupGroup(group); err != nil {
			return nil, err
		}
	}
	if os.Geteuid() != 0 && uid == uint32(os.Geteuid()) && gid == uint32(os.Getegid()) {
		return nil, nil // already that user: nothing to change, nor the right to
	}
	return &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}, nil
}

// overflow reads /proc/sys/kernel/overflow<kind>.
func overflow(kind string) uint32 {
	data, err := os.ReadFile("/proc/sys/kernel/overflow" + kind)
	if err != nil {
		return overflowID
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 32)
	if err != nil {
		return overflowID
	}
	return uint32(id)
}

// lookupUser resolves a user name or number; with needGroup, its group
// too, from the passwd file.
func lookupUser(name string, needGroup bool) (uid, gid uint32, err error) {
	var u *user.User
	if id, perr := strconv.ParseUint(name, 10, 32); perr == nil {
		if !needGroup {
			return uint32(id), 0, nil
		}
		u, err = user.LookupId(name)
	} else {
		u, err = user.Lookup(name)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("NVML helper user %q: %w", name, err)
	}
	id, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("NVML helper user %q: uid %q: %w", name, u.Uid, err)
	}
	g, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("NVML helper user %q: gid %q: %w", name, u.Gid, err)
	}
	return uint32(id), uint32(g), nil
}

// lookupGroup resolves a group name or number.
func lookupGroup(name string) (uint32, error) {
	if id, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(id), nil
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, fmt.Errorf("NVML helper group %q: %w", name, err)
	}
	id, err := strconv.ParseUint(g.Gid, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("NVML helper group %q: gid %q: %w", name, g.Gid, err)
	}
	return uint32(id), nil
}
