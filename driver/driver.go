package driver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/go-nvc/nvc/ldcache"

	"github.com/go-nvc/nvc/internal/sentinel"
)

// Defaults of Roots (see Roots.WithDefaults; the dev root defaults to
// <driver root>/dev) and of Options.
const (
	DefaultRoot     = "/"
	DefaultLDCache  = "/etc/ld.so.cache"
	DefaultProcRoot = "/proc"
	DefaultSysRoot  = "/sys"
	// DefaultPath is the binary search path when Options.Path is empty.
	DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	// DefaultMPSPipeDir is where the MPS control daemon keeps its pipes
	// unless CUDA_MPS_PIPE_DIRECTORY says otherwise.
	DefaultMPSPipeDir = "/tmp/nvidia-mps"
)

// Sentinel errors.
var (
	// ErrNoDriver: the NVIDIA driver is not there. It is the same value
	// as devices.ErrNoDriver.
	ErrNoDriver = sentinel.ErrNoDriver
	// ErrNoVersion: neither NVML, nor procfs, nor a libcuda or
	// libnvidia-ml file name in the cache gave the driver version. It
	// matches ErrNoDriver.
	ErrNoVersion = sentinel.Mark(errors.New("driver version not found"), sentinel.ErrNoDriver)
	// ErrUnknownCUDAVersion: the CUDA driver version is only known
	// through NVML, and NVML was not given or failed.
	ErrUnknownCUDAVersion = errors.New("CUDA driver version unknown")
	// ErrNotSupported: the operation needs a kernel feature or an
	// architecture this host lacks. It is the same value as
	// ldcache.ErrNotSupported.
	ErrNotSupported = sentinel.ErrNotSupported
)

// Options say where the host driver is. A nil *Options means defaults.
type Options struct {
	// Roots say where the driver (Roots.Driver), its ld.so.cache, procfs
	// (for <proc>/driver/nvidia/version) and /dev (only /dev/dxg, WSL, is
	// looked at) are. Zero: the running host (see Roots.WithDefaults).
	Roots Roots
	// NVML, when set, gives the driver and CUDA versions. Open calls its
	// Init and Shutdown; inside a session already open (NVML nests them,
	// see devices.Options.WithNVML) NVML does not start again. Nil: no
	// NVML (CUDAVersion is then unknown; CUDAInfo gives the table answer).
	NVML NVMLVersions
	// Path is the binary search path, as $PATH, applied inside the driver
	// root; an empty component means ".". nvidia-container-cli uses its
	// own $PATH; the package reads no environment, so a CLI passes it
	// here. Empty: DefaultPath.
	Path string
	// MPSPipeDir is the MPS pipe directory inside the driver root (a CLI passes
	// $CUDA_MPS_PIPE_DIRECTORY). Empty: DefaultMPSPipeDir.
	MPSPipeDir string
	// FirmwarePath is the kernel's extra firmware search dir
	// (firmware_class.path), searched first, inside the driver root.
	// Empty: none.
	FirmwarePath string
	// KernelRelease is `uname -r`, for /lib/firmware/<release>. Empty: the
	// running kernel's.
	KernelRelease string
	// GOARCH selects the cache architectures (native and compat32).
	// Empty: runtime.GOARCH.
	GOARCH string
	// NoGLVND looks up the non-GLVND GL libraries (libGL.so, libEGL.so …)
	// instead of the GLVND vendor ones, like libnvidia-container's
	// no-glvnd option. False: GLVND.
	NoGLVND bool
	// NoPersistenced, NoFabricManager, NoGSPFirmware and NoMPS leave out
	// the persistenced socket, the fabric manager socket, the GSP firmware,
	// and the MPS binaries and pipe dir, like nvidia-container-cli's
	// --no-persistenced, --no-fabricmanager, --no-gsp-firmware and the
	// no-mps driver option. False: included.
	NoPersistenced, NoFabricManager, NoGSPFirmware, NoMPS bool
	// ToolkitLibraries also finds what the NVIDIA Container Toolkit's CDI
	// discovery finds and libnvidia-container does not (nvidia-ctk cdi
	// generate sets it): with video, libvdpau_nvidia.so.<version> in the
	// vdpau/ dir of the driver's library dir, which the cache never
	// lists; with compute, libnvidia-nvvm70.so.* (R575 and later), whose
	// name does not end in the driver version. False: libnvidia-container's
	// rules alone, as nvidia-container-cli list prints them.
	ToolkitLibraries bool
	// LibrarySearchPaths are dirs inside the driver root searched, in
	// order, for a driver library the loader cache (or, without one, the
	// scan of StandardLibraryDirs) does not give: <dir>/<name>.<driver
	// version>, under the same checks as a cache entry (nvidia-ctk cdi
	// generate --library-search-path). Nil: none.
	LibrarySearchPaths []string
}

// Driver is an opened host driver: its version and the ld.so.cache entries
// of its libraries. It is safe for concurrent use.
type Driver struct {
	opts    Options
	root    string // absolute, clean
	version Version
	cudaErr error
	wsl     bool
	store   string // the NVIDIA driver store dir on WSL (WSLDriverStore)
	// native and compat32 index the cache's entries of the two
	// architectures by list name, in file order.
	native, compat32 cacheIndex
	// elfMemo keeps what was read from each library file (elfKey →
	// elfInfo), so that later Files calls read only file metadata.
	elfMemo sync.Map
	// linkedDirs are the directory paths whose walk met a symlink, a hint
	// for the next Files call (string → struct{}).
	linkedDirs sync.Map
	// dirMemo keeps symlink and missing-name lookups by directory
	// (string → *dirMemo), valid while the directory's ctime is unchanged.
	dirMemo sync.Map
	// ldLibs are the loader cache's readings of the libraries read, by
	// path inside the root (string → *ldcache.Library)
	ldLibs sync.Map
}

// Open reads the host driver's version and its ld.so.cache.
func Open(opts *Options) (*Driver, error) {
	o, err := withDefaults(opts)
	if err != nil {
		return nil, err
	}
	d := &Driver{opts: o, root: o.Roots.Driver}
	if err := d.loadCache(); err != nil {
		return nil, err
	}
	d.wsl = exists(filepath.Join(o.Roots.Dev, "dxg"))
	if d.wsl {
		d.findDriverStore()
	}
	if err := d.findVersion(); err != nil {
		return nil, err
	}
	return d, nil
}

func withDefaults(opts *Options) (Options, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	o.Roots = o.Roots.WithDefaults()
	def(&o.Path, DefaultPath)
	def(&o.MPSPipeDir, DefaultMPSPipeDir)
	def(&o.GOARCH, runtime.GOARCH)
	if o.KernelRelease == "" {
		o.KernelRelease = kernelRelease()
	}
	root, err := filepath.Abs(o.Roots.Driver)
	if err != nil {
		return o, fmt.Errorf("opening driver root %q: %w", o.Roots.Driver, err)
	}
	o.Roots.Driver = root
	return o, nil
}

// loadCache reads the ld.so.cache inside the root and indexes it.
func (d *Driver) loadCache() error {
	native, ok := ldcache.ArchOf(d.opts.GOARCH)
	if !ok {
		return fmt.Errorf("opening driver: architecture %q: %w", d.opts.GOARCH, ErrNotSupported)
	}
	c, err := ldcache.OpenInRoot(d.root, d.opts.Roots.LDCache)
	if errors.Is(err, fs.ErrNotExist) {
		c, err = scanLibraryDirs(d.root, d.opts.GOARCH)
	}
	if err != nil {
		return fmt.Errorf("opening driver: %w", err)
	}
	d.native = newCacheIndex(c, native)
	if a32, ok := ldcache.Compat32Of(d.opts.GOARCH); ok {
		d.compat32 = newCacheIndex(c, a32)
	}
	return nil
}

// StandardLibraryDirs returns the directories a driver root without an
// ld.so.cache is searched in, as the NVIDIA Container Toolkit searches a
// driver root first: besides them, the root's ld.so.conf and the loader's
// trusted directories are scanned (/lib, /usr/lib, and the multiarch dirs
// of a Debian root), as ldconfig would to write the cache.
func StandardLibraryDirs() []string { return slices.Clone(standardLibraryDirs) }

var standardLibraryDirs = []string{
	"/usr/lib64",
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
	"/usr/lib/x86_64-linux-gnu/nvidia/current", "/usr/lib/aarch64-linux-gnu/nvidia/current",
	"/lib64",
	"/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
	"/lib/x86_64-linux-gnu/nvidia/current", "/lib/aarch64-linux-gnu/nvidia/current",
}

// scanLibraryDirs stands in for a missing ld.so.cache: the cache ldconfig
// would write for root from standardLibraryDirs, its ld.so.conf and the
// trusted dirs, built in memory; root is only read (no link is made).
func scanLibraryDirs(root, goarch string) (*ldcache.Cache, error) {
	var dirs []string
	for _, d := range standardLibraryDirs {
		if fi, err := os.Stat(filepath.Join(root, d)); err == nil && fi.IsDir() {
			dirs = append(dirs, d)
		}
	}
	c, err := ldcache.Build(context.Background(), root, &ldcache.BuildOptions{Dirs: dirs, GOARCH: goarch, NoLinks: true})
	if err != nil {
		return nil, fmt.Errorf("no ld.so.cache, scanning the standard library dirs: %w", err)
	}
	return c, nil
}

// Root returns the driver root, as an absolute host path.
func (d *Driver) Root() string { return d.root }

// Roots returns the roots the driver was opened with, defaulted (see
// Roots.WithDefaults), the driver root made absolute.
func (d *Driver) Roots() Roots { return d.opts.Roots }

// Version returns the driver's version facts.
func (d *Driver) Version() Version { return d.version }

// CUDAVersion returns the CUDA driver version ("12.4"), or an error
// matching ErrUnknownCUDAVersion that says why it is unknown.
func (d *Driver) CUDAVersion() (string, error) {
	if d.version.CUDA == "" {
		return "", d.cudaErr
	}
	return d.version.CUDA, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// WSL reports whether the host is WSL2 (/dev/dxg exists), where libraries
// are selected by WSL's rules and firmware is not looked up.
func (d *Driver) WSL() bool { return d.wsl }

// LDCacheLibrary returns the loader cache's reading (ldcache.ReadLibrary)
// of the library at hostPath, a File's HostPath, made when Files read
// the file to select it; false when no library was read there. It is
// tied to the file read: ldcache.BuildOptions.Known takes it only for a
// file that is that one (a bind mount of it), so a file replaced since
// is read again. A nil Driver has none.
func (d *Driver) LDCacheLibrary(hostPath string) (ldcache.Library, bool) {
	if d == nil {
		return ldcache.Library{}, false
	}
	p := hostPath
	if d.root != "/" {
		rest, ok := strings.CutPrefix(hostPath, d.root)
		if !ok || !strings.HasPrefix(rest, "/") {
			return ldcache.Library{}, false
		}
		p = rest
	}
	v, ok := d.ldLibs.Load(p)
	if !ok {
		return ldcache.Library{}, false
	}
	return *v.(*ldcache.Library), true
}
