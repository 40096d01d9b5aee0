package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"slices"

	"tags.cncf.io/container-device-interface/pkg/cdi"
)

// listCommand prints the fully qualified name of every CDI device in the
// spec dirs, one per line, sorted, as a runtime's CDI cache resolves them
// (a device two specs define is dropped). Specs the cache refuses are
// reported on stderr.
func listCommand(args []string, stdout, stderr io.Writer, log *slog.Logger) error {
	fs := newFlagSet("nvidia-ctk cdi list", stderr)
	dirs := fs.StringArray("spec-dir", cdi.DefaultSpecDirs, "read specs from `DIR` (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("cdi list: unexpected arguments %q", fs.Args())
	}
	cache, err := cdi.NewCache(cdi.WithSpecDirs(*dirs...), cdi.WithAutoRefresh(false))
	if err != nil && !onlyMissingDirs(cache) {
		return fmt.Errorf("cdi list: %w", err)
	}
	reportErrors(cache, log)
	names := cache.ListDevices()
	log.Info("found CDI devices", "count", len(names), "spec-dirs", *dirs)
	for _, n := range names {
		fmt.Fprintln(stdout, n)
	}
	return nil
}

// onlyMissingDirs reports whether the cache's only errors are spec dirs
// that do not exist, which is no error for listing.
func onlyMissingDirs(cache *cdi.Cache) bool {
	errs := cache.GetErrors()
	for p, list := range errs {
		for _, err := range list {
			if !errors.Is(err, fs.ErrNotExist) {
				return false
			}
		}
		delete(errs, p)
	}
	return true
}

func reportErrors(cache *cdi.Cache, log *slog.Logger) {
	errs := cache.GetErrors()
	for _, p := range slices.Sorted(maps.Keys(errs)) {
		for _, err := range errs[p] {
			if !errors.Is(err, fs.ErrNotExist) {
				log.Warn("CDI spec refused", "path", p, "err", err)
			}
		}
	}
}
