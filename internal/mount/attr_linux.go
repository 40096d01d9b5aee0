package mount

import (
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Attr is a set of per-mount attributes.
type Attr uint64

// The attributes a caller may request.
const (
	ReadOnly Attr = unix.MOUNT_ATTR_RDONLY
	NoSuid   Attr = unix.MOUNT_ATTR_NOSUID
	NoDev    Attr = unix.MOUNT_ATTR_NODEV
	NoExec   Attr = unix.MOUNT_ATTR_NOEXEC
)

var attrNames = []struct {
	a    Attr
	name string
	ms   uintptr
}{
	{ReadOnly, "ro", unix.MS_RDONLY},
	{NoSuid, "nosuid", unix.MS_NOSUID},
	{NoDev, "nodev", unix.MS_NODEV},
	{NoExec, "noexec", unix.MS_NOEXEC},
}

// String lists the attributes as mount options, "rw" for none.
func (a Attr) String() string {
	var names []string
	for _, n := range attrNames {
		if a&n.a != 0 {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "rw"
	}
	return strings.Join(names, ",")
}

// msFlags converts the attributes to mount(2) flags.
func (a Attr) msFlags() uintptr {
	var f uintptr
	for _, n := range attrNames {
		if a&n.a != 0 {
			f |= n.ms
		}
	}
	return f
}

// Method chooses how mounts are made.
type Method int

const (
	// Auto uses NewAPI where the kernel has mount_setattr (5.12+), else
	// Legacy.
	Auto Method = iota
	// NewAPI uses open_tree, mount_setattr and move_mount.
	NewAPI
	// Legacy binds by path in the container's namespace, then remounts.
	Legacy
)

// String names the method.
func (m Method) String() string {
	switch m {
	case Auto:
		return "auto"
	case NewAPI:
		return "new mount API"
	case Legacy:
		return "legacy bind+remount"
	}
	return "unknown method"
}

// Options configure mounts; nil means all defaults.
type Options struct {
	// Method chooses the mount method; zero is Auto.
	Method Method
}

func (o *Options) method() (Method, error) {
	m := Auto
	if o != nil {
		m = o.Method
	}
	switch {
	case m == Auto && HasNewAPI():
		return NewAPI, nil
	case m == Auto:
		return Legacy, nil
	case m == NewAPI && !HasNewAPI():
		return 0, ErrNotSupported
	}
	return m, nil
}

// HasNewAPI reports whether the kernel has mount_setattr (and so the rest
// of the new mount API). The probe runs once.
func HasNewAPI() bool { return hasNewAPI() }

var hasNewAPI = sync.OnceValue(func() bool {
	err := unix.MountSetattr(-1, "", unix.AT_EMPTY_PATH, &unix.MountAttr{})
	return err != unix.ENOSYS
})

// statfs f_flags bits that are per-mount flags a bind keeps.
var statfsFlags = []struct{ st, ms uintptr }{
	{0x0001, unix.MS_RDONLY},     // ST_RDONLY
	{0x0002, unix.MS_NOSUID},     // ST_NOSUID
	{0x0004, unix.MS_NODEV},      // ST_NODEV
	{0x0008, unix.MS_NOEXEC},     // ST_NOEXEC
	{0x0400, unix.MS_NOATIME},    // ST_NOATIME
	{0x0800, unix.MS_NODIRATIME}, // ST_NODIRATIME
	{0x1000, unix.MS_RELATIME},   // ST_RELATIME
}

// msFromStatfs converts statfs f_flags to the mount(2) flags a remount
// must keep.
func msFromStatfs(flags int64) uintptr {
	var ms uintptr
	for _, f := range statfsFlags {
		if uintptr(flags)&f.st != 0 {
			ms |= f.ms
		}
	}
	return ms
}

var msNames = []struct {
	ms   uintptr
	name string
}{
	{unix.MS_BIND, "bind"}, {unix.MS_REMOUNT, "remount"}, {unix.MS_RDONLY, "ro"},
	{unix.MS_NOSUID, "nosuid"}, {unix.MS_NODEV, "nodev"}, {unix.MS_NOEXEC, "noexec"},
	{unix.MS_NOATIME, "noatime"}, {unix.MS_NODIRATIME, "nodiratime"}, {unix.MS_RELATIME, "relatime"},
}

// msString decodes mount(2) flags for error messages.
func msString(flags uintptr) string {
	var names []string
	for _, n := range msNames {
		if flags&n.ms != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}
