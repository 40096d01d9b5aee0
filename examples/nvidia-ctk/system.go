package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/go-nvc/nvc/devices"
)

// systemCommand runs `system create-device-nodes` and
// `system create-dev-char-symlinks`.
func systemCommand(args []string, stdout, stderr io.Writer, log *slog.Logger) error {
	if len(args) == 0 {
		return errUsage
	}
	switch args[0] {
	case "create-device-nodes":
		return createDeviceNodes(args[1:], stderr, log)
	case "create-dev-char-symlinks":
		return createCharLinks(args[1:], stderr, log)
	}
	return errUsage
}

// createDeviceNodes makes the NVIDIA device nodes missing on the host:
// the control devices (nvidiactl, nvidia-uvm, nvidia-uvm-tools,
// nvidia-modeset) and a node per GPU, as nvidia-modprobe makes them.
func createDeviceNodes(args []string, stderr io.Writer, log *slog.Logger) error {
	fs := newFlagSet("nvidia-ctk system create-device-nodes", stderr)
	var o devices.NodeOptions
	var control bool
	fs.StringVar(&o.Roots.Driver, "driver-root", "/", "the root the driver is installed under (modprobe runs chrooted into it)")
	fs.StringVar(&o.Roots.Driver, "root", "/", "alias of --driver-root, as the toolkit names it")
	fs.StringVar(&o.Roots.Dev, "dev-root", "", "where the nodes are made, standing for /dev (default: <driver-root>/dev)")
	fs.StringVar(&o.Roots.Proc, "proc-root", "/proc", "where the host's procfs is")
	fs.StringVar(&o.Roots.Sys, "sys-root", "/sys", "where the host's sysfs is (PCI devices, loaded modules)")
	fs.BoolVar(&o.LoadModules, "load-kernel-modules", false, "load nvidia, nvidia_uvm and nvidia_modeset first")
	fs.BoolVar(&control, "control-devices", true, "accepted for NVIDIA's tool; the control devices and the GPU nodes are always made")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("system create-device-nodes: unexpected arguments %q", fs.Args())
	}
	return makeNodes(&o, log)
}

// makeNodes runs devices.CreateNodes and logs what it did.
func makeNodes(o *devices.NodeOptions, log *slog.Logger) error {
	r, err := devices.CreateNodes(context.Background(), o)
	if r != nil {
		for _, w := range r.Warnings {
			log.Warn(w)
		}
		if r.Skipped != "" {
			log.Warn("no device node created", "reason", r.Skipped)
		}
		for _, n := range r.Created {
			log.Info("created device node", "path", n.Path, "major", n.Major, "minor", n.Minor)
		}
	}
	if err != nil {
		return fmt.Errorf("system create-device-nodes: %w", err)
	}
	return nil
}

// createCharLinks makes the /dev/char/MAJOR:MINOR links of the NVIDIA
// nodes, the fix for NVML's "Unknown Error" after a systemd daemon-reload.
func createCharLinks(args []string, stderr io.Writer, log *slog.Logger) error {
	fs := newFlagSet("nvidia-ctk system create-dev-char-symlinks", stderr)
	var o devices.CharLinkOptions
	fs.StringVar(&o.CharDir, "dev-char-path", "/dev/char", "where the links are made")
	fs.StringVar(&o.Roots.Driver, "driver-root", "/", "the root whose dev/ holds the nodes")
	fs.StringVar(&o.Roots.Dev, "dev-root", "", "where the nodes are, standing for /dev (default: <driver-root>/dev)")
	fs.StringVar(&o.Roots.Proc, "proc-root", "/proc", "where the host's procfs is")
	fs.BoolVar(&o.All, "create-all", false, "link every node the driver has (read from procfs), present or not")
	var nodes devices.NodeOptions
	var makeMissing bool
	fs.BoolVar(&makeMissing, "create-device-nodes", false, "first make the missing device nodes, as create-device-nodes")
	fs.BoolVar(&nodes.LoadModules, "load-kernel-modules", false, "load nvidia, nvidia_uvm and nvidia_modeset first (and make the missing device nodes)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("system create-dev-char-symlinks: unexpected arguments %q", fs.Args())
	}
	if makeMissing || nodes.LoadModules {
		nodes.Roots = o.Roots
		if err := makeNodes(&nodes, log); err != nil {
			return err
		}
	}
	made, err := devices.CreateCharLinks(&o)
	for _, l := range made {
		log.Info("created symlink", "link", filepath.Join(o.CharDir, l.Name), "target", l.Target)
	}
	if err != nil {
		return fmt.Errorf("system create-dev-char-symlinks: %w", err)
	}
	return nil
}
