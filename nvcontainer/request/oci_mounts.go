package request

import (
	"path"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// DeviceListAsVolumeMountsRoot is where device requests given as volume
// mounts live in the container: /dev/null mounted on <root>/<device>.
const DeviceListAsVolumeMountsRoot = "/var/run/nvidia-container-devices"

// mountRequests are the requests found in a spec's mounts.
type mountRequests struct {
	devices []string // device IDs, CDI names as vendor/class=name
	imex    []uint32 // from imex/<channel>
	notes   []string // mounts ignored, and why
}

// requestsFromMounts reads device requests given as volume mounts (the
// config's accept-nvidia-visible-devices-as-volume-mounts): a mount of
// /dev/null on /var/run/nvidia-container-devices/<name>. <name> is a device
// ID, imex/<channel>, or cdi/<vendor>/<class>/<device> (also
// cdi/<vendor>/<class>=<device>). A destination is counted once.
//
// Unlike the toolkit, which compares strings, the destination must lie
// below the root directory: /var/run/nvidia-container-devicesX/0 is not a
// request.
func requestsFromMounts(mounts []specs.Mount, enabled bool) mountRequests {
	var m mountRequests
	if !enabled {
		return m
	}
	seen := make(map[string]bool)
	for _, mnt := range mounts {
		name, ok := mountedName(mnt)
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		m.add(name)
	}
	return m
}

// mountedName returns the device name a mount requests, if it is one.
func mountedName(mnt specs.Mount) (string, bool) {
	if path.Clean(mnt.Source) != "/dev/null" {
		return "", false
	}
	rest, ok := strings.CutPrefix(path.Clean(mnt.Destination), DeviceListAsVolumeMountsRoot+"/")
	if !ok {
		return "", false
	}
	rest = strings.Trim(rest, "/")
	return rest, rest != ""
}

func (m *mountRequests) add(name string) {
	if ch, ok := strings.CutPrefix(name, "imex/"); ok {
		n, err := parseIMEXChannel(ch)
		if err != nil {
			m.notes = append(m.notes, "ignoring volume mount request "+name+": "+err.Error())
			return
		}
		m.imex = appendNew(m.imex, n)
		return
	}
	if cdi, ok := strings.CutPrefix(name, "cdi/"); ok {
		q, ok := qualifiedCDIName(cdi)
		if !ok {
			m.notes = append(m.notes, "ignoring volume mount request "+name+": not a CDI device name")
			return
		}
		name = q
	}
	m.devices = append(m.devices, name)
}

// qualifiedCDIName turns vendor/class/device or vendor/class=device into
// vendor/class=device.
func qualifiedCDIName(s string) (string, bool) {
	if kind, dev, ok := strings.Cut(s, "="); ok {
		vendor, class, ok := strings.Cut(kind, "/")
		return s, ok && vendor != "" && class != "" && !strings.Contains(class, "/") && dev != ""
	}
	parts := strings.SplitN(s, "/", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", false
	}
	return parts[0] + "/" + parts[1] + "=" + parts[2], true
}

func appendNew(list []uint32, n uint32) []uint32 {
	for _, v := range list {
		if v == n {
			return list
		}
	}
	return append(list, n)
}
