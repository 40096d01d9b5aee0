package nvcontainer_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/fakehost"
	"github.com/go-nvc/nvc/nvcontainer"
)

// drmOf lists a plan's /dev/dri device mounts and links, "target:for".
func drmOf(p *nvcontainer.Plan) (nodes, links []string) {
	for _, m := range p.Mounts {
		if strings.HasPrefix(m.Target, "/dev/dri/") {
			nodes = append(nodes, m.Target+":"+m.For)
		}
	}
	for _, l := range p.Symlinks {
		if strings.HasPrefix(l.Path, "/dev/dri/") {
			links = append(links, l.Path+"->"+l.Target+":"+l.For)
		}
	}
	return nodes, links
}

// TestPlanDRM checks when a plan binds the selected GPUs' DRM nodes and
// links their by-path names: with graphics or display, for each selected
// GPU not in MIG mode, the nodes sysfs lists under its PCI device (never
// the decoy VGA's card0); with NoDevbind only their cgroup rules; a
// malformed sysfs dev attribute is a warning.
func TestPlanDRM(t *testing.T) {
	gpu2 := []string{"/dev/dri/card3:2", "/dev/dri/renderD130:2"}
	gpu2Links := []string{"/dev/dri/by-path/pci-0000:47:00.0-card->../card3:2", "/dev/dri/by-path/pci-0000:47:00.0-render->../renderD130:2"}
	h := newTestHost(t, &fakehost.Options{MIG: map[int][]string{1: {"3g.20gb"}}})
	for _, tc := range []struct {
		name        string
		env         []string
		opts        *nvcontainer.PlanOptions
		nodes, link []string
	}{
		{"graphics", []string{"NVIDIA_VISIBLE_DEVICES=2", "NVIDIA_DRIVER_CAPABILITIES=graphics"}, nil, gpu2, gpu2Links},
		{"display", []string{"NVIDIA_VISIBLE_DEVICES=2", "NVIDIA_DRIVER_CAPABILITIES=display"}, nil, gpu2, gpu2Links},
		{"all", []string{"NVIDIA_VISIBLE_DEVICES=2", "NVIDIA_DRIVER_CAPABILITIES=all"}, nil, gpu2, gpu2Links},
		{"compute", []string{"NVIDIA_VISIBLE_DEVICES=2", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"}, nil, nil, nil},
		{"MIG mode", []string{"NVIDIA_VISIBLE_DEVICES=1", "NVIDIA_DRIVER_CAPABILITIES=graphics"}, nil, nil, nil},
		{"no devbind", []string{"NVIDIA_VISIBLE_DEVICES=2", "NVIDIA_DRIVER_CAPABILITIES=graphics"}, &nvcontainer.PlanOptions{NoDevbind: true}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := h.plan(t, privReq(t, tc.env...), "", tc.opts)
			nodes, links := drmOf(p)
			assert.Equal(t, tc.nodes, nodes, "DRM nodes")
			assert.Equal(t, tc.link, links, "by-path links")
			var rules []string
			for _, r := range p.CgroupRules {
				if r.Major == 226 {
					rules = append(rules, fmt.Sprintf("%d:%d", r.Major, r.Minor))
				}
			}
			want := []string(nil)
			if tc.nodes != nil || tc.name == "no devbind" {
				want = []string{"226:3", "226:130"}
			}
			assert.Equal(t, want, rules, "DRM cgroup rules")
		})
	}
	t.Run("malformed sysfs", func(t *testing.T) {
		h := newTestHost(t, nil)
		dev := h.fake.SysRoot + "/bus/pci/devices/0000:47:00.0/drm/card3/dev"
		require.NoError(t, os.Remove(dev))
		require.NoError(t, os.WriteFile(dev, []byte("226\n"), 0o444))
		p := h.plan(t, privReq(t, "NVIDIA_VISIBLE_DEVICES=2", "NVIDIA_DRIVER_CAPABILITIES=graphics"), "", nil)
		nodes, _ := drmOf(p)
		assert.Empty(t, nodes, "DRM nodes")
		assert.Contains(t, strings.Join(p.Warnings, "\n"), "no DRM nodes for GPU 2", "warnings")
	})
}
