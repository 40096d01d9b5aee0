package nvcli

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
)

// InfoOptions are the options of nvidia-container-cli info.
type InfoOptions struct {
	// CSV writes comma-separated values, as --csv. False: the text layout.
	CSV bool
}

// infoLabels are the per-GPU lines of nvidia-container-cli info, in order.
var infoLabels = []string{"Device Index:", "Device Minor:", "Model:", "Brand:", "GPU UUID:", "Bus Location:", "Architecture:"}

// WriteInfo writes what nvidia-container-cli info prints for host: the
// driver's NVRM and CUDA versions, then for each GPU its index, minor,
// model, brand, UUID, bus location and architecture, in the CLI's text
// layout (labels padded to 15 columns, a blank line before each GPU) or,
// with opts.CSV, as two CSV tables. Values only NVML knows (brand,
// architecture, CUDA version) print as N/A when discovery used procfs.
// opts nil means the text layout.
func WriteInfo(w io.Writer, host *nvcontainer.Host, opts *InfoOptions) error {
	if host == nil || host.Driver == nil || host.Devices == nil {
		return errors.New("writing info: needs a host with a driver and devices")
	}
	csv := opts != nil && opts.CSV
	bw := bufio.NewWriter(w)
	nvrm, cuda := host.Driver.Version().NVRM, "N/A"
	if host.Devices.Backend != devices.Procfs {
		cuda = na(host.Driver.Version().CUDA)
	}
	if csv {
		fmt.Fprintf(bw, "NVRM version,CUDA version\n%s,%s\n", nvrm, cuda)
		fmt.Fprintf(bw, "\nDevice Index,Device Minor,Model,Brand,GPU UUID,Bus Location,Architecture\n")
	} else {
		fmt.Fprintf(bw, "%-15s %s\n%-15s %s\n", "NVRM version:", nvrm, "CUDA version:", cuda)
	}
	for i, gpu := range host.Devices.GPUs {
		values := []any{i, gpu.Minor, gpu.Model, na(gpu.Brand), gpu.UUID, gpu.BusID, na(gpu.ComputeCapability)}
		if csv {
			fmt.Fprintf(bw, "%d,%d,%s,%s,%s,%s,%s\n", values...)
			continue
		}
		fmt.Fprintln(bw)
		for j, label := range infoLabels {
			fmt.Fprintf(bw, "%-15s %v\n", label, values[j])
		}
	}
	return bw.Flush()
}

func na(s string) string {
	if s == "" {
		return "N/A"
	}
	return s
}
