package fakenvml

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// applyMIG enables MIG on the GPUs named in layout and creates their
// devices, in GPU index order.
func applyMIG(s *Server, machine string, layout map[int][]string) error {
	gpus := make([]int, 0, len(layout))
	for i := range layout {
		gpus = append(gpus, i)
	}
	slices.Sort(gpus)
	for _, i := range gpus {
		if i < 0 || i >= len(s.gpus) {
			return fmt.Errorf("MIG layout names GPU %d; the machine has %d", i, len(s.gpus))
		}
		if err := enableMIG(s.gpus[i], machine, layout[i]); err != nil {
			return fmt.Errorf("MIG layout of GPU %d: %w", i, err)
		}
	}
	return nil
}

func enableMIG(g *gpu, machine string, profiles []string) error {
	g.mig = true
	var used [8]bool
	for _, name := range profiles {
		m, err := createInstance(g, name, &used)
		if err != nil {
			return err
		}
		m.uuid = MIGUUID(machine, g.index, m.giID, m.ciID)
		g.migs = append(g.migs, m)
	}
	slices.SortStableFunc(g.migs, func(a, b *migDevice) int { return a.giID - b.giID })
	return nil
}

// createInstance creates the GPU and compute instance of one profile name at
// the first free placement of its GPU instance profile.
func createInstance(g *gpu, name string, used *[8]bool) (*migDevice, error) {
	ciSlices, giName := SplitProfile(name)
	p := g.board.profile(giName)
	if p == nil {
		return nil, fmt.Errorf("unknown MIG profile %q for %s", name, g.board.name)
	}
	m := &migDevice{parent: g, profile: name, gi: p, ciSlices: uint32(ciSlices)}
	if ciSlices == 0 {
		m.ciSlices = p.slices
	}
	place, ok := freePlacement(p.placements, used)
	if !ok {
		return nil, fmt.Errorf("no free placement for MIG profile %q", name)
	}
	if !slices.Contains(p.ciSlices, m.ciSlices) {
		return nil, fmt.Errorf("no %d-slice compute instance in MIG profile %q", m.ciSlices, name)
	}
	m.giID = giID(place)
	m.ciID = 0 // the GPU instance's first compute instance
	return m, nil
}

// SplitProfile splits "1c.3g.20gb" into 1 and "3g.20gb"; a name without a
// compute-instance prefix gives 0.
func SplitProfile(name string) (int, string) {
	c, rest, ok := strings.Cut(name, "c.")
	if n, err := strconv.Atoi(c); ok && err == nil && n > 0 {
		return n, rest
	}
	return 0, name
}

// profile is the GPU instance profile named name (nvidia-smi's names:
// "3g.20gb", "1g.5gb+me"), the one of lowest profile id; nil if none.
func (b *board) profile(name string) *giProfile {
	for i := range b.profiles {
		if b.profiles[i].name == name {
			return &b.profiles[i]
		}
	}
	return nil
}

func freePlacement(places []placement, used *[8]bool) (placement, bool) {
	for _, p := range places {
		if p.start+p.size > uint32(len(used)) || slices.Contains(used[p.start:p.start+p.size], true) {
			continue
		}
		for k := p.start; k < p.start+p.size; k++ {
			used[k] = true
		}
		return p, true
	}
	return placement{}, false
}

// giID numbers a GPU instance by where it sits, so that ids are stable and,
// as on real boards, not simply 0, 1, 2 in creation order: the full GPU is 0,
// half-GPU instances 1-2, quarter ones 3-6, single slices 7-14.
func giID(p placement) int {
	switch {
	case p.size >= 7:
		return 0
	case p.size >= 3:
		return 1 + int(p.start)/4
	case p.size == 2:
		return 3 + int(p.start)/2
	}
	return 7 + int(p.start)
}
