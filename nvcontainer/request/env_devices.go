package request

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// DeviceMode is the kind of device selection a request makes.
type DeviceMode uint8

// The device selections.
const (
	// DevicesVoid: not a GPU container; nothing is injected. The zero value.
	DevicesVoid DeviceMode = iota
	// DevicesNone: a GPU container with the driver but no GPU.
	DevicesNone
	// DevicesAll: every GPU.
	DevicesAll
	// DevicesList: the GPUs named in Devices.IDs.
	DevicesList
)

var deviceModeNames = [...]string{"void", "none", "all", "list"}

// String returns "void", "none", "all" or "list".
func (m DeviceMode) String() string {
	if int(m) < len(deviceModeNames) {
		return deviceModeNames[m]
	}
	return fmt.Sprintf("DeviceMode(%d)", m)
}

// MarshalText returns [DeviceMode.String].
func (m DeviceMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (m *DeviceMode) UnmarshalText(text []byte) error {
	for i, name := range deviceModeNames {
		if name == string(text) {
			*m = DeviceMode(i)
			return nil
		}
	}
	return fmt.Errorf("parsing device mode %q: not void, none, all or list", text)
}

// Devices is a device selection.
type Devices struct {
	// Mode is the kind of selection; the zero value is DevicesVoid.
	Mode DeviceMode `json:"mode"`
	// IDs are the requested devices, for DevicesList only: GPU indices,
	// GPU-<uuid>, PCI bus IDs, MIG <gpu>:<mig> pairs, MIG-<uuid> (and
	// MIG-GPU-<uuid>/<gi>/<ci>), or CDI names, unvalidated, deduplicated,
	// in first-seen order. Package devices resolves them.
	IDs []string `json:"ids,omitempty"`
}

// String returns the value nvidia-container-cli's --device takes: "all",
// or the IDs joined by commas; "void" and "none" for those modes.
func (d Devices) String() string {
	if d.Mode == DevicesList {
		return strings.Join(d.IDs, ",")
	}
	return d.Mode.String()
}

// ErrInvalidDevice is matched (with errors.Is) by ParseDevices' errors.
var ErrInvalidDevice = errors.New("invalid device")

// ParseDevices reads an NVIDIA_VISIBLE_DEVICES value with the runtime
// hook's rules: split on commas, items trimmed, empty items dropped; no
// items, or any "void", is DevicesVoid; else any "all" is DevicesAll; else
// any "none" is DevicesNone; else the items, deduplicated in first-seen
// order (" 1 ,0,1,,2" gives 1,0,2, where the toolkit gives ",0,1,2").
//
// The hook passes items on unchecked; ParseDevices refuses only items that
// could not be one argument on nvidia-container-cli's command line: those
// with a space or a byte outside printable ASCII, and lists of more than
// [MaxDevices] distinct items ([ErrTooLarge]).
func ParseDevices(list string) (Devices, error) {
	return parseDevices(list, MaxDevices, "devices", "MaxDevices")
}

// parseDevices is ParseDevices with at most max distinct items, named
// what and bound in the error.
func parseDevices(list string, max int, what, bound string) (Devices, error) {
	ids, err := splitList(list, max, what, bound)
	if err != nil {
		return Devices{}, err
	}
	switch {
	case len(ids) == 0 || contains(ids, "void"):
		return Devices{Mode: DevicesVoid}, nil
	case contains(ids, "all"):
		return Devices{Mode: DevicesAll}, nil
	case contains(ids, "none"):
		return Devices{Mode: DevicesNone}, nil
	}
	return Devices{Mode: DevicesList, IDs: ids}, nil
}

// splitList splits on commas, trims, drops empty items and duplicates;
// more than max items left is an error naming what and bound.
func splitList(list string, max int, what, bound string) ([]string, error) {
	var ids []string
	seen := make(map[string]bool)
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" || seen[item] {
			continue
		}
		if i := strings.IndexFunc(item, notPrintable); i >= 0 {
			return nil, fmt.Errorf("parsing device list %s: device %s: byte %#x at offset %d: %w",
				shortQuote(list), shortQuote(item), item[i], i, ErrInvalidDevice)
		}
		if len(ids) == max {
			return nil, fmt.Errorf("parsing device list %s: more than %s (%d) %s: %w",
				shortQuote(list), bound, max, what, ErrTooLarge)
		}
		seen[item] = true
		ids = append(ids, item)
	}
	return ids, nil
}

func notPrintable(r rune) bool { return r <= ' ' || r > '~' }

func contains(ids []string, s string) bool {
	for _, id := range ids {
		if id == s {
			return true
		}
	}
	return false
}

// maxIMEXChannel bounds channel numbers as nvidia-container-cli does.
const maxIMEXChannel = 1 << 20

// ParseIMEXChannels reads an NVIDIA_IMEX_CHANNELS value: a list like
// NVIDIA_VISIBLE_DEVICES, where "all", "none", "void" and the empty list
// mean no explicit channel (the hook sends no --imex-channel), and every
// other item must be a decimal channel number below 2^20. More than
// [MaxIMEXChannels] distinct items is an error ([ErrTooLarge]).
func ParseIMEXChannels(list string) ([]uint32, error) {
	d, err := parseDevices(list, MaxIMEXChannels, "IMEX channels", "MaxIMEXChannels")
	if err != nil || d.Mode != DevicesList {
		return nil, err
	}
	var out []uint32
	seen := make(map[uint32]bool)
	for _, id := range d.IDs {
		n, err := parseIMEXChannel(id)
		if err != nil {
			return nil, fmt.Errorf("parsing IMEX channel list %s: %w", shortQuote(list), err)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

func parseIMEXChannel(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n >= maxIMEXChannel {
		return 0, fmt.Errorf("channel %q: not a decimal number below %d: %w", s, maxIMEXChannel, ErrInvalidDevice)
	}
	return uint32(n), nil
}
