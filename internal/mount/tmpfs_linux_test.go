package mount

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/rootfs"
	"github.com/go-nvc/nvc/internal/testutil/container"
)

const maskTarget = "proc/driver/nvidia"

// procFiles are the sanitised copies the /proc/driver/nvidia mask holds.
var procFiles = map[string]string{
	"params":   "ModifyDeviceFiles: 0\n",
	"version":  "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15\n",
	"registry": "Binary: \"\"\n",
}

func TestTmpfsMask(t *testing.T) {
	if !container.InPrivateMountNS(t) {
		return // the child compares mount tables in a namespace of its own
	}
	host := hostTree(t)
	for _, method := range methods {
		t.Run(method.String(), func(t *testing.T) { testTmpfsMask(t, host, method) })
	}
}

func testTmpfsMask(t *testing.T, host string, method Method) {
	c := startCtr(t, &container.Options{Spec: "dir " + maskTarget})
	visibleWhilePopulating := false
	populate := func(root *os.File) error {
		visibleWhilePopulating = c.MountAt(t, maskTarget) != nil
		for name, data := range procFiles {
			if err := WriteFileAt(root, name, []byte(data), 0o444); err != nil {
				return err
			}
		}
		if err := MkdirAt(root, "gpus", 0o555); err != nil {
			return err
		}
		return MkdirAt(root, "gpus/0000:01:00.0", 0o555)
	}
	opts := &TmpfsOptions{Attr: ReadOnly | NoSuid | NoDev | NoExec, Size: 1 << 20, Method: method}
	src, err := NewTmpfs(opts, populate)
	require.NoError(t, err)
	defer src.Close()
	before := hostMounts(t)
	m := attachMask(t, c, src)
	defer m.Close()
	// The new API fills the tmpfs before anyone can see it; Legacy has to
	// mount it first.
	assert.Equal(t, method == Legacy, visibleWhilePopulating, "tmpfs visible while populated")
	wantOptions(t, c.options(t, maskTarget), "ro", "nosuid", "nodev", "noexec")
	checkMask(t, c)
	gpu := openSource(t, host+"/"+maskTarget+"/gpus/0000:01:00.0", ReadOnly|NoSuid|NoDev|NoExec, method)
	require.NoError(t, c.run(t, func(*rootfs.Root) error { return attachGPU(m, gpu) }))
	data, _ := os.ReadFile(c.Path(maskTarget + "/gpus/0000:01:00.0/information"))
	assert.Equal(t, "Model: Test GPU\n", string(data), "GPU dir in the mask holds")
	assert.Equal(t, before, hostMounts(t), "host mount table changed")
}

func attachMask(t *testing.T, c *ctr, src *Source) *Mount {
	t.Helper()
	var m *Mount
	err := c.run(t, func(r *rootfs.Root) error {
		e, err := r.Lookup(maskTarget)
		if err != nil {
			return err
		}
		defer e.Close()
		m, err = src.Attach(e.Dir(), e.Name())
		return err
	})
	require.NoError(t, err)
	return m
}

func attachGPU(mask *Mount, gpu *Source) error {
	gpus, err := mask.OpenDir("gpus")
	if err != nil {
		return err
	}
	defer gpus.Close()
	_, err = gpu.Attach(gpus, "0000:01:00.0")
	return err
}

func checkMask(t *testing.T, c *ctr) {
	t.Helper()
	var st syscall.Stat_t
	if assert.NoError(t, syscall.Stat(c.Path(maskTarget), &st), "mask root") {
		assert.Equal(t, uint32(0o555), uint32(st.Mode&0o7777), "mask root mode")
	}
	for name, want := range procFiles {
		data, err := os.ReadFile(c.Path(maskTarget + "/" + name))
		assert.Equal(t, want, string(data), "%s holds (%v)", name, err)
	}
	assert.Error(t, os.WriteFile(c.Path(maskTarget+"/new"), nil, 0o644), "could create a file in the read-only mask")
}
