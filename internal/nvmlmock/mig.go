//go:build cgo

package nvmlmock

import (
	"fmt"
	"math"
	"sort"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/go-nvc/nvc/internal/fakenvml"
)

// migDevice is one GPU instance with its one compute instance.
type migDevice struct {
	profile string // e.g. "3g.20gb" or "1c.3g.20gb"
	gi      nvml.GpuInstanceProfileInfo
	ci      nvml.ComputeInstanceProfileInfo
	giID    int
	ciID    int
}

// applyMIG enables MIG on the GPUs named in layout and creates their devices.
func applyMIG(s *server.Server, machine string, layout map[int][]string) error {
	gpus := make([]int, 0, len(layout))
	for i := range layout {
		gpus = append(gpus, i)
	}
	sort.Ints(gpus)
	for _, i := range gpus {
		if i < 0 || i >= len(s.Devices) {
			return fmt.Errorf("MIG layout names GPU %d; the machine has %d", i, len(s.Devices))
		}
		if err := enableMIG(s.Devices[i].(*server.Device), machine, i, layout[i]); err != nil {
			return fmt.Errorf("MIG layout of GPU %d: %w", i, err)
		}
	}
	return nil
}

func enableMIG(d *server.Device, machine string, i int, profiles []string) error {
	d.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	var used [8]bool
	var devs []migDevice
	for _, name := range profiles {
		m, err := createInstance(d, name, &used)
		if err != nil {
			return err
		}
		devs = append(devs, m)
	}
	sort.Slice(devs, func(a, b int) bool { return devs[a].giID < devs[b].giID })
	handles := make([]nvml.Device, len(devs))
	for k, m := range devs {
		handles[k] = migHandle(d, machine, i, m)
	}
	wireMIGHandles(d, handles, maxMIGDevices(d))
	wireInstanceLookup(d)
	return nil
}

// createInstance creates the GPU and compute instance of one profile name
// through the mock's own calls, at the first free placement.
func createInstance(d *server.Device, name string, used *[8]bool) (migDevice, error) {
	ciSlices, giName := fakenvml.SplitProfile(name)
	pid, ok := giProfileByName(d, giName)
	if !ok {
		return migDevice{}, fmt.Errorf("unknown MIG profile %q for %s", name, d.Config.Name)
	}
	m := migDevice{profile: name, gi: d.Config.MIGProfiles.GpuInstanceProfiles[pid]}
	if ciSlices == 0 {
		ciSlices = int(m.gi.SliceCount)
	}
	place, ok := freePlacement(d.Config.MIGProfiles.GpuInstancePlacements[pid], used)
	if !ok {
		return migDevice{}, fmt.Errorf("no free placement for MIG profile %q", name)
	}
	if m.ci, ok = ciProfile(d, pid, ciSlices); !ok {
		return migDevice{}, fmt.Errorf("no %d-slice compute instance in MIG profile %q", ciSlices, name)
	}
	gi, _ := d.CreateGpuInstanceWithPlacement(&m.gi, &place)
	m.giID = giID(place)
	gi.(*server.GpuInstance).Info.Id = uint32(m.giID)
	ci, _ := gi.CreateComputeInstance(&m.ci)
	m.ciID = int(ci.(*server.ComputeInstance).Info.Id)
	return m, nil
}

func giProfileByName(d *server.Device, name string) (int, bool) {
	ids := make([]int, 0, len(d.Config.MIGProfiles.GpuInstanceProfiles))
	for id := range d.Config.MIGProfiles.GpuInstanceProfiles {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		if giProfileName(id, d.Config.MIGProfiles.GpuInstanceProfiles[id], d.Config.MemoryMB) == name {
			return id, true
		}
	}
	return 0, false
}

// giProfileName names a GPU instance profile as nvidia-smi does:
// "<slices>g.<memory>gb" and a suffix for the media-engine variants.
func giProfileName(id int, p nvml.GpuInstanceProfileInfo, totalMB uint64) string {
	suffix := map[int]string{
		nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1:   "+me",
		nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME:  "-me",
		nvml.GPU_INSTANCE_PROFILE_2_SLICE_NO_ME:  "-me",
		nvml.GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME: "+me.all",
		nvml.GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME: "+me.all",
	}[id]
	return fmt.Sprintf("%dg.%dgb%s", p.SliceCount, memoryGB(p.MemorySizeMB, totalMB), suffix)
}

// memoryGB is the memory figure in a profile name. Sizes that are whole GiB
// print as such (H100, H200, B200); the A100 and A30 sizes are rounded up to
// the eighth of the board's memory they occupy, as go-nvlib does.
func memoryGB(mb, totalMB uint64) uint64 {
	if mb%1024 == 0 {
		return mb / 1024
	}
	eighths := math.Ceil(float64(mb) / float64(totalMB) * 8)
	totalGB := float64((totalMB + 1023) / 1024)
	return uint64(math.Round(eighths / 8 * totalGB))
}

func freePlacement(places []nvml.GpuInstancePlacement, used *[8]bool) (nvml.GpuInstancePlacement, bool) {
	for _, p := range places {
		if p.Start+p.Size > uint32(len(used)) || anyUsed(used[p.Start:p.Start+p.Size]) {
			continue
		}
		for k := p.Start; k < p.Start+p.Size; k++ {
			used[k] = true
		}
		return p, true
	}
	return nvml.GpuInstancePlacement{}, false
}

func anyUsed(slots []bool) bool {
	for _, u := range slots {
		if u {
			return true
		}
	}
	return false
}

// giID numbers a GPU instance by where it sits, so that ids are stable and,
// as on real boards, not simply 0, 1, 2 in creation order: the full GPU is 0,
// half-GPU instances 1-2, quarter ones 3-6, single slices 7-14.
func giID(p nvml.GpuInstancePlacement) int {
	switch {
	case p.Size >= 7:
		return 0
	case p.Size >= 3:
		return 1 + int(p.Start)/4
	case p.Size == 2:
		return 3 + int(p.Start)/2
	}
	return 7 + int(p.Start)
}

// ciProfile finds the compute instance profile of the given size inside GPU
// instance profile pid, preferring the lowest profile id.
func ciProfile(d *server.Device, pid, slices int) (nvml.ComputeInstanceProfileInfo, bool) {
	profiles := d.Config.MIGProfiles.ComputeInstanceProfiles[pid]
	ids := make([]int, 0, len(profiles))
	for id := range profiles {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		if int(profiles[id].SliceCount) == slices {
			return profiles[id], true
		}
	}
	return nvml.ComputeInstanceProfileInfo{}, false
}

// migHandle is the MIG device handle NVML returns for one GPU instance and
// compute instance of parent.
func migHandle(parent *server.Device, machine string, i int, m migDevice) nvml.Device {
	name := parent.Config.Name + " MIG " + m.profile
	id := MIGUUID(machine, i, m.giID, m.ciID)
	attrs := nvml.DeviceAttributes{
		MultiprocessorCount:       m.ci.MultiprocessorCount,
		SharedCopyEngineCount:     m.ci.SharedCopyEngineCount,
		SharedDecoderCount:        m.ci.SharedDecoderCount,
		SharedEncoderCount:        m.ci.SharedEncoderCount,
		SharedJpegCount:           m.ci.SharedJpegCount,
		SharedOfaCount:            m.ci.SharedOfaCount,
		GpuInstanceSliceCount:     m.gi.SliceCount,
		ComputeInstanceSliceCount: m.ci.SliceCount,
		MemorySizeMB:              m.gi.MemorySizeMB,
	}
	h := &mock.Device{}
	h.IsMigDeviceHandleFunc = func() (bool, nvml.Return) { return true, nvml.SUCCESS }
	h.GetDeviceHandleFromMigDeviceHandleFunc = func() (nvml.Device, nvml.Return) { return parent, nvml.SUCCESS }
	h.GetGpuInstanceIdFunc = func() (int, nvml.Return) { return m.giID, nvml.SUCCESS }
	h.GetComputeInstanceIdFunc = func() (int, nvml.Return) { return m.ciID, nvml.SUCCESS }
	h.GetUUIDFunc = func() (string, nvml.Return) { return id, nvml.SUCCESS }
	h.GetNameFunc = func() (string, nvml.Return) { return name, nvml.SUCCESS }
	h.GetAttributesFunc = func() (nvml.DeviceAttributes, nvml.Return) { return attrs, nvml.SUCCESS }
	h.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		return nvml.Memory{Total: m.gi.MemorySizeMB << 20, Free: m.gi.MemorySizeMB << 20}, nvml.SUCCESS
	}
	return h
}

// wireInstanceLookup answers GetGpuInstanceById on the parent and
// GetComputeInstanceById on its GPU instances, which the mock leaves out.
func wireInstanceLookup(d *server.Device) {
	d.GetGpuInstanceByIdFunc = func(id int) (nvml.GpuInstance, nvml.Return) {
		d.RLock()
		defer d.RUnlock()
		for gi := range d.GpuInstances {
			if int(gi.Info.Id) == id {
				return gi, nvml.SUCCESS
			}
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	for gi := range d.GpuInstances {
		wireComputeLookup(gi)
	}
}

func wireComputeLookup(gi *server.GpuInstance) {
	gi.GetComputeInstanceByIdFunc = func(id int) (nvml.ComputeInstance, nvml.Return) {
		gi.RLock()
		defer gi.RUnlock()
		for ci := range gi.ComputeInstances {
			if int(ci.Info.Id) == id {
				return ci, nvml.SUCCESS
			}
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
}

// ProfileNames names the GPU instance profiles of GPU d of a server New
// built, by profile id, as the MIG layouts of Options take them.
func ProfileNames(d *server.Device) map[int]string {
	names := make(map[int]string, len(d.Config.MIGProfiles.GpuInstanceProfiles))
	for id, p := range d.Config.MIGProfiles.GpuInstanceProfiles {
		names[id] = giProfileName(id, p, d.Config.MemoryMB)
	}
	return names
}
