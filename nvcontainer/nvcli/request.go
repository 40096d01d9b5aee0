package nvcli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

// ConfigureFlags are the options of nvidia-container-cli configure that
// make up a request, as they were given on its command line. Repeatable
// options keep one entry per occurrence; each entry may itself be a
// comma-separated list, as nvidia-container-cli joins them with commas.
type ConfigureFlags struct {
	// Devices are the --device values. Nil: no GPU, but the driver files
	// and control nodes (a request with request.DevicesNone).
	Devices []string
	// Capabilities are the classes of --compute, --utility, --video,
	// --graphics, --display, --ngx and --compat32. Empty: none, as with
	// nvidia-container-cli (only nvidiactl, procfs and firmware).
	Capabilities capabilities.Set
	// Requirements are the --require expressions; at most
	// request.MaxRequirements. Nil: none.
	Requirements []string
	// MIGConfig and MIGMonitor are the --mig-config and --mig-monitor
	// values. Nil: none.
	MIGConfig, MIGMonitor []string
	// IMEXChannels are the --imex-channel values. Nil: none.
	IMEXChannels []string
	// NoCntlibs is --no-cntlibs: the same as --cuda-compat-mode=disabled.
	NoCntlibs bool
	// CUDACompatModes are the --cuda-compat-mode values. "disabled" (or
	// NoCntlibs) wins over the others; two different other values are an
	// error. Nil: request.CompatDefault.
	CUDACompatModes []string
}

// Request returns the request the flags make, as nvidia-container-cli
// configure reads them: device IDs are passed on unvalidated for
// [nvcontainer.NewPlan] to resolve (so "0,all" still checks that 0
// exists), a single "all" is request.DevicesAll, and no --device at all is
// request.DevicesNone. Errors are about the flags alone, in this order:
// too many requirements ([PrefixInput]), an IMEX channel that is not a
// number below 2^20 ([PrefixIMEX], matching request.ErrInvalidDevice) or
// more channels than request.MaxIMEXChannels ([PrefixInput]), an unknown
// or conflicting compat mode ([PrefixInput]).
func (f *ConfigureFlags) Request() (*request.Request, error) {
	if len(f.Requirements) > request.MaxRequirements {
		return nil, wrap(PrefixInput, request.ErrTooManyRequirements)
	}
	chans, err := request.ParseIMEXChannels(strings.Join(f.IMEXChannels, ","))
	if errors.Is(err, request.ErrInvalidDevice) {
		return nil, wrap(PrefixIMEX, err)
	} else if err != nil {
		return nil, wrap(PrefixInput, err)
	}
	mode, err := f.compatMode()
	if err != nil {
		return nil, wrap(PrefixInput, err)
	}
	return &request.Request{
		Devices:        cliDevices(f.Devices),
		Capabilities:   f.Capabilities,
		Requirements:   slices.Clone(f.Requirements),
		MIGConfig:      strings.Join(f.MIGConfig, ","),
		MIGMonitor:     strings.Join(f.MIGMonitor, ","),
		IMEXChannels:   chans,
		CUDACompatMode: mode,
	}, nil
}

// IMEXChannels returns the channels of list's --imex-channel values (each
// a comma list); an error is a [PrefixIMEX] error. (configure's are read by
// [ConfigureFlags.Request].)
func IMEXChannels(values []string) ([]uint32, error) {
	chans, err := request.ParseIMEXChannels(strings.Join(values, ","))
	return chans, wrap(PrefixIMEX, err)
}

// cliDevices keeps --device IDs as given (empty items dropped), in the
// order nvidia-container-cli's select_devices walks them.
func cliDevices(values []string) request.Devices {
	var ids []string
	for _, v := range values {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
	}
	switch {
	case len(ids) == 0:
		return request.Devices{Mode: request.DevicesNone}
	case len(ids) == 1 && strings.EqualFold(ids[0], "all"):
		return request.Devices{Mode: request.DevicesAll}
	}
	return request.Devices{Mode: request.DevicesList, IDs: ids}
}

func (f *ConfigureFlags) compatMode() (request.CUDACompatMode, error) {
	disabled := f.NoCntlibs
	var other request.CUDACompatMode
	for _, v := range f.CUDACompatModes {
		switch m := request.CUDACompatMode(v); m {
		case request.CompatDisabled:
			disabled = true
		case request.CompatMount, request.CompatLdconfig:
			if other != request.CompatDefault && other != m {
				return "", fmt.Errorf("conflicting --cuda-compat-mode values %q and %q", other, m)
			}
			other = m
		default:
			return "", fmt.Errorf("invalid --cuda-compat-mode %q (want mount, ldconfig or disabled)", v)
		}
	}
	if disabled {
		return request.CompatDisabled, nil
	}
	return other, nil
}
