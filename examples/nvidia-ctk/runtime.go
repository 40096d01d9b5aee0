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
// nvidia-container-runtime in the container engine's config: Docker's
// daemon.json, containerd's config.toml (schema version 1, 2 or 3, as the
// file has it) or a CRI-O drop-in.
func runtimeCommand(args []string, stdout, stderr io.Writer, log *slog.Logger) error {
	if len(args) == 0 || args[0] != "configure" {
		return errUsage
	}
	fs := newFlagSet("nvidia-ctk runtime configure", stderr)
	var o runtimeOptions
	fs.StringVar(&o.runtime, "runtime", "docker", "the container engine to configure (docker, containerd or crio)")
	fs.StringVar(&o.config, "config", "", "the engine's config `FILE` (docker: "+toolkit.DefaultDockerConfig+
		", containerd: "+toolkit.DefaultContainerdConfig+", crio: the drop-in "+toolkit.DefaultCRIODropIn+")")
	fs.StringVar(&o.name, "nvidia-runtime-name", toolkit.DockerRuntimeName, "the runtime's `NAME`")
	fs.StringVar(&o.path, "nvidia-runtime-path", toolkit.DefaultRuntimePath, "the runtime `PROGRAM` (looked up in the engine's PATH when not absolute)")
	fs.BoolVar(&o.setAsDefault, "set-as-default", false, "make it the engine's default runtime")
	fs.BoolVar(&o.cdi, "cdi.enabled", false, "turn on the engine's CDI support (CRI-O always has it on)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the config to stdout and write nothing")
	// The toolkit's aliases.
	fs.StringVar(&o.path, "runtime-path", toolkit.DefaultRuntimePath, "alias of --nvidia-runtime-path")
	fs.BoolVar(&o.setAsDefault, "nvidia-set-as-default", false, "alias of --set-as-default")
	fs.BoolVar(&o.cdi, "cdi.enable", false, "alias of --cdi.enabled")
	fs.BoolVar(&o.cdi, "enable-cdi", false, "alias of --cdi.enabled")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("runtime configure: unexpected arguments %q", fs.Args())
	}
	e, ok := engines[o.runtime]
	if !ok {
		return fmt.Errorf("runtime configure: unsupported --runtime %q (want docker, containerd or crio)", o.runtime)
	}
	return configureEngine(&o, e, stdout, log)
}

// engine is how runtime configure edits one container engine's config.
type engine struct {
	defaultConfig string
	configure     func(old []byte, o *runtimeOptions) ([]byte, error)
}

var engines = map[string]engine{
	"docker": {toolkit.DefaultDockerConfig, func(old []byte, o *runtimeOptions) ([]byte, error) {
		return toolkit.ConfigureDocker(old, toolkit.DockerRuntime{Name: o.name, Path: o.path, SetAsDefault: o.setAsDefault, CDIEnabled: o.cdi})
	}},
	"containerd": {toolkit.DefaultContainerdConfig, func(old []byte, o *runtimeOptions) ([]byte, error) {
		return toolkit.ConfigureContainerd(old, toolkit.ContainerdRuntime{Name: o.name, Path: o.path, SetAsDefault: o.setAsDefault, CDIEnabled: o.cdi})
	}},
	"crio": {toolkit.DefaultCRIODropIn, func(old []byte, o *runtimeOptions) ([]byte, error) {
		return toolkit.ConfigureCRIO(old, toolkit.CRIORuntime{Name: o.name, Path: o.path, SetAsDefault: o.setAsDefault})
	}},
}

// configureEngine reads the engine's config (a missing file is an empty
// one), registers the runtime and writes the file back in place, or
// prints it with --dry-run.
func configureEngine(o *runtimeOptions, e engine, stdout io.Writer, log *slog.Logger) error {
	file := o.config
	if file == "" {
		file = e.defaultConfig
	}
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("runtime configure: %w", err)
	}
	out, err := e.configure(old, o)
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
	log.Info("wrote the "+o.runtime+" config; restart the engine to use it", "file", file, "runtime", o.name, "path", o.path)
	return nil
}

// replaceFile writes data to a temp file beside name and renames it over
// name, so a reader (an engine, a runtime watching the CDI dir) never sees
// half a file, keeping an existing file's mode (0644 for a new one) and creating
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
