package fakehost

import (
	"errors"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// defaultNVML returns the mock server for o.Machine. (Owned by the devices work.)
func defaultNVML(o Options) (nvml.Interface, error) {
	return nil, errors.New("nvml mock: not wired yet")
}

// writeGPUs writes the procfs and dev trees for h.NVML. (Owned by the devices work.)
func writeGPUs(h *Host, o Options) error {
	return errors.New("gpu trees: not generated yet")
}
