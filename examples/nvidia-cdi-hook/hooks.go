//go:build !cgo

package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/go-nvc/nvc/nvcontainer/cdihook"
)

// updateLDCacheFlags declares update-ldcache's flags; its action is cdihook.UpdateLDCache.
func updateLDCacheFlags(fs *pflag.FlagSet) action {
	folders := fs.StringArray("folder", nil, "container `DIR` holding driver libraries (repeatable)")
	ldconfig := fs.String("ldconfig-path", "", "accepted for NVIDIA's specs and ignored: no ldconfig is run")
	return func(ctx context.Context, rootfs string, log *slog.Logger) error {
		if *ldconfig != "" {
			log.Debug("ignoring --ldconfig-path: the cache is written in Go", "ldconfig-path", *ldconfig)
		}
		res, err := cdihook.UpdateLDCache(ctx, rootfs, &cdihook.LDCacheOptions{Folders: *folders})
		if err == nil {
			log.Debug("updated ld.so.cache", "root", rootfs, "compat", res.CompatDirs, "folders", *folders)
		}
		return err
	}
}

// createSymlinksFlags declares create-symlinks' flags; its action is
// cdihook.CreateSymlinks, logging the links kept as the image has them.
func createSymlinksFlags(fs *pflag.FlagSet) action {
	args := fs.StringArray("link", nil, "create `TARGET::LINK`, LINK a path in the container (repeatable)")
	return func(ctx context.Context, rootfs string, log *slog.Logger) error {
		links, err := cdihook.ParseLinks(*args)
		if err != nil {
			return err
		}
		log.Debug("creating symlinks", "links", links)
		res, err := cdihook.CreateSymlinks(ctx, rootfs, &cdihook.SymlinksOptions{Links: links})
		for _, k := range res.Kept {
			log.Info("keeping the image's file where a link was asked for", "link", k.Path, "target", k.Target, "found", k.Found)
		}
		return err
	}
}

// cudaCompatFlags declares enable-cuda-compat's flags; its action is cdihook.EnableCUDACompat.
func cudaCompatFlags(fs *pflag.FlagSet) action {
	var o cdihook.CUDACompatOptions
	fs.StringVar(&o.HostDriverVersion, "host-driver-version", "", "the host driver's `VERSION` (550.54.15)")
	fs.StringVar(&o.HostCUDAVersion, "host-cuda-version", "", "the host driver's CUDA `VERSION` (12.4); with no driver version either: do nothing")
	fs.StringVar(&o.CompatDir, "cuda-compat-container-root", cdihook.CompatDir, "the compat `DIR` in the container")
	return func(ctx context.Context, rootfs string, log *slog.Logger) error {
		res, err := cdihook.EnableCUDACompat(ctx, rootfs, &o)
		log.Debug("CUDA compat", "enabled", res.Enabled, "reason", res.Reason, "library", res.Libraries, "note", res.Note, "removed", res.Removed)
		return err
	}
}

// deviceNodesFlags declares disable-device-node-modification's flags; its action is
// cdihook.DisableDeviceNodeModification, warning of a container left unmasked.
func deviceNodesFlags(flags *pflag.FlagSet) action {
	procRoot := flags.String("proc-root", "/proc", "the host's procfs `DIR`, where driver/nvidia/params is read (never the container's)")
	return func(ctx context.Context, rootfs string, log *slog.Logger) error {
		res, err := cdihook.DisableDeviceNodeModification(ctx, rootfs, &cdihook.DeviceNodeOptions{ProcRoot: *procRoot})
		switch {
		case err != nil:
			return err
		case res.Masked:
			log.Debug("params masked", "path", cdihook.ParamsPath)
		case res.Skipped == cdihook.SkippedNoContainerParams || res.Skipped == cdihook.SkippedNoMountAPI:
			log.Warn(string(res.Skipped), "path", cdihook.ParamsPath)
		default:
			log.Debug(string(res.Skipped), "proc-root", *procRoot)
		}
		return nil
	}
}

// chmodFlags declares chmod's flags; its action is cdihook.Chmod.
func chmodFlags(fs *pflag.FlagSet) action {
	paths := fs.StringArray("path", nil, "container `PATH` to change (repeatable)")
	mode := fs.String("mode", "", "the `MODE` to give, octal (755)")
	return func(ctx context.Context, rootfs string, log *slog.Logger) error {
		m, err := strconv.ParseUint(*mode, 8, 32)
		if err != nil {
			return fmt.Errorf("--mode %q is not an octal mode", *mode)
		}
		res, err := cdihook.Chmod(ctx, rootfs, &cdihook.ChmodOptions{Mode: uint32(m), Paths: *paths})
		log.Debug("chmod", "mode", *mode, "changed", res.Changed, "skipped", res.Skipped)
		return err
	}
}

// appProfileFlags declares no flags; the action is cdihook.UpdateApplicationProfile.
func appProfileFlags(*pflag.FlagSet) action {
	return func(ctx context.Context, rootfs string, log *slog.Logger) error {
		res, err := cdihook.UpdateApplicationProfile(ctx, rootfs)
		log.Debug("application profile", "minors", res.Minors, "mask", res.Mask)
		return err
	}
}
