package nvctest_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// outsiderTest is the test of a module that is not nvc: what a runtime
// author writes with nvctest. It may import only nvc's public packages
// (and testify, which nvc's go.mod requires).
const outsiderTest = `package outsider

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/devices"
	"github.com/go-nvc/nvc/nvcontainer"
	"github.com/go-nvc/nvc/nvcontainer/cdispec"
	"github.com/go-nvc/nvc/nvcontainer/nvctest"
	"github.com/go-nvc/nvc/nvcontainer/request"
)

func TestCDISpecOfSimulatedHost(t *testing.T) {
	sim := nvctest.NewHost(t, nvctest.DGXA100, &nvctest.Options{MIG: map[int][]string{1: {"3g.20gb"}}})
	host, err := sim.Open(devices.Procfs)
	require.NoError(t, err)
	req, err := request.FromEnv([]string{"NVIDIA_VISIBLE_DEVICES=0," + nvctest.DGXA100.GPUUUID(2), "NVIDIA_DRIVER_CAPABILITIES=compute,utility"})
	require.NoError(t, err)
	p, err := nvcontainer.NewPlan(host, req, nvcontainer.Container{}, nil)
	require.NoError(t, err)
	spec, err := cdispec.FromPlan(p, nil)
	require.NoError(t, err)
	b, err := cdispec.Marshal(spec, cdispec.FormatYAML)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "nvidia.yaml")
	require.NoError(t, os.WriteFile(out, b, 0o644))
	for _, want := range []string{"kind: nvidia.com/gpu", "/dev/nvidia0", "/dev/nvidia2", nvctest.DGXA100.GPUUUID(2), "libcuda.so." + sim.DriverVersion} {
		assert.Contains(t, string(b), want, "spec lacks %q", want)
	}
}
`

// TestOutsideModule builds and runs outsiderTest in a module of its own
// under t.TempDir(), with nvc replaced by this checkout, CGO_ENABLED=0 and
// no network (GOPROXY=off: the modules come from the module cache, which
// building nvc filled). An import of nvc's internal packages, a public
// type that needs cgo or an API that a module outside nvc cannot reach
// fails it.
func TestOutsideModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module: not in -short")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	module := regexp.MustCompile(`(?m)^module .*$`)
	require.Equal(t, "module github.com/go-nvc/nvc", string(module.Find(gomod)), "module root %s", root)
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)

	dir := t.TempDir()
	// nvc's own requirements pin the versions its packages were built
	// with, so the build needs nothing the module cache lacks.
	mod := module.ReplaceAll(gomod, []byte("module example.com/outsider"))
	mod = append(mod, "\nrequire github.com/go-nvc/nvc v0.0.0-00010101000000-000000000000\n\nreplace github.com/go-nvc/nvc => "+root+"\n"...)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), mod, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), gosum, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "outsider_test.go"), []byte(outsiderTest), 0o644))

	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goBin, "test", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOPROXY=off", "GOFLAGS=-mod=mod -buildvcs=false",
		"GOSUMDB=off", "GOTOOLCHAIN=local", "GOWORK=off")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	t.Logf("go test in %s (%s):\n%s", dir, time.Since(start).Round(time.Millisecond), out.String())
	require.NoError(t, err, "the outside module's test failed")
	require.Contains(t, out.String(), "ok  \texample.com/outsider")
}
