package devices

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/internal/tegrahost"
)

// nvidiaModules are the kernel modules --load-kmods loads, in order.
var nvidiaModules = []string{"nvidia", "nvidia_uvm", "nvidia_modeset"}

// loadModules loads the NVIDIA modules that are not loaded, when asked
// to, by nvidia-modprobe's rules, and returns the set loaded afterwards. A
// module is loaded when <proc root>/modules lists it or
// <sys root>/module/<name>/initstate exists. modprobe runs only when sysfs
// lists an NVIDIA PCI display controller (vendor 0x10de, class 0x03xxxx),
// or when sysfs cannot be enumerated (then nvidia-modprobe tries anyway),
// or for nvidia_modeset on a Tegra SoC. A missing, failing or timed-out
// modprobe is a warning, not an error; ctx done is an error.
func loadModules(ctx context.Context, o *NodeOptions, r *NodeReport) (map[string]bool, error) {
	loaded := loadedModules(o.Roots)
	if !o.LoadModules {
		return loaded, nil
	}
	want := modulesToLoad(o.Roots, loaded, r)
	if len(want) == 0 {
		return loaded, nil
	}
	prog := modprobePath(o)
	if err := findProgram(o.Roots.Driver, prog); err != nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("kernel modules not loaded: modprobe unavailable: %v", err))
		return loaded, nil
	}
	for _, m := range want {
		out, err := runModprobe(ctx, o, prog, m)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("loading kernel module %s: %w", m, context.Cause(ctx))
		}
		if loaded = loadedModules(o.Roots); loaded[m] {
			r.Loaded = append(r.Loaded, m)
			continue
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s %s did not load the module (%v): %s",
			prog, m, err, strings.TrimSpace(string(out))))
	}
	return loaded, nil
}

// modulesToLoad lists the modules not loaded that nvidia-modprobe would
// try to load: all of them when sysfs (roots.Sys) lists an NVIDIA display
// controller or cannot be read, only nvidia_modeset on a Tegra host (the
// module's one rule, internal/tegrahost), none otherwise. roots are
// defaulted.
func modulesToLoad(roots driver.Roots, loaded map[string]bool, r *NodeReport) []string {
	sysRoot := roots.Sys
	var missing []string
	for _, m := range nvidiaModules {
		if !loaded[m] {
			missing = append(missing, m)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	present, err := nvidiaDisplayPresent(sysRoot)
	switch {
	case err != nil:
		r.Warnings = append(r.Warnings, fmt.Sprintf("PCI devices not enumerated, loading the modules anyway: %v", err))
		return missing
	case present:
		return missing
	}
	r.Warnings = append(r.Warnings, fmt.Sprintf("kernel modules not loaded: no NVIDIA PCI display controller (vendor 0x%04x, class 0x03xxxx) in %s",
		PCIVendorNVIDIA, filepath.Join(sysRoot, "bus/pci/devices")))
	if isTegra, _ := tegrahost.IsTegra(roots.Driver, roots.Sys); isTegra && !loaded["nvidia_modeset"] {
		return []string{"nvidia_modeset"}
	}
	return nil
}

// runModprobe runs prog for module m, killed after o.ModprobeTimeout
// (zero: DefaultModprobeTimeout) or when ctx is done.
func runModprobe(ctx context.Context, o *NodeOptions, prog, m string) ([]byte, error) {
	timeout := o.ModprobeTimeout
	if timeout <= 0 {
		timeout = DefaultModprobeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := modprobeCommand(ctx, o.Roots.Driver, prog, m).CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("%w after %v", context.Cause(ctx), timeout)
	}
	return out, err
}

// modprobeCommand runs prog for module m; under a driver root other than
// "/" the child chroots into it first, as libnvidia-container's kmods
// helper does, so prog and everything it reads are the driver root's.
func modprobeCommand(ctx context.Context, root, prog, m string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, prog, m)
	cmd.WaitDelay = time.Second
	if filepath.Clean(root) != "/" {
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
		cmd.Dir = "/"
	}
	return cmd
}

// findProgram checks that prog, an absolute path, names a regular file
// inside root, resolving symlinks there.
func findProgram(root, prog string) error {
	if !filepath.IsAbs(prog) {
		return fmt.Errorf("%w: modprobe path %q is not absolute", ErrInvalid, prog)
	}
	f, err := openInRoot(root, prog)
	if err != nil {
		return err
	}
	return f.Close()
}

// modprobePath is the configured program, the kernel's
// (/proc/sys/kernel/modprobe), or /sbin/modprobe.
func modprobePath(o *NodeOptions) string {
	if o.Modprobe != "" {
		return o.Modprobe
	}
	data, err := os.ReadFile(filepath.Join(o.Roots.Proc, "sys/kernel/modprobe"))
	if p := strings.TrimSpace(string(data)); err == nil && p != "" {
		return p
	}
	return "/sbin/modprobe"
}

// loadedModules is the set of modules <proc root>/modules lists or
// <sys root>/module/<name>/initstate says are loaded (nvidia-modprobe's
// test), among the NVIDIA modules.
func loadedModules(roots driver.Roots) map[string]bool {
	roots = roots.WithDefaults()
	data, _ := os.ReadFile(filepath.Join(roots.Proc, "modules"))
	loaded := map[string]bool{}
	for line := range strings.SplitSeq(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			loaded[f[0]] = true
		}
	}
	for _, m := range nvidiaModules {
		if _, err := os.Stat(filepath.Join(roots.Sys, "module", m, "initstate")); err == nil {
			loaded[m] = true
		}
	}
	return loaded
}
