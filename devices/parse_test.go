package devices

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const h100Information = "Model: \t\t NVIDIA H100 80GB HBM3\n" +
	"IRQ:   \t\t 181\n" +
	"GPU UUID: \t GPU-5e1b2c3d-0000-1111-2222-333344445555\n" +
	"Video BIOS: \t 96.00.89.00.01\n" +
	"Bus Type: \t PCIe\n" +
	"DMA Size: \t 47 bits\n" +
	"DMA Mask: \t 0x7fffffffffff\n" +
	"Bus Location: \t 0000:43:00.0\n" +
	"Device Minor: \t 1\n" +
	"GPU Firmware: \t 550.54.15\n" +
	"GPU Excluded:\t No\n"

func TestParseInformation(t *testing.T) {
	got, err := parseInformation([]byte(h100Information))
	want := information{model: "NVIDIA H100 80GB HBM3", uuid: "GPU-5e1b2c3d-0000-1111-2222-333344445555", bus: 0x43, minor: 1}
	assert.NoError(t, err)
	assert.Equal(t, want, got)
	excluded, _ := parseInformation([]byte("GPU UUID: GPU-x\nBus Location: 10000:ab:1f.0\nDevice Minor: 7\nGPU Excluded:\t Yes\n"))
	assert.True(t, excluded.excluded, "excluded GPU %+v", excluded)
	assert.EqualValues(t, 0x10000, excluded.domain, "excluded GPU domain")
	assert.EqualValues(t, 0xab, excluded.bus, "excluded GPU bus")
	assert.EqualValues(t, 0x1f, excluded.device, "excluded GPU device")
	for _, bad := range []string{
		"Bus Location: 0000:43:00.0\nDevice Minor: 1\n",
		"GPU UUID: GPU-x\nBus Location: 0000:43:00\nDevice Minor: 1\n",
		"GPU UUID: GPU-x\nBus Location: 0000:143:00.0\nDevice Minor: 1\n",
		"GPU UUID: GPU-x\nBus Location: 0000:43:00.0\nDevice Minor: -1\n",
		"GPU UUID: GPU-x\nBus Location: 0000:43:00.0\n",
	} {
		_, err := parseInformation([]byte(bad))
		assert.ErrorIs(t, err, ErrInvalid, "%q", bad)
	}
}

func TestParseCharMajors(t *testing.T) {
	data := "Character devices:\n  1 mem\n195 nvidia\n195 nvidiactl\n511 nvidia-caps\n234 nvidia-caps-imex-channels\n\nBlock devices:\n  8 sd\n511 blockdup\n"
	got, err := parseCharMajors([]byte(data))
	want := map[string]uint32{"mem": 1, "nvidia": 195, "nvidiactl": 195, "nvidia-caps": 511, "nvidia-caps-imex-channels": 234}
	assert.NoError(t, err)
	assert.Equal(t, want, got)
	_, err = parseCharMajors([]byte("Character devices:\nx nvidia\n"))
	assert.ErrorIs(t, err, ErrInvalid, "bad line")
	got, err = parseCharMajors([]byte("Block devices:\n  8 sd\n"))
	assert.NoError(t, err, "no char section")
	assert.Empty(t, got, "no char section")
}

func TestParseMIGMinors(t *testing.T) {
	got, err := parseMIGMinors([]byte("config 1\nmonitor 2\ngpu0/gi0/access 3\ngpu0/gi0/ci7/access 11\ngpu12/gi14/ci0/access 1756\nfabric-imex-mgmt 4323\n\n"))
	require.NoError(t, err)
	for name, want := range map[string]uint32{"config": 1, "monitor": 2, "gpu0/gi0/access": 3, "gpu0/gi0/ci7/access": 11,
		"gpu12/gi14/ci0/access": 1756, "fabric-imex-mgmt": 4323} {
		m, ok := got.lookup(name)
		assert.True(t, ok, "lookup(%q)", name)
		assert.Equal(t, want, m, "lookup(%q)", name)
	}
	for _, absent := range []string{"gpu0/gi1/access", "gpu1/gi0/access", "gpu0/gi0/ci0/access", "gpu0/gi0"} {
		m, ok := got.lookup(absent)
		assert.False(t, ok, "lookup(%q) = %d", absent, m)
	}
	for gpu, want := range map[uint32][]uint32{0: {3, 11}, 12: {1756}, 1: nil} {
		assert.Equal(t, want, got.gpuMinors(gpu), "minors of GPU %d", gpu)
	}
	// Out of order, and a name listed twice: the later line wins, as a map
	// would keep it.
	got, err = parseMIGMinors([]byte("gpu1/gi0/access 5\ngpu0/gi0/access 3\ngpu0/gi1/access 6\ngpu0/gi0/access 4\n"))
	require.NoError(t, err)
	m, ok := got.lookup("gpu0/gi0/access")
	assert.True(t, ok, "lookup of a name listed twice")
	assert.Equal(t, uint32(4), m, "lookup of a name listed twice")
	m, _ = got.lookup("gpu0/gi1/access")
	assert.Equal(t, uint32(6), m, "lookup in an unsorted file")
	assert.Equal(t, []uint32{3, 4, 6}, got.gpuMinors(0), "minors of GPU 0 in an unsorted file")
	assert.Equal(t, []uint32{5}, got.gpuMinors(1), "minors of GPU 1 in an unsorted file")
	for _, bad := range []string{"config\n", "config x\n", "a b 3\n", "config -1\n", "gpu0/gi0/acces 3\n", "gpu/gi0/access 3\n", "gpu0/gi0/ci/access 3\n"} {
		_, err := parseMIGMinors([]byte(bad))
		assert.ErrorIs(t, err, ErrInvalid, "%q", bad)
	}
}

func TestParseFileParams(t *testing.T) {
	p, err := parseFileParams([]byte("ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 0\nDeviceFileUID: 7\nDeviceFileGID: 44\nDeviceFileMode: 432\nRmMsg: \"\"\n"))
	assert.NoError(t, err, "params")
	assert.Equal(t, fileParams{mode: 0o660, uid: 7, gid: 44, modify: false}, p, "params")
	p, err = parseFileParams([]byte("DeviceFileMinor: 3\nDeviceFileMode: 256\nDeviceFileModify: 1\n"))
	assert.NoError(t, err, "cap file")
	assert.Equal(t, fileParams{mode: 0o400, modify: true}, p, "cap file")
	_, err = parseFileParams([]byte("DeviceFileMode: rw\n"))
	assert.ErrorIs(t, err, ErrInvalid, "bad mode")
}

func TestDeviceFileMinor(t *testing.T) {
	for in, want := range map[string]int64{
		"DeviceFileMinor: 3\nDeviceFileMode: 256\n": 3,
		"DeviceFileMode: 256\n":                     -1,
		"DeviceFileMinor: x\n":                      -1,
		"DeviceFileMinor: -1\n":                     -1,
		"DeviceFileMinor: 4294967296\n":             -1,
	} {
		m, ok := deviceFileMinor(keyValues([]byte(in)))
		if assert.Equal(t, want >= 0, ok, "%q: %d; want %d", in, m, want) && ok {
			assert.Equal(t, want, int64(m), "%q", in)
		}
	}
}

func FuzzParseInformation(f *testing.F) {
	f.Add([]byte(h100Information))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := parseInformation(data)
		require.Equal(t, err != nil, info == information{}, "result %+v with error %v", info, err)
	})
}

func FuzzParseCharMajors(f *testing.F) {
	f.Add([]byte("Character devices:\n195 nvidia\n511 nvidia-caps\n\nBlock devices:\n  8 sd\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseCharMajors(data)
		require.Equal(t, err != nil, m == nil, "result %v with error %v", m, err)
		require.LessOrEqual(t, len(m), len(data), "result %v", m)
	})
}

func FuzzParseMIGMinors(f *testing.F) {
	f.Add([]byte("config 1\nmonitor 2\ngpu0/gi0/access 3\ngpu0/gi0/ci0/access 4\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseMIGMinors(data)
		require.Equal(t, err != nil, m == nil, "result %v with error %v", m, err)
		if m != nil {
			require.LessOrEqual(t, len(m.entries), len(data), "result %v", m)
		}
	})
}

// TestDRMNodeMinor: only card<N> and renderD<N> are DRM nodes to inject;
// connectors, control nodes and malformed numbers are not.
func TestDRMNodeMinor(t *testing.T) {
	tests := []struct {
		name string
		want uint32
		ok   bool
	}{
		{"card0", 0, true},
		{"card12", 12, true},
		{"renderD128", 128, true},
		{"controlD64", 0, false},
		{"card0-DP-1", 0, false},
		{"card", 0, false},
		{"renderD", 0, false},
		{"card-1", 0, false},
		{"card+1", 0, false},
		{"renderD1048576", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := drmNodeMinor(tc.name)
			assert.Equal(t, tc.ok, ok)
			if tc.ok {
				assert.Equal(t, tc.want, got)
			}
		})
	}
}
