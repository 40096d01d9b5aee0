package devices_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

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
		s, err := d.Select(tc.ids)
		if tc.unknown != "" {
			var idErr *devices.DeviceIDError
			if !errors.Is(err, devices.ErrUnknownDevice) || !errors.As(err, &idErr) || idErr.ID != tc.unknown ||
				err.Error() != "unknown device: "+tc.unknown {
				t.Errorf("Select(%q) = %v, %v; want unknown device %q", tc.ids, s, err, tc.unknown)
			}
			continue
		}
		if err != nil || picked(s) != tc.want {
			t.Errorf("Select(%q) = %v, %v; want %s", tc.ids, s, err, tc.want)
		}
	}
}

func TestSelectCarriesDevices(t *testing.T) {
	d := discover(t, mixedHost(t), devices.NVML)
	s, err := d.Select("1:1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.GPUs, []devices.GPU{d.GPUs[1]}) || !reflect.DeepEqual(s.MIGDevices, d.GPUs[1].MIGDevices[1:]) {
		t.Errorf("selection does not carry the discovered values: %+v", s)
	}
}

func TestSelectWithoutGPUs(t *testing.T) {
	// libnvidia-container skips selection when NVML reports no GPU.
	var d devices.Host
	if s, err := d.Select("bogus,0"); err != nil || len(s.GPUs) != 0 {
		t.Errorf("Select on no GPUs = %+v, %v", s, err)
	}
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
		if err != nil {
			t.Fatal(err)
		}
		for kind, sel := range map[string]func(string, *devices.Selection) (*devices.Selection, error){
			"mig-config": d.SelectMIGConfig, "mig-monitor": d.SelectMIGMonitor,
		} {
			s, err := sel(tc.ids, vis)
			if tc.refused != "" {
				want := strings.ReplaceAll(tc.refused, "%s", kind)
				if !errors.Is(err, devices.ErrInvalid) || err.Error() != want {
					t.Errorf("%s %q on %q = %v; want %q", kind, tc.ids, tc.visible, err, want)
				}
				continue
			}
			if err != nil || picked(s) != tc.want {
				t.Errorf("%s %q on %q = %v, %v; want %s", kind, tc.ids, tc.visible, s, err, tc.want)
			}
		}
	}
}
