package driver

// Kind is what a driver file is for.
type Kind string

// The kinds of file.
const (
	Library    Kind = "library"     // a native (64-bit) shared library
	Library32  Kind = "library32"   // a 32-bit (compat32) shared library
	Binary     Kind = "binary"      // a program
	IPC        Kind = "ipc"         // a daemon's socket or the MPS pipe dir
	Firmware   Kind = "firmware"    // a GSP firmware file
	Config     Kind = "config"      // an ICD, vendor or X configuration file
	XorgModule Kind = "xorg-module" // an X server module (nvidia_drv.so, GLX)
)

// File is one host file a container gets.
type File struct {
	// Kind is what the file is for.
	Kind Kind `json:"kind"`
	// Name is what was looked for: the list name ("libcuda.so",
	// "nvidia-smi"), the IPC path, or the file's base name.
	Name string `json:"name"`
	// Path is the file inside the driver root, every symlink resolved
	// ("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15"); firmware keeps
	// the path the kernel searches ("/lib/firmware/nvidia/550.54.15/gsp_ga10x.bin"),
	// as nvidia-container-cli list prints it.
	Path string `json:"path"`
	// HostPath is where the file is on the host: the driver root joined
	// with its resolved path. It is what a mount's source is.
	HostPath string `json:"hostPath"`
	// ContainerPath is where the file goes in a container: binaries in
	// /usr/bin (as libnvidia-container mounts them), Vulkan ICD files under
	// /etc (as the NVIDIA Container Toolkit does), firmware and configs
	// where they were found, others at their Path. Libraries are given at
	// their host path; moving them to the container's own library dir
	// (libnvidia-container's directory rules) is the plan's choice.
	ContainerPath string `json:"containerPath"`
	// Soname is a library's DT_SONAME (the link the container needs);
	// empty for other kinds.
	Soname string `json:"soname,omitempty"`
}

// Warning is a file a capability needs that the host lacks, which
// libnvidia-container logs as a warning.
type Warning struct {
	// Kind is the kind of the missing file.
	Kind Kind `json:"kind"`
	// Name is what was looked for (a list name, a path, a glob).
	Name string `json:"name"`
}

// String reads like libnvidia-container's log line: "missing library
// libcuda.so", "missing compat32 library libcuda.so", "missing binary
// nvidia-smi", "missing ipc path /var/run/nvidia-persistenced/socket",
// "missing firmware path /lib/firmware/nvidia/550.54.15/gsp*.bin".
func (w Warning) String() string {
	switch w.Kind {
	case Library:
		return "missing library " + w.Name
	case Library32:
		return "missing compat32 library " + w.Name
	case IPC:
		return "missing ipc path " + w.Name
	case Firmware:
		return "missing firmware path " + w.Name
	}
	return "missing " + string(w.Kind) + " " + w.Name
}

// Files is what a set of capabilities gets from the host driver. It is a
// plain value: JSON-printable and safe to keep after the Driver is gone.
// Each list is in lookup order; nvidia-container-cli list prints Binaries,
// Libraries, Libraries32, IPCs, then Firmware (see All).
type Files struct {
	Binaries    []File `json:"binaries"`
	Libraries   []File `json:"libraries"`
	Libraries32 []File `json:"libraries32"`
	IPCs        []File `json:"ipcs"`
	Firmware    []File `json:"firmware"`
	// Configs are ICD, vendor and X configuration files and X modules,
	// which libnvidia-container leaves out and the NVIDIA Container
	// Toolkit adds.
	Configs []File `json:"configs"`
	// DriverStore are, on WSL, the files of the NVIDIA driver store
	// (Driver.WSLDriverStore) a container gets at their own paths, as the
	// NVIDIA Container Toolkit mounts them: libcuda.so.1.1, the loaders,
	// nvcubins.bin, nvidia-smi and the store's other libraries. Empty off
	// WSL.
	DriverStore []File `json:"driverStore,omitempty"`
	// Warnings name the files the capabilities need that are missing.
	Warnings []Warning `json:"warnings,omitempty"`
}

// All returns every file in nvidia-container-cli list's order: binaries,
// libraries, 32-bit libraries, IPCs, firmware, then configs and (WSL)
// the driver store files.
func (fs *Files) All() []File {
	var all []File
	for _, l := range [][]File{fs.Binaries, fs.Libraries, fs.Libraries32, fs.IPCs, fs.Firmware, fs.Configs, fs.DriverStore} {
		all = append(all, l...)
	}
	return all
}
