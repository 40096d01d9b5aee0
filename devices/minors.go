package devices

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// minorTable is /proc/driver/nvidia-caps/mig-minors: every MIG capability
// the driver could create ("config", "monitor", "gpuN/giG/access",
// "gpuN/giG/ciC/access") and the nvidia-caps minor of its node. The file
// has some 4300 lines, so entries are keyed by numbers, not names.
type minorTable struct {
	minors map[capKey]uint32
	global map[string]uint32   // config, monitor, and what later drivers add
	byGPU  map[uint32][]uint32 // minors of each GPU's entries, in file order
}

// capKey identifies a GPU instance's access capability (ci < 0) or a
// compute instance's.
type capKey struct{ gpu, gi, ci int32 }

// parseMIGMinors reads mig-minors ("name minor" lines).
func parseMIGMinors(data []byte) (*minorTable, error) {
	t := &minorTable{
		minors: make(map[capKey]uint32, bytes.Count(data, []byte("\n"))),
		global: map[string]uint32{},
		byGPU:  map[uint32][]uint32{},
	}
	n := 0
	for line := range strings.SplitSeq(string(data), "\n") {
		n++
		if err := t.add(strings.TrimSpace(line)); err != nil {
			return nil, fmt.Errorf("%w: mig-minors line %d %q", ErrInvalid, n, line)
		}
	}
	return t, nil
}

func (t *minorTable) add(line string) error {
	if line == "" {
		return nil
	}
	name, num, ok := strings.Cut(line, " ")
	m, err := strconv.ParseUint(strings.TrimSpace(num), 10, 32)
	if !ok || err != nil {
		return ErrInvalid
	}
	if !strings.HasPrefix(name, "gpu") {
		t.global[name] = uint32(m)
		return nil
	}
	k, ok := capKeyOf(name)
	if !ok {
		return ErrInvalid
	}
	t.minors[k] = uint32(m)
	t.byGPU[uint32(k.gpu)] = append(t.byGPU[uint32(k.gpu)], uint32(m))
	return nil
}

// lookup returns the minor of the capability named as in mig-minors.
func (t *minorTable) lookup(name string) (uint32, bool) {
	if t == nil {
		return 0, false
	}
	if !strings.HasPrefix(name, "gpu") {
		m, ok := t.global[name]
		return m, ok
	}
	k, ok := capKeyOf(name)
	if !ok {
		return 0, false
	}
	m, ok := t.minors[k]
	return m, ok
}

// capKeyOf parses "gpuN/giG/access" and "gpuN/giG/ciC/access".
func capKeyOf(name string) (capKey, bool) {
	rest, ok := strings.CutPrefix(name, "gpu")
	if !ok {
		return capKey{}, false
	}
	k := capKey{ci: -1}
	var okGPU, okGI, okCI bool
	k.gpu, rest, okGPU = cutNumber(rest, "/gi")
	k.gi, rest, okGI = cutNumber(rest, "/")
	if ci, ok := strings.CutPrefix(rest, "ci"); ok {
		k.ci, rest, okCI = cutNumber(ci, "/")
	} else {
		okCI = true
	}
	return k, okGPU && okGI && okCI && rest == "access"
}

// cutNumber reads a decimal up to sep and returns what follows sep.
func cutNumber(s, sep string) (int32, string, bool) {
	num, rest, ok := strings.Cut(s, sep)
	n, err := strconv.ParseUint(num, 10, 16)
	return int32(n), rest, ok && err == nil && num != "" && num[0] != '+'
}
