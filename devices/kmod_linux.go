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
)

// nvidiaModules are the kernel modules --load-kmods loads, in order.
var nvidiaModules = []string{"nvidia", "nvidia_uvm", "nvidia_modeset"}

// loadModules runs modprobe for each NVIDIA module <proc root>/modules does
// not list, when asked to, and reports whether nvidia_modeset is loaded
// afterwards. A missing, failing or timed-out modprobe is a warning, not an
// error; ctx done is an error.
func loadModules(ctx context.Context, o *NodeOptions, r *NodeReport) (bool, error) {
	loaded := loadedModules(o.Roots.Proc)
	if !o.LoadModules {
		return loaded["nvidia_modeset"], nil
	}
	prog := modprobePath(o)
	if err := findProgram(o.Roots.Driver, prog); err != nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("kernel modules not loaded: modprobe unavailable: %v", err))
		return loaded["nvidia_modeset"], nil
	}
	for _, m := range nvidiaModules {
		if loaded[m] {
			continue
		}
		out, err := runModprobe(ctx, o, prog, m)
		if ctx.Err() != nil {
			return false, fmt.Errorf("loading kernel module %s: %w", m, context.Cause(ctx))
		}
		if loaded = loadedModules(o.Roots.Proc); loaded[m] {
			r.Loaded = append(r.Loaded, m)
			continue
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s %s did not load the module (%v): %s",
			prog, m, err, strings.TrimSpace(string(out))))
	}
	return loaded["nvidia_modeset"], nil
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

// loadedModules reads the module names of /proc/modules.
func loadedModules(procRoot string) map[string]bool {
	data, _ := os.ReadFile(filepath.Join(procRoot, "modules"))
	loaded := map[string]bool{}
	for line := range strings.SplitSeq(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			loaded[f[0]] = true
		}
	}
	return loaded
}
