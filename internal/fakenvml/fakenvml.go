package fakenvml

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/go-nvc/nvc/devices"
)

// DefaultDriverVersion is the driver version New reports when Options leave
// it empty: the version of go-nvml's DGX mocks.
const DefaultDriverVersion = "550.54.15"

// Errors of New and of the server's calls.
var (
	// ErrUnknownMachine is matched by the error New returns for a machine
	// name it does not know.
	ErrUnknownMachine = errors.New("unknown mock machine")
	// ErrInvalidArgument is NVML's ERROR_INVALID_ARGUMENT: an index out of
	// range, or a call the device's kind does not answer.
	ErrInvalidArgument = errors.New("ERROR_INVALID_ARGUMENT")
)

// Options change the server New builds. A nil *Options means defaults.
type Options struct {
	// DriverVersion is what SystemDriverVersion reports. Empty:
	// DefaultDriverVersion.
	DriverVersion string
	// CUDADriverVersion is what SystemCUDADriverVersion reports, as NVML
	// encodes it (12040 is CUDA 12.4). Zero: the CUDA version released with
	// DriverVersion's branch (12.4 for 550), or 12.4 for a branch not known.
	CUDADriverVersion int
	// MIG puts GPUs in MIG mode. The key is a GPU index; the value lists that
	// GPU's MIG devices by profile name, created in order: "3g.20gb" is a GPU
	// instance whose single compute instance spans it, "1c.3g.20gb" a
	// one-slice compute instance in its own 3-slice GPU instance. An empty
	// list enables MIG with no devices. Nil: no GPU is in MIG mode.
	MIG map[int][]string
}

// board is one DGX's GPU model and the PCI buses of its eight GPU slots.
type board struct {
	name, brand, arch string
	ccMajor, ccMinor  int
	memoryMB          uint64
	buses             []uint32
	profiles          []giProfile // by profile id
}

// giProfile is a GPU instance profile: its name, size, how many fit, where
// they can be placed, and the slice counts of its compute instance
// profiles (by profile id).
type giProfile struct {
	name       string
	slices     uint32
	instances  uint32
	memoryMB   uint64
	placements []placement
	ciSlices   []uint32
}

type placement struct{ start, size uint32 }

// Machines lists the machine names New accepts, sorted.
func Machines() []string {
	names := make([]string, 0, len(boards))
	for n := range boards {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// uuidSpace is the name space of the UUIDs the server hands out (UUID v5
// over "<machine>/gpu<i>[/gi<g>/ci<c>]").
var uuidSpace = uuid.MustParse("2f1d6c8e-5b7a-4c2e-9a43-6e0d9b1c7a10")

// GPUUUID is the UUID New gives GPU index i of machine.
func GPUUUID(machine string, i int) string {
	return "GPU-" + uuid.NewSHA1(uuidSpace, fmt.Appendf(nil, "%s/gpu%d", machine, i)).String()
}

// MIGUUID is the UUID New gives the MIG device with GPU instance gi and
// compute instance ci on GPU index i of machine.
func MIGUUID(machine string, i, gi, ci int) string {
	name := fmt.Appendf(nil, "%s/gpu%d/gi%d/ci%d", machine, i, gi, ci)
	return "MIG-" + uuid.NewSHA1(uuidSpace, name).String()
}

// Server is a simulated NVML; it implements devices.NVMLInterface.
type Server struct {
	driver string
	cuda   int
	gpus   []*gpu
}

var _ devices.NVMLInterface = (*Server)(nil)

// New returns the NVML of machine ("dgxa100", "dgxh100", "dgxh200" or
// "dgxb200"): eight GPUs, minors 0-7, every one MIG-capable, those named in
// opts.MIG in MIG mode with their MIG devices.
func New(machine string, opts *Options) (*Server, error) {
	b, ok := boards[machine]
	if !ok {
		return nil, fmt.Errorf("building NVML mock: %w %q (known: %s)",
			ErrUnknownMachine, machine, strings.Join(Machines(), ", "))
	}
	o := opts.WithDefaults()
	s := &Server{driver: o.DriverVersion, cuda: o.CUDADriverVersion}
	for i, bus := range b.buses {
		s.gpus = append(s.gpus, &gpu{board: &b, index: i, bus: bus, uuid: GPUUUID(machine, i)})
	}
	if err := applyMIG(s, machine, o.MIG); err != nil {
		return nil, fmt.Errorf("building NVML mock %s: %w", machine, err)
	}
	return s, nil
}

// WithDefaults is opts (nil: the zero Options) with every empty field set
// to its documented default.
func (opts *Options) WithDefaults() Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.DriverVersion == "" {
		o.DriverVersion = DefaultDriverVersion
	}
	if o.CUDADriverVersion == 0 {
		o.CUDADriverVersion = cudaForDriver(o.DriverVersion)
	}
	return o
}

// cudaByBranch maps a driver branch to the CUDA version it shipped with.
var cudaByBranch = map[string]int{
	"525": 12000, "530": 12010, "535": 12020, "545": 12030, "550": 12040,
	"555": 12050, "560": 12060, "565": 12070, "570": 12080, "575": 12090,
	"580": 13000,
}

func cudaForDriver(version string) int {
	branch, _, _ := strings.Cut(version, ".")
	if v, ok := cudaByBranch[branch]; ok {
		return v
	}
	return 12040
}

// Init and Shutdown always succeed.
func (s *Server) Init() error     { return nil }
func (s *Server) Shutdown() error { return nil }

// SystemDriverVersion is Options.DriverVersion.
func (s *Server) SystemDriverVersion() (string, error) { return s.driver, nil }

// SystemCUDADriverVersion is Options.CUDADriverVersion.
func (s *Server) SystemCUDADriverVersion() (int, error) { return s.cuda, nil }

// DeviceCount is eight.
func (s *Server) DeviceCount() (int, error) { return len(s.gpus), nil }

// DeviceByIndex is GPU i.
func (s *Server) DeviceByIndex(i int) (devices.NVMLDevice, error) {
	if i < 0 || i >= len(s.gpus) {
		return nil, fmt.Errorf("GPU index %d: %w", i, ErrInvalidArgument)
	}
	return s.gpus[i], nil
}

// ProfileNames lists the GPU instance profiles s's GPUs offer, by the names
// Options.MIG takes, in NVML's profile id order.
func ProfileNames(s *Server) []string {
	b := s.gpus[0].board
	names := make([]string, len(b.profiles))
	for i, p := range b.profiles {
		names[i] = p.name
	}
	return names
}
