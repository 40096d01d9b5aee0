//go:build cgo

package devices

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/dl"
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlSymbols are the C functions of libnvidia-ml.so.1 that discovery
// reaches through go-nvml, each with the older names go-nvml falls back
// to. go-nvml binds them lazily, so calling one the library lacks aborts
// the whole process ("symbol lookup error"); a library missing any of them
// is refused before Init runs.
var nvmlSymbols = [][]string{
	{"nvmlInit_v2", "nvmlInit"},
	{"nvmlShutdown"},
	{"nvmlErrorString"},
	{"nvmlSystemGetDriverVersion"},
	{"nvmlSystemGetCudaDriverVersion"},
	{"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"},
	{"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"},
	{"nvmlDeviceGetMinorNumber"},
	{"nvmlDeviceGetUUID"},
	{"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"},
	{"nvmlDeviceGetName"},
	{"nvmlDeviceGetBrand"},
	{"nvmlDeviceGetCudaComputeCapability"},
}

// Functions drivers older than R450 lack. Without them the library is
// still used, and discovery sees ERROR_FUNCTION_NOT_FOUND for the calls
// that would reach them, as libnvidia-container does.
var (
	nvmlArchSymbols = [][]string{{"nvmlDeviceGetArchitecture"}}
	nvmlMIGSymbols  = [][]string{
		{"nvmlDeviceGetMigMode"}, {"nvmlDeviceGetMaxMigDeviceCount"},
		{"nvmlDeviceGetMigDeviceHandleByIndex"}, {"nvmlDeviceGetGpuInstanceId"},
		{"nvmlDeviceGetComputeInstanceId"}, {"nvmlDeviceGetAttributes_v2", "nvmlDeviceGetAttributes"},
	}
)

// canLoadNVML: a cgo build loads libnvidia-ml.so.1 through go-nvml.
const canLoadNVML = true

// loadedNVML is libnvidia-ml.so.1 loaded for one Discover call.
type loadedNVML struct {
	api   NVMLInterface
	probe *dl.DynamicLibrary // keeps the library loaded until close
	file  *os.File           // the library pinned inside the driver root; nil when found by name
}

// openNVML loads the NVML library discovery should use and checks that it
// exports every function discovery calls. Under a driver root other than
// "/" (or with NVMLLibrary) the file is resolved inside the root, must be
// a regular file, and is loaded through its descriptor, so no symlink or
// rename can substitute another file.
func openNVML(o *Options) (*loadedNVML, error) {
	l := &loadedNVML{}
	name, what := nvmlSoname, nvmlSoname
	if o.NVMLLibrary != "" || filepath.Clean(o.Roots.Driver) != "/" {
		f, err := findNVML(o)
		if err != nil {
			return nil, err
		}
		l.file = f
		name, what = "/proc/thread-self/fd/"+strconv.Itoa(int(f.Fd())), f.Name()
	}
	if err := l.load(name, what); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// loadNVMLFile loads the library open at f (which it then owns).
func loadNVMLFile(f *os.File) (*loadedNVML, error) {
	l := &loadedNVML{file: f}
	if err := l.load("/proc/thread-self/fd/"+strconv.Itoa(int(f.Fd())), f.Name()); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

func (l *loadedNVML) load(name, what string) error {
	l.probe = dl.New(name, dl.RTLD_LAZY|dl.RTLD_LOCAL)
	if err := l.probe.Open(); err != nil {
		l.probe = nil
		return fmt.Errorf("loading %s: %w", what, err)
	}
	if err := lookupAll(l.probe, nvmlSymbols); err != nil {
		return fmt.Errorf("loading %s: %w", what, err)
	}
	noArch := lookupAll(l.probe, nvmlArchSymbols) != nil
	noMIG := lookupAll(l.probe, nvmlMIGSymbols) != nil
	var api nvml.Interface = nvml.New(nvml.WithLibraryPath(name))
	if noArch || noMIG {
		api = limitedNVML{Interface: api, noArch: noArch, noMIG: noMIG}
	}
	l.api = NewNVMLFromGoNVML(api)
	return nil
}

func (l *loadedNVML) close() {
	if l.probe != nil {
		l.probe.Close()
	}
	if l.file != nil {
		l.file.Close()
	}
}

// lookupAll checks that lib exports one name of every group.
func lookupAll(lib *dl.DynamicLibrary, groups [][]string) error {
	for _, names := range groups {
		if !lookupAny(lib, names) {
			return fmt.Errorf("symbol %s not found", strings.Join(names, " or "))
		}
	}
	return nil
}

func lookupAny(lib *dl.DynamicLibrary, names []string) bool {
	for _, n := range names {
		if lib.Lookup(n) == nil {
			return true
		}
	}
	return false
}

// limitedNVML is an NVML library that lacks the architecture or MIG
// functions: the calls that would reach them return
// ERROR_FUNCTION_NOT_FOUND instead of aborting the process.
type limitedNVML struct {
	nvml.Interface
	noArch, noMIG bool
}

func (l limitedNVML) DeviceGetHandleByIndex(i int) (nvml.Device, nvml.Return) {
	d, ret := l.Interface.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return d, ret
	}
	return limitedDevice{Device: d, noArch: l.noArch, noMIG: l.noMIG}, ret
}

type limitedDevice struct {
	nvml.Device
	noArch, noMIG bool
}

func (d limitedDevice) GetArchitecture() (nvml.DeviceArchitecture, nvml.Return) {
	if d.noArch {
		return 0, nvml.ERROR_FUNCTION_NOT_FOUND
	}
	return d.Device.GetArchitecture()
}

func (d limitedDevice) GetMigMode() (int, int, nvml.Return) {
	if d.noMIG {
		return 0, 0, nvml.ERROR_FUNCTION_NOT_FOUND
	}
	return d.Device.GetMigMode()
}
