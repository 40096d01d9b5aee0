//go:build !cgo

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/go-nvc/nvc/nvcontainer/cdihook"
)

// command is one subcommand: its flags and what it does with the
// container's root.
type command struct {
	summary string
	flags   func(fs *pflag.FlagSet) action
}

// action is what a subcommand does with the container's root filesystem.
type action func(ctx context.Context, rootfs string, log *slog.Logger) error

// commandOrder is the order of the usage text (the toolkit's).
var commandOrder = []string{"create-symlinks", "enable-cuda-compat", "update-ldcache", "chmod", "disable-device-node-modification", "update-application-profile"}

var commands = map[string]command{
	"update-ldcache":                   {"rewrite the container's ld.so.cache to include --folder dirs", updateLDCacheFlags},
	"create-symlinks":                  {"create --link TARGET::LINK symlinks in the container", createSymlinksFlags},
	"enable-cuda-compat":               {"add the image's newer CUDA compat libraries to the loader's path", cudaCompatFlags},
	"disable-device-node-modification": {"mask /proc/driver/nvidia/params with ModifyDeviceFiles: 0", deviceNodesFlags},
	"chmod":                            {"set the mode of the --path entries in the container", chmodFlags},
	"update-application-profile":       {"limit EGL and Vulkan to the container's GPUs (driver application profile)", appProfileFlags},
	"noop":                             {"do nothing", func(*pflag.FlagSet) action { return nil }},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stderr, os.Getenv("NVIDIA_CTK_DEBUG")))
}

// run is the whole program; it returns the exit status. debugEnv is the
// value of NVIDIA_CTK_DEBUG. Whatever happens, stdin is read to its end
// before run returns, so that the runtime writing the state never finds
// the pipe closed (crun reported such a hook as failed).
func run(args []string, stdin io.Reader, stderr io.Writer, debugEnv string) int {
	defer drain(stdin)
	global := pflag.NewFlagSet("nvidia-cdi-hook", pflag.ContinueOnError)
	global.SetInterspersed(false)
	global.SetOutput(stderr)
	envDebug, _ := strconv.ParseBool(debugEnv)
	debug := global.Bool("debug", envDebug, "log debug messages (env NVIDIA_CTK_DEBUG)")
	quiet := global.Bool("quiet", false, "log errors only")
	global.Usage = func() { usage(stderr, global) }
	if err := global.Parse(args); err != nil {
		return parseFailed(err, stderr, "")
	}
	log := newLogger(stderr, *debug, *quiet)
	if global.NArg() == 0 {
		usage(stderr, global)
		return 1
	}
	name := global.Arg(0)
	cmd, ok := commands[name]
	if !ok {
		log.Warn("unknown hook; ignored so that newer specs still run", "hook", name)
		return 0
	}
	return runCommand(name, cmd, global.Args()[1:], stdin, stderr, log)
}

func runCommand(name string, cmd command, args []string, stdin io.Reader, stderr io.Writer, log *slog.Logger) int {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	stateFile := fs.String("container-spec", "", "read the OCI state from `FILE` instead of stdin")
	act := cmd.flags(fs)
	if err := fs.Parse(args); err != nil {
		return parseFailed(err, stderr, name)
	}
	if fs.NArg() > 0 {
		log.Warn("unexpected arguments; hook not run", "hook", name, "args", fs.Args())
		return 0
	}
	if act == nil {
		return 0
	}
	if err := runOnRoot(context.Background(), *stateFile, stdin, act, log); err != nil {
		fmt.Fprintf(stderr, "nvidia-cdi-hook %s: %v\n", name, err)
		return 1
	}
	return 0
}

// runOnRoot finds the container's root from the state and runs act on it.
func runOnRoot(ctx context.Context, stateFile string, stdin io.Reader, act action, log *slog.Logger) error {
	in, err := stateInput(stateFile, stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	rootfs, err := cdihook.ContainerRoot(ctx, in)
	if err != nil {
		return err
	}
	log.Debug("container root", "path", rootfs)
	return act(ctx, rootfs, log)
}

// stateInput is the --container-spec file, or stdin.
func stateInput(file string, stdin io.Reader) (io.ReadCloser, error) {
	if file == "" || file == "-" {
		return io.NopCloser(stdin), nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("reading OCI state: %w", err)
	}
	return f, nil
}

// parseFailed handles a flag error: help exits 0, an unknown flag warns
// and exits 0 (the hook is not run), anything else is a usage error.
func parseFailed(err error, stderr io.Writer, hook string) int {
	var notExist *pflag.NotExistError
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return 0
	case errors.As(err, &notExist):
		fmt.Fprintf(stderr, "nvidia-cdi-hook: warning: %v; hook %q not run so that newer specs still run\n", err, hook)
		return 0
	}
	fmt.Fprintf(stderr, "nvidia-cdi-hook: %v\n", err)
	return 1
}

// drain reads r to its end, discarding what it reads; an error ends it.
// A terminal is left alone: someone typing at it would have to end the
// input first.
func drain(r io.Reader) {
	if f, ok := r.(*os.File); ok {
		if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
			return
		}
	}
	io.Copy(io.Discard, r)
}

func newLogger(w io.Writer, debug, quiet bool) *slog.Logger {
	level := slog.LevelInfo
	switch {
	case quiet:
		level = slog.LevelError
	case debug:
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

func usage(w io.Writer, global *pflag.FlagSet) {
	fmt.Fprintf(w, "usage: nvidia-cdi-hook [global flags] COMMAND [flags]\n\ncommands:\n")
	for _, name := range commandOrder {
		fmt.Fprintf(w, "  %-33s %s\n", name, commands[name].summary)
	}
	fmt.Fprintf(w, "\nglobal flags:\n%s", global.FlagUsages())
}
