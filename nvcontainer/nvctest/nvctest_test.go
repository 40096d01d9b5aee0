package nvctest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/testutil"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
)

// Every machine, with and without MIG, opens through procfs and through
// its fake NVML, and both see the same GPUs with the machine's stable
// UUIDs.
func TestMachines(t *testing.T) {
	require.Equal(t, []nvctest.Machine{nvctest.DGXA100, nvctest.DGXB200, nvctest.DGXH100, nvctest.DGXH200, nvctest.JetsonOrin, nvctest.WSL}, nvctest.Machines())
	for _, m := range nvctest.Machines() {
		if m.IsTegra() || m == nvctest.WSL {
			continue // no NVML, no procfs driver: TestJetsonOrin, TestWSLMachine
		}
		for _, mig := range []bool{false, true} {
			t.Run(string(m)+map[bool]string{false: "", true: "/mig"}[mig], func(t *testing.T) {
				t.Parallel()
				var opts *nvctest.Options
				if mig {
					p := m.MIGProfiles()
					require.NotEmpty(t, p)
					opts = &nvctest.Options{MIG: map[int][]string{0: {p[0], p[0]}, 3: nil}}
				}
				sim := nvctest.NewHost(t, m, opts)
				assert.Equal(t, m, sim.Machine)
				assert.Equal(t, nvctest.DefaultDriverVersion, sim.DriverVersion)
				viaProc, err := sim.Open(devices.Procfs)
				require.NoError(t, err)
				viaNVML, err := sim.Open(devices.NVML)
				require.NoError(t, err)
				assert.Equal(t, devices.Procfs, viaProc.Devices.Backend)
				assert.Equal(t, devices.NVML, viaNVML.Devices.Backend)
				require.Len(t, viaProc.Devices.GPUs, 8)
				require.Len(t, viaNVML.Devices.GPUs, 8)
				for i, g := range viaProc.Devices.GPUs {
					n := viaNVML.Devices.GPUs[i]
					assert.Equal(t, m.GPUUUID(i), g.UUID, "GPU %d", i)
					assert.Equal(t, n.UUID, g.UUID, "GPU %d", i)
					assert.Equal(t, n.BusID, g.BusID, "GPU %d", i)
					assert.Equal(t, filepath.Join("/dev", "nvidia"+itoa(i)), g.Node.Path)
					assert.Len(t, g.MIGDevices, len(n.MIGDevices), "GPU %d", i)
				}
				if mig {
					require.Len(t, viaNVML.Devices.GPUs[0].MIGDevices, 2)
					md := viaNVML.Devices.GPUs[0].MIGDevices[1]
					assert.Equal(t, m.MIGUUID(0, md.GI, md.CI), md.UUID)
					assert.Empty(t, viaNVML.Devices.GPUs[3].MIGDevices)
				}
				assert.Equal(t, sim.CUDAVersion, viaNVML.Driver.Version().CUDA)
			})
		}
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

// Two hosts of one machine are the same host: same bus ids and UUIDs.
func TestStable(t *testing.T) {
	a, err := nvctest.NewHost(t, nvctest.DGXB200, nil).Open(devices.NVML)
	require.NoError(t, err)
	b, err := nvctest.NewHost(t, nvctest.DGXB200, nil).Open(devices.NVML)
	require.NoError(t, err)
	require.Equal(t, len(a.Devices.GPUs), len(b.Devices.GPUs))
	for i := range a.Devices.GPUs {
		assert.Equal(t, a.Devices.GPUs[i].UUID, b.Devices.GPUs[i].UUID)
		assert.Equal(t, a.Devices.GPUs[i].BusID, b.Devices.GPUs[i].BusID)
	}
	assert.Equal(t, "00000000:07:00.0", mustOpen(t, nvctest.DGXA100).GPUs[0].BusID)
}

func mustOpen(t *testing.T, m nvctest.Machine) *devices.Host {
	h, err := nvctest.NewHost(t, m, nil).Open(devices.Procfs)
	require.NoError(t, err)
	return h.Devices
}

func TestParseMachine(t *testing.T) {
	m, err := nvctest.ParseMachine("dgxh200")
	require.NoError(t, err)
	assert.Equal(t, nvctest.DGXH200, m)
	_, err = nvctest.ParseMachine("dgx1")
	require.ErrorIs(t, err, nvctest.ErrUnknownMachine)
	assert.EqualError(t, err, `unknown simulated machine "dgx1" (want one of dgxa100, dgxb200, dgxh100, dgxh200, jetson-orin, wsl)`)
	_, err = nvctest.Generate(t.TempDir(), "dgx1", nil)
	require.ErrorIs(t, err, nvctest.ErrUnknownMachine)
}

// GenerateTemp leaves nothing behind on error, and Remove deletes the tree.
func TestGenerateTemp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	_, err := nvctest.GenerateTemp(nvctest.DGXA100, &nvctest.Options{MIG: map[int][]string{0: {"no-such-profile"}}})
	require.Error(t, err)
	ents, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, ents)

	sim, err := nvctest.GenerateTemp(nvctest.DGXA100, &nvctest.Options{Layout: nvctest.Fedora, DriverVersion: "570.86.15"})
	require.NoError(t, err)
	assert.Equal(t, tmp, filepath.Dir(sim.Roots.Driver))
	assert.Equal(t, "/usr/lib64", sim.LibDir)
	d, err := driver.Open(sim.DriverOptions())
	require.NoError(t, err)
	assert.Equal(t, "570.86.15", d.Version().NVRM)
	files, err := d.Files(capabilities.Of(capabilities.Compute))
	require.NoError(t, err)
	require.NotEmpty(t, files.Libraries)
	assert.Equal(t, "/usr/lib64/libcuda.so.570.86.15", files.Libraries[0].Path)
	require.NoError(t, sim.Remove())
	assert.NoDirExists(t, sim.Roots.Driver)
}

// Generate refuses a directory that is not empty.
func TestGenerateNotEmpty(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x"), nil, 0o644))
	_, err := nvctest.Generate(dir, nvctest.DGXA100, nil)
	assert.ErrorContains(t, err, "not empty")
}

// Device nodes are plain files unless RealNodes asks for character
// devices (as root).
func TestRealNodes(t *testing.T) {
	fi, err := os.Stat(filepath.Join(nvctest.NewHost(t, nvctest.DGXH100, nil).Roots.Dev, "nvidia0"))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "%v", fi.Mode())

	testutil.RequireRoot(t)
	sim := nvctest.NewHost(t, nvctest.DGXH100, &nvctest.Options{RealNodes: true, MIG: map[int][]string{1: {"3g.40gb"}}})
	fi, err = os.Stat(filepath.Join(sim.Roots.Dev, "nvidia0"))
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeCharDevice, "%v", fi.Mode())
	assert.DirExists(t, filepath.Join(sim.Roots.Proc, "driver/nvidia/capabilities/gpu1/mig/gi1"))
}
