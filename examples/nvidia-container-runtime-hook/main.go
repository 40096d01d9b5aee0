package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/driver"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/nvcli"
	"github.com/go-nvc/nvc/nvcontainer/request"
	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// options are the hook's command line.
type options struct {
	config        string
	debug, dryRun bool
}

// run is the whole program; it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("nvidia-container-runtime-hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.config, "config", "", "the config file (default: $NVIDIA_CTK_CONFIG_FILE_PATH or "+toolkit.DefaultConfigPath+")")
	fs.BoolVar(&o.debug, "debug", false, "log to stderr")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the equivalent nvidia-container-cli command and change nothing")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch fs.Arg(0) {
	case "prestart", "createRuntime":
	case "poststart", "poststop":
		return 0
	default:
		fmt.Fprintf(stderr, "nvidia-container-runtime-hook: unknown command %q (want prestart, createRuntime, poststart or poststop)\n", fs.Arg(0))
		return 2
	}
	if err := prestart(&o, stdin, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "nvidia-container-runtime-hook: %v\n", err)
		return 1
	}
	return 0
}

func prestart(o *options, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, file, err := toolkit.FindConfig(o.config, os.Environ())
	if err != nil {
		return err
	}
	log, closeLog, err := openLog(o.debug, cfg.CLI.Debug, stderr)
	if err != nil {
		return err
	}
	defer closeLog()
	if err := configureFromHook(o, cfg, file, stdin, stdout, log); err != nil {
		log.Error("failed", "err", err)
		return err
	}
	return nil
}

// configureFromHook reads the request and configures the container, or
// prints the command line with -dry-run.
func configureFromHook(o *options, cfg *toolkit.Config, file string, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	roots, err := toolkit.LoadHostRoots(file)
	if err != nil {
		return err
	}
	reason, err := toolkit.HookSkips(cfg)
	if err != nil || reason != "" {
		log.Info("skipped", "reason", reason)
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	req, ctr, err := toolkit.RequestFromHook(ctx, stdin, cfg)
	if err != nil {
		return err
	}
	log.Info("request", "config", file, "pid", ctr.PID, "rootfs", ctr.Rootfs, "gpu", req.IsGPU(), "devices", req.Devices.String(), "capabilities", req.Capabilities.String())
	for _, n := range req.Notes {
		log.Warn(n)
	}
	if !req.IsGPU() {
		return nil
	}
	if o.dryRun {
		return printCommand(cfg, req, ctr, stdout)
	}
	// The state's pid is not trusted: refuse one that is not a live
	// container process outside this hook's mount namespace before
	// anything (Apply checks again, through the process it pins).
	if err := nvcontainer.CheckContainer(ctr, ""); err != nil {
		return fmt.Errorf("container error: %w", err)
	}
	return configure(cfg, roots, req, ctr, log)
}

// printCommand prints the command line NVIDIA's hook would execute.
func printCommand(cfg *toolkit.Config, req *request.Request, ctr nvcontainer.Container, stdout io.Writer) error {
	c := *cfg
	c.CLI.Ldconfig = toolkit.NormalizeLDConfigPath(c.CLI.Ldconfig, func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	})
	_, err := fmt.Fprintln(stdout, toolkit.FormatCommand(toolkit.CLIArgs(req, &c, ctr)))
	return err
}

// configure opens the host, plans and applies: what nvidia-container-cli
// configure does, in this process.
func configure(cfg *toolkit.Config, roots *toolkit.HostRoots, req *request.Request, ctr nvcontainer.Container, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r := roots.Roots
	r.Driver, r.LDCache = cfg.CLI.Root, cfg.CLI.Ldcache
	opts := &nvcontainer.HostOptions{Backend: roots.Backend, LoadModules: !cfg.CLI.NoLoadKmods, IMEXChannels: req.IMEXChannels,
		Driver: &driver.Options{Roots: r}}
	if cfg.Features.DisableIMEXChannelCreation {
		opts.IMEXChannels = nil
	}
	if !devices.CanLoadNVML() {
		// Built without cgo: NVML, only if a requirement needs it, from
		// the helper nvc-nvml run as [nvidia-container-cli] user.
		if opts.NVML = toolkit.HelperNVML(cfg); opts.NVML == nil {
			log.Info("no NVML helper " + devices.NVMLHelperName + " next to this executable or on PATH: NVML unavailable")
		}
	}
	host, rep, err := nvcli.PrepareHost(ctx, opts, req) // procfs; NVML only if a requirement needs it
	if rep != nil {
		log.Info("kernel modules", "skipped", rep.Skipped, "loaded", rep.Loaded, "created", len(rep.Created), "warnings", rep.Warnings)
	}
	if err != nil {
		return err // "initialization error: …", as the CLI prints it
	}
	plan, err := nvcontainer.NewPlanContext(ctx, host, req, ctr, &nvcontainer.PlanOptions{NoCgroups: cfg.CLI.NoCgroups, NVML: host.NVML})
	if err != nil {
		return err
	}
	for _, w := range plan.Warnings {
		log.Warn(w)
	}
	if plan.DeviceRulesLeftToRuntime() {
		log.Info("device cgroup left to the runtime: running in a user namespace", "rules", len(plan.CgroupRules))
	}
	if err := plan.Apply(ctx, ctr, &nvcontainer.ApplyOptions{Libraries: host.Driver}); err != nil {
		return err
	}
	log.Info("configured", "gpus", len(plan.GPUs), "mounts", len(plan.Mounts), "rules", len(plan.CgroupRules))
	return nil
}

// openLog logs to stderr with -debug, else to the config's
// nvidia-container-cli.debug file, else nowhere.
func openLog(debug bool, file string, stderr io.Writer) (*slog.Logger, func(), error) {
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	switch {
	case debug:
		return slog.New(slog.NewTextHandler(stderr, opts)), func() {}, nil
	case file == "":
		return slog.New(slog.DiscardHandler), func() {}, nil
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("opening debug log: %w", err)
	}
	return slog.New(slog.NewTextHandler(f, opts)), func() { f.Close() }, nil
}
