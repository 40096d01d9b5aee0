package devices

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// information is what /proc/driver/nvidia/gpus/<bus id>/information says.
type information struct {
	model, uuid         string
	domain, bus, device uint32
	minor               uint32
	excluded            bool
}

// parseInformation parses a GPU's information file ("Key: \t value" lines,
// as the driver's nv-procfs.c prints them).
func parseInformation(data []byte) (information, error) {
	kv := keyValues(data)
	var info information
	info.model, info.uuid = kv["Model"], kv["GPU UUID"]
	info.excluded = kv["GPU Excluded"] == "Yes"
	if info.uuid == "" {
		return information{}, fmt.Errorf("%w: no GPU UUID", ErrInvalid)
	}
	var err error
	if info.domain, info.bus, info.device, err = parseBusID(kv["Bus Location"]); err != nil {
		return information{}, err
	}
	minor, err := strconv.ParseUint(kv["Device Minor"], 10, 32)
	if err != nil {
		return information{}, fmt.Errorf("%w: device minor %q", ErrInvalid, kv["Device Minor"])
	}
	info.minor = uint32(minor)
	return info, nil
}

// keyValues splits "Key: value" lines at the first colon; later duplicates
// win. Lines without a colon are ignored.
func keyValues(data []byte) map[string]string {
	kv := map[string]string{}
	for line := range strings.SplitSeq(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return kv
}

// parseBusID reads a PCI address "domain:bus:device.function" in hex with
// any number of digits per field (the short forms libnvidia-container
// accepts: "0:7:0.0", "0000:07:00.0", "00000000:07:00.0").
func parseBusID(s string) (domain, bus, device uint32, err error) {
	dom, rest, ok1 := strings.Cut(s, ":")
	b, rest, ok2 := strings.Cut(rest, ":")
	dev, fn, ok3 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, 0, fmt.Errorf("%w: PCI bus id %q", ErrInvalid, s)
	}
	var v [4]uint64
	for i, f := range []string{dom, b, dev, fn} {
		v[i], err = strconv.ParseUint(f, 16, []int{32, 8, 5, 3}[i])
		if err != nil {
			return 0, 0, 0, fmt.Errorf("%w: PCI bus id %q", ErrInvalid, s)
		}
	}
	return uint32(v[0]), uint32(v[1]), uint32(v[2]), nil
}

// formatBusID prints a PCI address as libnvidia-container does.
func formatBusID(domain, bus, device uint32) string {
	return fmt.Sprintf("%08x:%02x:%02x.0", domain, bus, device)
}

// parseCharMajors reads the "Character devices:" section of /proc/devices
// into name → major. A name listed twice (nvidia's 195 is) keeps its first
// major.
func parseCharMajors(data []byte) (map[string]uint32, error) {
	majors := map[string]uint32{}
	s := bufio.NewScanner(bytes.NewReader(data))
	in := false
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		switch {
		case line == "Character devices:":
			in = true
		case !in:
		case line == "":
			return majors, nil
		default:
			if err := addMajor(majors, line, n); err != nil {
				return nil, err
			}
		}
	}
	return majors, s.Err()
}

func addMajor(majors map[string]uint32, line string, n int) error {
	num, name, ok := strings.Cut(line, " ")
	m, err := strconv.ParseUint(num, 10, 32)
	if !ok || err != nil || strings.TrimSpace(name) == "" {
		return fmt.Errorf("%w: /proc/devices line %d %q", ErrInvalid, n, line)
	}
	if _, dup := majors[strings.TrimSpace(name)]; !dup {
		majors[strings.TrimSpace(name)] = uint32(m)
	}
	return nil
}

// uintValue reads a decimal "Key: N" entry of kv, with a default for a
// missing key.
func uintValue(kv map[string]string, key string, def uint32) (uint32, error) {
	s, ok := kv[key]
	if !ok {
		return def, nil
	}
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %q", ErrInvalid, key, s)
	}
	return uint32(v), nil
}
