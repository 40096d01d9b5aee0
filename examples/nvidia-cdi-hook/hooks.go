//go:build !cgo

package main

import (
	"context"
	"log/slog"

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
		for _, l := range links {
			log.Debug("creating symlink", "link", l.Path, "target", l.Target)
		}
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
		if len(res.Removed) > 0 {
			log.Debug("removed stale CUDA compat entries", "files", res.Removed)
		}
		switch {
		case err != nil:
			return err
		case res.Enabled:
			log.Debug("CUDA compat enabled", "conf", cdihook.CompatConf, "library", res.Libraries, "note", res.Note)
		default:
			log.Debug("CUDA compat not used", "reason", res.Reason, "found", res.Libraries)
		}
		return nil
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
