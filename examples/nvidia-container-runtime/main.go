package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "nvidia-container-runtime: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	cfg, file, err := toolkit.FindConfig("", os.Environ())
	if err != nil {
		return err
	}
	log := openLog(cfg.Runtime.Debug)
	ra := toolkit.ParseRuntimeArgs(args)
	log.Info("invoked", "args", args, "command", ra.Command, "config", file)
	if ra.IsCreate() {
		if err := modify(ra.Bundle, cfg, file, log); err != nil {
			logRuntimeError(ra, err)
			return err
		}
	}
	runtime, err := findRuntime(cfg.Runtime.Runtimes)
	if err != nil {
		return err
	}
	log.Info("exec", "runtime", runtime)
	return syscall.Exec(runtime, append([]string{filepath.Base(runtime)}, args...), os.Environ())
}

// logRuntimeError appends err to the runtime's --log file, where runc
// would have written its own error: containerd's shim reports the last
// error line of that file, and without it only "exit status 1".
func logRuntimeError(ra toolkit.RuntimeArgs, err error) {
	if ra.Log == "" {
		return
	}
	f, ferr := os.OpenFile(ra.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_CLOEXEC, 0o600)
	if ferr != nil {
		return
	}
	defer f.Close()
	f.Write(toolkit.RuntimeLogEntry(ra.LogFormat, "nvidia-container-runtime: "+err.Error(), time.Now()))
}

// modify applies the config's runtime mode to the bundle's config.json:
// legacy adds the hook to a GPU container, cdi, jit-cdi and csv apply CDI edits
// (toolkit.ResolveMode, toolkit.ApplyMode).
func modify(bundle string, cfg *toolkit.Config, cfgFile string, log *slog.Logger) error {
	if bundle == "" {
		bundle = "."
	}
	path := filepath.Join(bundle, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	spec, err := request.ParseSpec(data)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	d, err := toolkit.ResolveMode(spec, cfg)
	if err != nil {
		return fmt.Errorf("reading the request of %s: %w", path, err)
	}
	log.Info("mode", "mode", d.Mode, "configured", cfg.Runtime.Mode, "devices", d.Devices)
	if d.Mode != toolkit.ModeLegacy {
		return applyCDI(path, data, cfg, cfgFile, d, log)
	}
	if !d.Request.IsGPU() {
		log.Info("not a GPU container", "bundle", bundle)
		return nil
	}
	hook, err := hookFor(cfg, cfgFile)
	if err != nil {
		return err
	}
	out, changed, err := toolkit.AddHook(data, "prestart", hook)
	if err != nil || !changed {
		return err
	}
	log.Info("hook added", "bundle", bundle, "hook", hook.Path, "args", hook.Args)
	return replaceFile(path, out)
}

// applyCDI injects the decision's CDI devices into config.json at path.
func applyCDI(path string, data []byte, cfg *toolkit.Config, cfgFile string, d *toolkit.ModeDecision, log *slog.Logger) error {
	roots, err := toolkit.LoadHostRoots(cfgFile)
	if err != nil {
		return err
	}
	// Built without cgo, jit-cdi gets NVML, when a requirement needs it,
	// from the helper nvc-nvml (next to this executable, else on PATH).
	opts := &toolkit.JitOptions{Roots: roots, HookPath: cdiHookPath(), NVML: toolkit.HelperNVML(cfg)}
	out, changed, err := toolkit.EditSpec(data, func(s *specs.Spec) (bool, error) {
		return toolkit.ApplyMode(context.Background(), s, cfg, d, opts)
	})
	if err != nil || !changed {
		return err
	}
	log.Info("CDI devices injected", "mode", d.Mode, "devices", d.Devices)
	return replaceFile(path, out)
}

// cdiHookPath is nvidia-cdi-hook found in PATH, else its default path.
func cdiHookPath() string {
	if p, err := exec.LookPath("nvidia-cdi-hook"); err == nil {
		if p, err = filepath.Abs(p); err == nil {
			return p
		}
	}
	return cdispec.DefaultHookPath
}

// hookFor is the prestart hook: an absolute path, the config it must read,
// and an environment of its own.
func hookFor(cfg *toolkit.Config, cfgFile string) (specs.Hook, error) {
	path, err := exec.LookPath(cfg.Hook.Path)
	if err != nil {
		return specs.Hook{}, fmt.Errorf("finding the hook: %w", err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return specs.Hook{}, err
	}
	args := []string{"nvidia-container-runtime-hook"}
	if cfgFile != "" {
		args = append(args, "-config", cfgFile)
	}
	return specs.Hook{Path: path, Args: append(args, "prestart"), Env: []string{"PATH=" + driver.DefaultPath}}, nil
}

// replaceFile writes data over path atomically, keeping its mode.
func replaceFile(path string, data []byte) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config.json-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := errors.Join(tmp.Chmod(st.Mode().Perm()), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// findRuntime returns the first candidate found in PATH that is not this
// program.
func findRuntime(candidates []string) (string, error) {
	self, _ := os.Executable()
	for _, name := range candidates {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if p, err = filepath.Abs(p); err == nil && !sameFile(p, self) {
			return p, nil
		}
	}
	return "", fmt.Errorf("no low-level runtime found in PATH among %q", candidates)
}

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// openLog logs to the [nvidia-container-runtime] debug file; none when it
// is empty or cannot be opened (the runtime must run regardless).
func openLog(file string) *slog.Logger {
	if file == "" || file == os.DevNull {
		return slog.New(slog.DiscardHandler)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(f, nil))
}
