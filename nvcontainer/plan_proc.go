package nvcontainer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/go-nvc/nvc/capabilities"
	"github.com/go-nvc/nvc/devices"
)

const (
	// maxProcFile bounds a copied procfs file; real ones are a few KiB.
	maxProcFile = 1 << 20
	// appProfileDir is where the driver reads application profiles; with
	// graphics a plan puts a tmpfs there.
	appProfileDir = "/etc/nvidia/nvidia-application-profiles-rc.d"
	// appProfileFile is the profile the plan writes into appProfileDir.
	appProfileFile = "10-container.conf"
)

// procFiles are the /proc/driver/nvidia files copied into the mask.
var procFiles = []string{"params", "version", "registry"}

// maskOptions are the flags of the plan's tmpfs mounts.
func maskOptions() []string { return []string{"nosuid", "nodev", "noexec"} }

// planProcfs masks /proc/driver/nvidia with a tmpfs holding copies of the
// host's params (ModifyDeviceFiles forced to 0), version and registry;
// GPU and MIG binds are added to it by planNodes. Skipped on WSL.
func (pl *planner) planProcfs() error {
	if pl.host.Driver.WSL() {
		return nil
	}
	t := Tmpfs{Target: devices.ProcDriver, Mode: 0o555, Options: maskOptions(), Files: []TmpfsFile{}}
	for _, name := range procFiles {
		f, ok, err := pl.readProcFile(name)
		if err != nil {
			return stageErr(StageDetection, err)
		}
		if !ok {
			pl.warn("missing procfs file " + path.Join(devices.ProcDriver, name))
			continue
		}
		t.Files = append(t.Files, f)
	}
	pl.proc = len(pl.p.Tmpfs)
	pl.p.Tmpfs = append(pl.p.Tmpfs, t)
	return nil
}

// readProcFile copies one host procfs file; a missing one is skipped.
func (pl *planner) readProcFile(name string) (TmpfsFile, bool, error) {
	host := pl.dev.HostPath(path.Join(devices.ProcDriver, name))
	f, err := os.Open(host)
	if errors.Is(err, fs.ErrNotExist) {
		return TmpfsFile{}, false, nil
	}
	if err != nil {
		return TmpfsFile{}, false, fmt.Errorf("copying %s: %w", host, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return TmpfsFile{}, false, fmt.Errorf("copying %s: %w", host, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxProcFile+1))
	if err == nil && len(data) > maxProcFile {
		err = fmt.Errorf("larger than %d bytes", maxProcFile)
	}
	if err != nil {
		return TmpfsFile{}, false, fmt.Errorf("copying %s: %w", host, err)
	}
	content := string(data)
	if name == "params" {
		content = strings.Replace(content, "ModifyDeviceFiles: 1", "ModifyDeviceFiles: 0", 1)
	}
	return TmpfsFile{Name: name, Mode: uint32(st.Mode().Perm()), Content: content}, true, nil
}

// planAppProfile puts a tmpfs on the application profile dir with
// graphics, holding a profile that limits EGL to the selected GPUs
// (libnvidia-container's update_app_profile). GPUs with minors of 64 or
// more do not fit the mask and are left out of it.
func (pl *planner) planAppProfile() {
	if !pl.exp.Has(capabilities.Graphics) || pl.host.Driver.WSL() {
		return
	}
	t := Tmpfs{Target: appProfileDir, Mode: 0o555, Options: maskOptions(), Files: []TmpfsFile{}}
	if mask := pl.eglMask(); mask != 0 {
		t.Files = append(t.Files, TmpfsFile{Name: appProfileFile, Mode: 0o555, Content: appProfile(mask)})
	}
	pl.p.Tmpfs = append(pl.p.Tmpfs, t)
}

func (pl *planner) eglMask() uint64 {
	var mask uint64
	for _, g := range pl.sel.GPUs {
		if g.Minor < 64 {
			mask |= 1 << g.Minor
		}
	}
	return mask
}

// appProfile returns the application profile libnvidia-container writes
// for a container whose GPUs' minors are the bits of mask.
func appProfile(mask uint64) string {
	return fmt.Sprintf(`{ "profiles": [{"name": "_container_", "settings": ["EGLVisibleDGPUDevices", 0x%x]}], "rules": [{"pattern": [], "profile": "_container_"}]}`, mask)
}
