package devices

import (
	"bytes"
	"fmt"
	"math"
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
	m, okNum := digits(strings.TrimSpace(num), math.MaxUint32)
	if !ok || !okNum {
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

// capKeyOf parses "gpuN/giG/access" and "gpuN/giG/ciC/access" (numbers
// up to 65535). It runs for each of mig-minors' some 4300 lines at every
// discovery, so it reads the digits itself rather than cutting strings.
func capKeyOf(name string) (capKey, bool) {
	rest, ok := strings.CutPrefix(name, "gpu")
	if !ok {
		return capKey{}, false
	}
	k := capKey{ci: -1}
	var okGPU, okGI, okCI bool
	k.gpu, rest, okGPU = numberThen(rest, "/gi")
	k.gi, rest, okGI = numberThen(rest, "/")
	if ci, ok := strings.CutPrefix(rest, "ci"); ok {
		k.ci, rest, okCI = numberThen(ci, "/")
	} else {
		okCI = true
	}
	return k, okGPU && okGI && okCI && rest == "access"
}

// numberThen reads a decimal up to 65535 at the start of s, which sep must
// follow, and returns what follows sep.
func numberThen(s, sep string) (int32, string, bool) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	n, ok := digits(s[:i], math.MaxUint16)
	rest, okSep := strings.CutPrefix(s[i:], sep)
	return int32(n), rest, ok && okSep
}

// digits is s, a non-empty string of decimal digits only, if its value
// is at most max.
func digits(s string, max uint64) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d := uint64(s[i] - '0')
		if s[i] < '0' || s[i] > '9' || n > (max-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
