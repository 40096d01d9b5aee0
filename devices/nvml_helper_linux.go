package devices

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-nvc/nvc/driver"
)

// NVMLHelperTimeout is how long a helper may take by default:
// libnvidia-container's RPC timeout.
const NVMLHelperTimeout = 10 * time.Second

// NVMLHelperOptions say how NewNVMLHelper's client runs its helper.
type NVMLHelperOptions struct {
	// Path is the helper executable: examples/nvc-nvml, or a program that
	// behaves alike (with --fd=3 it loads the library open at descriptor
	// 3, without it libnvidia-ml.so.1 by name; it writes
	// TakeNVMLSnapshot's result as JSON on stdout and exits 0). Required.
	// It is opened here and run through that descriptor (4 in the
	// helper), so the helper's user needs no search right on its
	// directories; a script's interpreter must read it as /proc/self/fd/4.
	Path string
	// Roots (Driver only) and NVMLLibrary say which libnvidia-ml.so.1, as
	// for Discover: with a driver root other than / (or NVMLLibrary) the
	// library is opened here, inside the root, with the caller's rights,
	// and handed to the helper as descriptor 3; under / without
	// NVMLLibrary the helper's dynamic loader finds it by name.
	Roots       driver.Roots
	NVMLLibrary string
	// User is who the helper runs as, "UID[:GID]", numbers or names (a
	// missing GID is the user's group in the passwd file). Empty: run by
	// root, the overflow ids (/proc/sys/kernel/overflowuid and
	// overflowgid, normally 65534:65534, nobody), as libnvidia-container's
	// NVML helper; run by another user, that user. Supplementary groups
	// are dropped whenever the identity is set.
	User string
	// Timeout bounds the helper's run: it is then killed, and Init waits
	// at most 2 s more for it to be gone (one stuck in a driver call is
	// left to be reaped later). Zero: NVMLHelperTimeout.
	Timeout time.Duration
}

// NewNVMLHelper returns an NVMLInterface for a process that has no NVML
// of its own (a build without cgo): at its first Init it runs the helper
// o.Path, which loads libnvidia-ml.so.1, answers every question of
// TakeNVMLSnapshot and exits, and it then answers every call from that
// snapshot. Nothing runs before Init, so it can be handed on to a step that
// may never need NVML (nvcontainer.HostOptions.NVML), as NewLazyNVML's.
// Init runs the helper once: its error (the helper's path, why it failed
// and its stderr) is returned by every Init, and Discover then treats NVML
// as unavailable (Auto falls back to procfs).
func NewNVMLHelper(o *NVMLHelperOptions) NVMLInterface {
	h := &nvmlHelper{opts: *o}
	if h.opts.Timeout <= 0 {
		h.opts.Timeout = NVMLHelperTimeout
	}
	h.opts.Roots = h.opts.Roots.WithDefaults()
	return h
}

// nvmlHelper is NewNVMLHelper's client.
type nvmlHelper struct {
	opts NVMLHelperOptions
	once sync.Once
	err  error
	NVMLInterface
}

func (h *nvmlHelper) Init() error {
	h.once.Do(func() {
		s, err := runNVMLHelper(&h.opts)
		if err != nil {
			h.err = fmt.Errorf("NVML helper %s: %w", h.opts.Path, err)
			h.NVMLInterface = failedNVML{h.err}
			return
		}
		h.NVMLInterface = s.Interface()
	})
	return h.err
}

func (h *nvmlHelper) Shutdown() error { return h.err }

func (h *nvmlHelper) SystemDriverVersion() (string, error) {
	if h.NVMLInterface == nil {
		return "", errNotInitialised
	}
	return h.NVMLInterface.SystemDriverVersion()
}

func (h *nvmlHelper) SystemCUDADriverVersion() (int, error) {
	if h.NVMLInterface == nil {
		return 0, errNotInitialised
	}
	return h.NVMLInterface.SystemCUDADriverVersion()
}

func (h *nvmlHelper) DeviceCount() (int, error) {
	if h.NVMLInterface == nil {
		return 0, errNotInitialised
	}
	return h.NVMLInterface.DeviceCount()
}

func (h *nvmlHelper) DeviceByIndex(i int) (NVMLDevice, error) {
	if h.NVMLInterface == nil {
		return nil, errNotInitialised
	}
	return h.NVMLInterface.DeviceByIndex(i)
}

var errNotInitialised = errors.New("NVML not initialised")

// failedNVML answers every call with the helper's error.
type failedNVML struct{ err error }

func (f failedNVML) Init() error                           { return f.err }
func (f failedNVML) Shutdown() error                       { return f.err }
func (f failedNVML) SystemDriverVersion() (string, error)  { return "", f.err }
func (f failedNVML) SystemCUDADriverVersion() (int, error) { return 0, f.err }
func (f failedNVML) DeviceCount() (int, error)             { return 0, f.err }
func (f failedNVML) DeviceByIndex(int) (NVMLDevice, error) { return nil, f.err }

// Bounds on what is kept of the helper's output. Decoding a snapshot
// costs about 230 times its size at worst (a device list of "{}"), and a
// DGX A100 with 8 GPUs of 7 MIG devices each writes 17 KB: 256 KiB keeps
// a helper's lies under 60 MB of the caller's memory. Its stderr is
// quoted in the error.
const (
	maxSnapshot     = 256 << 10
	maxHelperStderr = 4 << 10
)

// runNVMLHelper runs the helper of o and reads its snapshot.
func runNVMLHelper(o *NVMLHelperOptions) (*NVMLSnapshot, error) {
	cred, err := helperCredential(o.User)
	if err != nil {
		return nil, err
	}
	// The helper runs through a descriptor (4; the library's is 3), so
	// its user needs no search right on o.Path's directories.
	exe, err := openHelper(o.Path)
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/proc/self/fd/4")
	cmd.Args[0] = o.Path
	cmd.ExtraFiles = []*os.File{nil, exe}
	if filepath.Clean(o.Roots.Driver) != "/" || o.NVMLLibrary != "" {
		lib, err := findNVML(&Options{Roots: o.Roots, NVMLLibrary: o.NVMLLibrary})
		if err != nil {
			return nil, err
		}
		defer lib.Close()
		cmd.ExtraFiles[0] = lib
		cmd.Args = append(cmd.Args, "--fd=3")
	}
	stdout, stderr := capped{limit: maxSnapshot}, capped{limit: maxHelperStderr}
	cmd.Stdout, cmd.Stderr, cmd.Dir = &stdout, &stderr, "/"
	// Its own process group, killed whole at the timeout. No Pdeathsig: it
	// is sent when the forking thread ends, and a caller's locked threads
	// end at will (package internal/ns ends its own); a helper whose
	// caller died ends at its first write to the closed pipe.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	if err = runBounded(cmd, o.Timeout+helperReapGrace); errors.Is(err, errNotReaped) {
		return nil, fmt.Errorf("timed out after %v: %w", o.Timeout, err) // its output may still be written to
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v", o.Timeout)
	} else if err == nil && stdout.over {
		err = fmt.Errorf("output over %d KiB", maxSnapshot>>10)
	}
	if err != nil {
		if msg := strings.TrimSpace(stderr.buf.String()); msg != "" {
			err = fmt.Errorf("%w: %q", err, msg) // quoted: the helper's bytes, control characters too
		}
		if stderr.over {
			err = fmt.Errorf("%w [stderr cut at %d bytes]", err, maxHelperStderr)
		}
		return nil, err
	}
	return decodeSnapshot(stdout.buf.Bytes())
}

// openHelper opens the helper executable at path without blocking (a FIFO
// there would block an open for reading before the timeout starts) and
// checks that it is a regular file.
func openHelper(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s: not a regular file", path)
		}
		return nil, err
	}
	return f, nil
}

// helperReapGrace is how long a helper killed at its timeout may take to
// be gone (WaitDelay included) before Init stops waiting for it.
const helperReapGrace = 2 * time.Second

var errNotReaped = errors.New("killed, and still not gone")

// runBounded runs cmd and waits for it, up to limit: SIGKILL does not end
// a process in an uninterruptible call (an NVIDIA driver call) until the
// call returns, and exec.Cmd.Wait would wait for it. Past limit it gives
// up (errNotReaped) and leaves the process to a goroutine to reap, or to
// init once this process exits.
func runBounded(cmd *exec.Cmd, limit time.Duration) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return errNotReaped
	}
}

// decodeSnapshot reads a helper's output: one NVMLSnapshot, nothing
// else, with the versions answered (TakeNVMLSnapshot always asks them).
func decodeSnapshot(data []byte) (*NVMLSnapshot, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s NVMLSnapshot
	err := dec.Decode(&s)
	if err == nil && dec.More() {
		err = errors.New("data after the snapshot")
	}
	if err == nil && (s.DriverVersion == nil || s.CUDADriverVersion == nil) {
		err = errors.New("no driver version answered")
	}
	if err != nil {
		return nil, fmt.Errorf("reading its output (%d bytes) as an NVML snapshot: %w", len(data), err)
	}
	return &s, nil
}

// capped keeps the first limit bytes written to it and drops the rest
// (over says so), so that the helper is not stopped by a closed pipe. Its
// buffer is no embedded bytes.Buffer: io.Copy would call the promoted
// ReadFrom and read the pipe past the limit.
type capped struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); room < len(p) {
		c.buf.Write(p[:max(room, 0)])
		c.over = true
		return len(p), nil
	}
	return c.buf.Write(p)
}
