package devices

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// discoverProcfs fills h from the driver's proc files alone. GPUs are
// ordered by PCI address, which is NVML's default order. Excluded GPUs
// ("GPU Excluded: Yes") are left out, as NVML leaves them out.
func discoverProcfs(h *Host, f *procFacts) error {
	if err := checkDriverLoaded(f); err != nil {
		return err
	}
	infos, err := readInformation(f)
	if err != nil {
		return err
	}
	h.GPUs = make([]GPU, len(infos))
	for i, in := range infos {
		g := &h.GPUs[i]
		*g = GPU{Index: i, Minor: in.minor, UUID: in.uuid, Model: in.model,
			BusID: formatBusID(in.domain, in.bus, in.device)}
		if err := procfsMIG(g, f); err != nil {
			return err
		}
		f.fillGPU(g, in.domain, in.bus, in.device)
	}
	return nil
}

// checkDriverLoaded fails with ErrNoDriver when the driver's version file
// is missing: the kernel module is not loaded. What the file says is
// package driver's to read (driver.Driver.Version).
func checkDriverLoaded(f *procFacts) error {
	vpath := f.path(ProcDriver + "/version")
	_, err := os.Stat(vpath)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrNoDriver, err)
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", vpath, err)
	}
	return nil
}

// readInformation parses every gpus/*/information file, in PCI order.
func readInformation(f *procFacts) ([]information, error) {
	dir := f.path(ProcDriver + "/gpus")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var infos []information
	for _, e := range ents {
		p := filepath.Join(dir, e.Name(), "information")
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		in, err := parseInformation(data)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		if !in.excluded {
			infos = append(infos, in)
		}
	}
	slices.SortFunc(infos, func(a, b information) int {
		return cmp.Or(cmp.Compare(a.domain, b.domain), cmp.Compare(a.bus, b.bus), cmp.Compare(a.device, b.device))
	})
	return infos, nil
}

// procfsMIG reads capabilities/gpu<minor>/mig: its presence makes the GPU
// MIG-capable, and each gi<G>/ci<C> directory pair is a MIG device, ordered
// by GPU then compute instance id.
func procfsMIG(g *GPU, f *procFacts) error {
	dir := f.path(fmt.Sprintf("%s/gpu%d/mig", ProcCapabilities, g.Minor))
	gis, err := numberedDirs(dir, "gi")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	g.MIGCapable, g.MIGEnabled = true, len(gis) > 0
	for _, gi := range gis {
		cis, err := numberedDirs(filepath.Join(dir, fmt.Sprintf("gi%d", gi)), "ci")
		if err != nil {
			return err
		}
		for _, ci := range cis {
			g.MIGDevices = append(g.MIGDevices, MIGDevice{GI: gi, CI: ci})
		}
	}
	return nil
}

// numberedDirs lists the sorted N of dir's subdirectories named prefixN.
func numberedDirs(dir, prefix string) ([]int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ids []int
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		id, err := strconv.Atoi(rest)
		if ok && err == nil && id >= 0 && e.IsDir() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}
