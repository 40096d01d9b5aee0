package fakehost

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/go-nvc/nvc/internal/fstree"
)

// The nvidia-caps minor table, as the driver's nv-caps.c lays it out: the
// NVLink fabric-mgmt cap, MIG config and monitor, then for each of 32 GPUs
// and each of 15 GPU instances the GI access cap followed by its 8 compute
// instance caps, and the IMEX management cap last.
const (
	capsGPUs         = 32
	capsGIs          = 15
	capsCIs          = 8
	capConfigMinor   = 1
	capMonitorMinor  = 2
	capPerGPU        = capsGIs * (1 + capsCIs)
	capIMEXMgmtMinor = 3 + capsGPUs*capPerGPU
	capModeConfig    = 0o400
	capModeReadable  = 0o444
	procDriver       = "proc/driver/nvidia"
	procCaps         = procDriver + "/capabilities"
)

// giMinor and ciMinor are the nvidia-caps minors of a GI and CI access cap.
func giMinor(gpu, gi int) int     { return 3 + gpu*capPerGPU + gi*(1+capsCIs) }
func ciMinor(gpu, gi, ci int) int { return giMinor(gpu, gi) + 1 + ci }

func procFile(path string, mode fs.FileMode, content string) fstree.Entry {
	return fstree.Entry{Kind: fstree.File, Path: path, Mode: mode, Content: []byte(content)}
}

func procDir(path string) fstree.Entry {
	return fstree.Entry{Kind: fstree.Dir, Path: path, Mode: 0o755}
}

// procEntries is the procfs tree: driver version and parameters, one
// directory per GPU, the capability files and minors, /proc/devices and
// /proc/modules.
func procEntries(version string, gpus []gpuFacts) []fstree.Entry {
	e := []fstree.Entry{
		procFile(procDriver+"/version", 0o444, versionFile(version)),
		procFile(procDriver+"/params", 0o444, paramsFile),
		procFile(procDriver+"/registry", 0o644, "Binary: \"\"\n"),
		procFile("proc/devices", 0o444, devicesFile),
		procFile("proc/modules", 0o444, modulesFile),
		procFile("proc/driver/nvidia-caps/mig-minors", 0o444, migMinorsFile()),
		procFile("proc/driver/nvidia-caps/nvlink-minors", 0o444, "fabric-mgmt 0\n"),
		procFile("proc/driver/nvidia-caps/sys-minors", 0o444, fmt.Sprintf("fabric-imex-mgmt %d\n", capIMEXMgmtMinor)),
		capFile(procCaps+"/mig/config", capConfigMinor, capModeConfig),
		capFile(procCaps+"/mig/monitor", capMonitorMinor, capModeReadable),
		capFile(procCaps+"/fabric-imex-mgmt", capIMEXMgmtMinor, capModeConfig),
	}
	for _, g := range gpus {
		e = append(e, gpuProcEntries(version, g)...)
	}
	return e
}

func versionFile(version string) string {
	return "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + version +
		"  Tue Mar  5 22:23:56 UTC 2024\n" +
		"GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n"
}

func capFile(path string, minor int, mode fs.FileMode) fstree.Entry {
	return procFile(path, 0o444, fmt.Sprintf("DeviceFileMinor: %d\nDeviceFileMode: %d\nDeviceFileModify: 1\n", minor, mode))
}

// gpuProcEntries is gpus/<bus id>/ and, for a MIG-capable GPU,
// capabilities/gpu<minor>/mig/ with an access file per GPU and compute
// instance in use.
func gpuProcEntries(version string, g gpuFacts) []fstree.Entry {
	base := procDriver + "/gpus/" + g.procName
	e := []fstree.Entry{
		procFile(base+"/information", 0o444, informationFile(version, g)),
		procFile(base+"/registry", 0o644, "Binary: \"\"\n"),
		procFile(base+"/power", 0o444, powerFile),
	}
	if !g.migCapable {
		return e
	}
	mig := fmt.Sprintf("%s/gpu%d/mig", procCaps, g.minor)
	e = append(e, procDir(mig))
	for _, m := range g.migs {
		gi := fmt.Sprintf("%s/gi%d", mig, m.gi)
		e = append(e, capFile(gi+"/access", giMinor(g.minor, m.gi), capModeReadable),
			capFile(fmt.Sprintf("%s/ci%d/access", gi, m.ci), ciMinor(g.minor, m.gi, m.ci), capModeReadable))
	}
	return e
}

// gspArchs are the architectures whose information file has a "GPU
// Firmware" line: Hopper and later, as NVML names them.
var gspArchs = []string{"Hopper", "Blackwell", "Rubin"}

// informationFile is gpus/<bus id>/information in the layout of the
// driver's nv-procfs.c, GSP firmware line included from Hopper on.
func informationFile(version string, g gpuFacts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Model: \t\t %s\n", g.name)
	fmt.Fprintf(&b, "IRQ:   \t\t %d\n", 180+g.index)
	fmt.Fprintf(&b, "GPU UUID: \t %s\n", g.uuid)
	fmt.Fprintf(&b, "Video BIOS: \t %s\n", "96.00.89.00.01")
	fmt.Fprintf(&b, "Bus Type: \t %s\n", "PCIe")
	fmt.Fprintf(&b, "DMA Size: \t %d bits\n", 47)
	fmt.Fprintf(&b, "DMA Mask: \t 0x%x\n", uint64(1)<<47-1)
	fmt.Fprintf(&b, "Bus Location: \t %04x:%02x:%02x.%x\n", g.domain, g.bus, g.dev, 0)
	fmt.Fprintf(&b, "Device Minor: \t %d\n", g.minor)
	if slices.Contains(gspArchs, g.arch) {
		fmt.Fprintf(&b, "GPU Firmware: \t %s\n", version)
	}
	fmt.Fprintf(&b, "GPU Excluded:\t %s\n", "No")
	return b.String()
}

// migMinorsFile is /proc/driver/nvidia-caps/mig-minors: every MIG cap the
// driver could create, with its minor.
func migMinorsFile() string {
	var b strings.Builder
	fmt.Fprintf(&b, "config %d\nmonitor %d\n", capConfigMinor, capMonitorMinor)
	for gpu := range capsGPUs {
		for gi := range capsGIs {
			fmt.Fprintf(&b, "gpu%d/gi%d/access %d\n", gpu, gi, giMinor(gpu, gi))
			for ci := range capsCIs {
				fmt.Fprintf(&b, "gpu%d/gi%d/ci%d/access %d\n", gpu, gi, ci, ciMinor(gpu, gi, ci))
			}
		}
	}
	return b.String()
}

// paramsFile is /proc/driver/nvidia/params of a 550 driver with default
// module parameters.
const paramsFile = `ResmanDebugLevel: 4294967295
RmLogonRC: 1
ModifyDeviceFiles: 1
DeviceFileUID: 0
DeviceFileGID: 0
DeviceFileMode: 438
InitializeSystemMemoryAllocations: 1
UsePageAttributeTable: 4294967295
EnableMSI: 1
EnablePCIeGen3: 0
MemoryPoolSize: 0
KMallocHeapMaxSize: 0
VMallocHeapMaxSize: 0
IgnoreMMIOCheck: 0
TCEBypassMode: 0
EnableStreamMemOPs: 0
EnableUserNUMAManagement: 1
NvLinkDisable: 0
RmProfilingAdminOnly: 1
PreserveVideoMemoryAllocations: 0
EnableS0ixPowerManagement: 0
S0ixPowerManagementVideoMemoryThreshold: 256
DynamicPowerManagement: 3
DynamicPowerManagementVideoMemoryThreshold: 200
RegisterPCIDriver: 1
EnablePCIERelaxedOrderingMode: 0
EnableResizableBar: 0
EnableGpuFirmware: 18
EnableGpuFirmwareLogs: 2
RmNvlinkBandwidthLinkCount: 0
EnableDbgBreakpoint: 0
OpenRmEnableUnsupportedGpus: 0
DmaRemapPeerMmio: 1
ImexChannelCount: 2048
CreateImexChannel0: 0
GrdmaPciTopoCheckOverride: 0
RegistryDwords: ""
RegistryDwordsPerDevice: ""
RmMsg: ""
GpuBlacklist: ""
TemporaryFilePath: ""
ExcludedGpus: ""
`

// devicesFile is /proc/devices of a DGX with the driver loaded.
var devicesFile = fmt.Sprintf(`Character devices:
  1 mem
  4 /dev/vc/0
  4 tty
  4 ttyS
  5 /dev/tty
  5 /dev/console
  5 /dev/ptmx
  7 vcs
 10 misc
 13 input
 21 sg
 29 fb
128 ptm
136 pts
180 usb
189 usb_device
%d nvidia
%d nvidia-modeset
%d nvidiactl
202 cpu/msr
203 cpu/cpuid
%d nvidia-caps-imex-channels
238 nvidia-nvswitch
239 nvidia-nvlink
240 aux
241 hidraw
248 nvme-generic
249 nvme
%d nvidia-uvm
%d nvidia-caps

Block devices:
  7 loop
  8 sd
  9 md
259 blkext
`, MajorNvidia, MajorNvidia, MajorNvidia, MajorIMEX, MajorUVM, MajorCaps)

const modulesFile = `nvidia_uvm 4956160 0 - Live 0x0000000000000000 (PO)
nvidia_drm 122880 0 - Live 0x0000000000000000 (PO)
nvidia_modeset 1355776 1 nvidia_drm, Live 0x0000000000000000 (PO)
nvidia 54116352 2 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (PO)
`

const powerFile = `Runtime D3 status:          Not supported
Video Memory:               Active

GPU Hardware Support:
 Video Memory Self Refresh: Not supported
 Video Memory Off:          Not supported

Power Limits:
 Default:                   N/A milliwatts
 GPU Boost:                 N/A milliwatts
`
