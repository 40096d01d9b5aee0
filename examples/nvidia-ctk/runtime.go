package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/go-nvc/nvc/nvcontainer/toolkit"
)

// runtimeOptions are runtime configure's flags.
type runtimeOptions struct {
	runtime, config, name, path string
	setAsDefault, cdi, dryRun   bool
}

// runtimeCommand runs `runtime configure`: it registers
// nvidia-container-runtime in the container engine's config. Only Docker's
// daemon.json is written so far.
func runtimeCommand(args []string, stdout, stderr io.Writer, log *slog.Logger) error {
	if len(args) == 0 || args[0] != "configure" {
		return errUsage
	}
	fs := newFlagSet("nvidia-ctk runtime configure", stderr)
	var o runtimeOptions
	fs.StringVar(&o.runtime, "runtime", "docker", "the container engine to configure (docker)")
	fs.StringVar(&o.config, "config", "", "the engine's config `FILE` (docker: "+toolkit.DefaultDockerConfig+")")
	fs.StringVar(&o.name, "nvidia-runtime-name", toolkit.DockerRuntimeName, "the runtime's `NAME`")
	fs.StringVar(&o.path, "nvidia-runtime-path", toolkit.DefaultRuntimePath, "the runtime `PROGRAM` (looked up in the engine's PATH when not absolute)")
	fs.BoolVar(&o.setAsDefault, "set-as-default", false, "make it the engine's default runtime")
	fs.BoolVar(&o.cdi, "cdi.enabled", false, "turn on the engine's CDI support")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the config to stdout and write nothing")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("runtime configure: unexpected arguments %q", fs.Args())
	}
	if o.runtime != "docker" {
		return fmt.Errorf("runtime configure: unsupported --runtime %q (want docker)", o.runtime)
	}
	return configureDocker(&o, stdout, log)
}

func configureDocker(o *runtimeOptions, stdout io.Writer, log *slog.Logger) error {
	file := o.config
	if file == "" {
		file = toolkit.DefaultDockerConfig
	}
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("runtime configure: %w", err)
	}
	out, err := toolkit.ConfigureDocker(old, toolkit.DockerRuntime{Name: o.name, Path: o.path, SetAsDefault: o.setAsDefault, CDIEnabled: o.cdi})
	if err != nil {
		return fmt.Errorf("runtime configure: %s: %w", file, err)
	}
	if o.dryRun {
		_, err := stdout.Write(out)
		return err
	}
	if err := replaceFile(file, out); err != nil {
		return fmt.Errorf("runtime configure: %w", err)
	}
	log.Info("wrote the docker config; restart dockerd to use it", "file", file, "runtime", o.name, "path", o.path)
	return nil
}

// replaceFile writes data to a temp file beside name and renames it over
// name, keeping an existing file's mode (0644 for a new one) and creating
// the directory.
func replaceFile(name string, data []byte) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(name); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}
