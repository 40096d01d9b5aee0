package devices_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/internal/fakenvml"
)

// picked renders a selection as "gpus=1,3 mig=1:0 all" for comparison.
func picked(s *devices.Selection) string {
	var g, m []string
	for _, x := range s.GPUs {
		g = append(g, fmt.Sprint(x.Index))
	}
	for _, x := range s.MIGDevices {
		m = append(m, fmt.Sprintf("%d:%d", x.Parent, x.Index))
	}
	out := "gpus=" + strings.Join(g, ",")
	if len(m) > 0 {
		out += " mig=" + strings.Join(m, ",")
	}
	if s.All {
		out += " all"
	}
	return out
}

func TestSelect(t *testing.T) {
	d := discover(t, mixedHost(t), devices.NVML)
	gpu2 := fakenvml.GPUUUID("dgxa100", 2)
	mig := d.GPUs[1].MIGDevices[1].UUID
	for _, tc := range []struct {
		ids, want, unknown string
	}{
		{ids: "", want: "gpus="},
		{ids: " , ,", want: "gpus="},
		{ids: "all", want: "gpus=0,1,2,3,4,5,6,7 mig=1:0,1:1,3:0 all"},
		{ids: "ALL,bogus", want: "gpus=0,1,2,3,4,5,6,7 mig=1:0,1:1,3:0 all"},
		{ids: "3,0", want: "gpus=3,0"},
		{ids: " 0 ,, 1 ,0", want: "gpus=0,1"},
		{ids: "7", want: "gpus=7"},
		{ids: "8", unknown: "8"},
		{ids: "-1", unknown: "-1"},
		{ids: "+1", unknown: "+1"},
		{ids: gpu2, want: "gpus=2"},
		{ids: strings.ToUpper(gpu2), want: "gpus=2"},
		{ids: "gpu-" + gpu2[4:], want: "gpus=2"},
		{ids: gpu2[:len(gpu2)-1], unknown: gpu2[:len(gpu2)-1]},
		{ids: "GPU-", unknown: "GPU-"},
		{ids: "00000000:47:00.0", want: "gpus=2"},
		{ids: "0000:47:00.0", want: "gpus=2"},
		{ids: "0:47:0.0", want: "gpus=2"},
		{ids: "0:4E:0", want: "gpus=3"},
		{ids: "0:bd:00.1", want: "gpus=7"},
		{ids: "0000:48:00.0", unknown: "0000:48:00.0"},
		{ids: "0000:047:00.0", unknown: "0000:047:00.0"},
		{ids: "0000:4g:00.0", unknown: "0000:4g:00.0"},
		{ids: mig, want: "gpus=1 mig=1:1"},
		{ids: strings.ToLower(mig), want: "gpus=1 mig=1:1"},
		{ids: "MIG-", unknown: "MIG-"},
		{ids: "1:0", want: "gpus=1 mig=1:0"},
		{ids: "1:1,1,3:0", want: "gpus=1,3 mig=1:1,3:0"},
		{ids: "0,1:0", want: "gpus=0,1 mig=1:0"},
		{ids: "1:2", unknown: "1:2"},
		{ids: "0:0", unknown: "0:0"},
		{ids: "9:0", unknown: "9:0"},
		{ids: "1:x", unknown: "1:x"},
		{ids: "0,none", unknown: "none"},
	} {
		t.Run(tc.ids, func(t *testing.T) {
			s, err := d.Select(tc.ids)
			if tc.unknown != "" {
				var idErr *devices.DeviceIDError
				assert.ErrorIs(t, err, devices.ErrUnknownDevice, "Select(%q) = %v", tc.ids, s)
				if assert.ErrorAs(t, err, &idErr, "Select(%q)", tc.ids) {
					assert.Equal(t, tc.unknown, idErr.ID, "Select(%q): unknown device", tc.ids)
				}
				assert.EqualError(t, err, "unknown device: "+tc.unknown, "Select(%q)", tc.ids)
				return
			}
			require.NoError(t, err, "Select(%q)", tc.ids)
			assert.Equal(t, tc.want, picked(s), "Select(%q) = %v", tc.ids, s)
		})
	}
}

func TestSelectCarriesDevices(t *testing.T) {
	d := discover(t, mixedHost(t), devices.NVML)
	s, err := d.Select("1:1")
	require.NoError(t, err)
	assert.Equal(t, []devices.GPU{d.GPUs[1]}, s.GPUs, "selection does not carry the discovered values")
	assert.Equal(t, d.GPUs[1].MIGDevices[1:], s.MIGDevices, "selection does not carry the discovered values")
}

func TestSelectWithoutGPUs(t *testing.T) {
	// libnvidia-container skips selection when NVML reports no GPU.
	var d devices.Host
	s, err := d.Select("bogus,0")
	require.NoError(t, err, "Select on no GPUs")
	assert.Empty(t, s.GPUs, "Select on no GPUs")
}

func TestSelectMIGAccess(t *testing.T) {
	h := mixedHost(t)
	d := discover(t, h, devices.NVML)
	// Make GPU 5 look not MIG-capable, as an older board would be.
	d.GPUs[5].MIGCapable = false
	for _, tc := range []struct {
		visible, ids, want, refused string
	}{
		{visible: "all", ids: "all", want: "gpus=0,1,2,3,4,6,7 all"},
		{visible: "all", ids: "", want: "gpus="},
		{visible: "0,5", ids: "all", want: "gpus=0 all"},
		{visible: "5", ids: "ALL", want: "gpus= all"},
		{visible: "1:0", ids: "all", refused: "cannot enable %s with specific MIG devices selected: all"},
		{visible: "3,1:0", ids: ",all", refused: "cannot enable %s with specific MIG devices selected: all"},
		{visible: "all", ids: "0", refused: "only 'all' devices are currently supported: 0"},
		{visible: "all", ids: "1,all", refused: "only 'all' devices are currently supported: 1"},
	} {
		vis, err := d.Select(tc.visible)
		require.NoError(t, err, tc.visible)
		for kind, sel := range map[string]func(string, *devices.Selection) (*devices.Selection, error){
			"mig-config": d.SelectMIGConfig, "mig-monitor": d.SelectMIGMonitor,
		} {
			s, err := sel(tc.ids, vis)
			if tc.refused != "" {
				want := strings.ReplaceAll(tc.refused, "%s", kind)
				assert.ErrorIs(t, err, devices.ErrInvalid, "%s %q on %q", kind, tc.ids, tc.visible)
				assert.EqualError(t, err, want, "%s %q on %q", kind, tc.ids, tc.visible)
				continue
			}
			if assert.NoError(t, err, "%s %q on %q", kind, tc.ids, tc.visible) {
				assert.Equal(t, tc.want, picked(s), "%s %q on %q = %v", kind, tc.ids, tc.visible, s)
			}
		}
	}
}

// TestLacksMIGUUIDs: a host whose MIG devices have no UUID (procfs) lacks
// them; one with every UUID (NVML), or with no MIG device, does not.
func TestLacksMIGUUIDs(t *testing.T) {
	assert.True(t, (&devices.Host{GPUs: []devices.GPU{{UUID: "GPU-a"}, {MIGDevices: []devices.MIGDevice{{UUID: "MIG-x"}, {GI: 2}}}}}).LacksMIGUUIDs())
	assert.False(t, (&devices.Host{GPUs: []devices.GPU{{MIGDevices: []devices.MIGDevice{{UUID: "MIG-x"}}}}}).LacksMIGUUIDs())
	assert.False(t, (&devices.Host{GPUs: []devices.GPU{{UUID: "GPU-a"}}}).LacksMIGUUIDs())
}
