package toolkit

import (
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// containerd16Config is a version 2 config as a user of containerd 1.6
// has it: runc with systemd cgroups, a registry mirror, a top-level key.
const containerd16Config = `version = 2
oom_score = -999

[grpc]
  address = "/run/containerd/containerd.sock"

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "registry.k8s.io/pause:3.6"
    [plugins."io.containerd.grpc.v1.cri".containerd]
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = true
    [plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
      endpoint = ["https://mirror.example"]
`

// containerd2Config is a version 3 config (containerd 2.0).
const containerd2Config = `version = 3
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
  SystemdCgroup = true
`

func decodeForTest(t *testing.T, data []byte) map[string]any {
	t.Helper()
	m := map[string]any{}
	_, err := toml.Decode(string(data), &m)
	require.NoError(t, err, "%s", data)
	return m
}

// at walks a decoded table.
func at(t *testing.T, m map[string]any, path ...string) any {
	t.Helper()
	var v any = m
	for _, k := range path {
		tbl, ok := v.(map[string]any)
		require.True(t, ok, "%q: not a table before %q", path, k)
		v, ok = tbl[k]
		require.True(t, ok, "%q: no %q", path, k)
	}
	return v
}

func TestConfigureContainerd(t *testing.T) {
	v2 := []string{"plugins", "io.containerd.grpc.v1.cri"}
	v3 := []string{"plugins", "io.containerd.cri.v1.runtime"}
	rows := []struct {
		name string
		in   string
		rt   ContainerdRuntime
		cri  []string
		kept [][]string // paths that must keep their input values
	}{
		{"v2 existing", containerd16Config, ContainerdRuntime{SetAsDefault: true, CDIEnabled: true}, v2, [][]string{
			{"oom_score"}, {"grpc", "address"},
			{"plugins", "io.containerd.grpc.v1.cri", "sandbox_image"},
			{"plugins", "io.containerd.grpc.v1.cri", "registry", "mirrors", "docker.io", "endpoint"},
			{"plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes", "runc"},
		}},
		{"v3 existing", containerd2Config, ContainerdRuntime{Path: "/usr/bin/nvidia-container-runtime", SetAsDefault: true, CDIEnabled: true}, v3, [][]string{
			{"plugins", "io.containerd.cri.v1.images", "snapshotter"},
			{"plugins", "io.containerd.cri.v1.runtime", "containerd", "runtimes", "runc"},
		}},
		{"empty is v2", "  \n", ContainerdRuntime{}, v2, nil},
		{"v1 (no version)", "[plugins.cri]\nstream_server_port = \"10010\"\n", ContainerdRuntime{Name: "nv"}, []string{"plugins", "cri"}, [][]string{
			{"plugins", "cri", "stream_server_port"},
		}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			out, err := ConfigureContainerd([]byte(r.in), r.rt)
			require.NoError(t, err)
			got := decodeForTest(t, out)
			in := decodeForTest(t, []byte(r.in))
			for _, p := range r.kept {
				assert.Equal(t, at(t, in, p...), at(t, got, p...), "%q changed", p)
			}
			name, path := r.rt.Name, r.rt.Path
			if name == "" {
				name = "nvidia"
			}
			if path == "" {
				path = "nvidia-container-runtime"
			}
			rtPath := append(append([]string{}, r.cri...), "containerd", "runtimes", name)
			assert.Equal(t, "io.containerd.runc.v2", at(t, got, append(rtPath, "runtime_type")...))
			assert.Equal(t, path, at(t, got, append(rtPath, "options", "BinaryName")...))
			containerd := at(t, got, append(r.cri, "containerd")...).(map[string]any)
			cri := at(t, got, r.cri...).(map[string]any)
			if r.rt.SetAsDefault {
				assert.Equal(t, name, containerd["default_runtime_name"])
			} else {
				assert.NotEqual(t, name, containerd["default_runtime_name"])
			}
			if r.rt.CDIEnabled {
				assert.Equal(t, true, cri["enable_cdi"])
			} else {
				assert.NotContains(t, cri, "enable_cdi")
			}
			if r.kept != nil {
				assert.Equal(t, in["version"], got["version"], "version changed")
			} else {
				assert.Equal(t, int64(2), got["version"])
			}
			again, err := ConfigureContainerd(out, r.rt)
			require.NoError(t, err)
			assert.Equal(t, string(out), string(again), "a second run changed the file")
			for range 5 {
				same, err := ConfigureContainerd([]byte(r.in), r.rt)
				require.NoError(t, err)
				require.Equal(t, string(out), string(same), "the output's order is not stable")
			}
		})
	}
}

// TestConfigureContainerdRuncOptions: a new nvidia entry starts from runc's
// (SystemdCgroup kept), an existing one keeps its keys, and runc is left as
// it was.
func TestConfigureContainerdRuncOptions(t *testing.T) {
	out, err := ConfigureContainerd([]byte(containerd16Config), ContainerdRuntime{})
	require.NoError(t, err)
	got := decodeForTest(t, out)
	rts := []string{"plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes"}
	assert.Equal(t, true, at(t, got, append(rts, "nvidia", "options", "SystemdCgroup")...))
	assert.Equal(t, map[string]any{"SystemdCgroup": true}, at(t, got, append(rts, "runc", "options")...), "runc's options changed")
	assert.Equal(t, "runc", at(t, got, "plugins", "io.containerd.grpc.v1.cri", "containerd", "default_runtime_name"))

	existing := containerd16Config + `      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
        privileged_without_host_devices = true
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
          BinaryName = "/old/path"
          Root = "/run/nv"
`
	out, err = ConfigureContainerd([]byte(existing), ContainerdRuntime{Path: "/new/path"})
	require.NoError(t, err)
	got = decodeForTest(t, out)
	assert.Equal(t, map[string]any{"BinaryName": "/new/path", "Root": "/run/nv"}, at(t, got, append(rts, "nvidia", "options")...))
	assert.Equal(t, true, at(t, got, append(rts, "nvidia", "privileged_without_host_devices")...))
}

func TestConfigureContainerdErrors(t *testing.T) {
	rows := []struct{ name, in, want string }{
		{"not toml", "version = ", "invalid containerd config"},
		{"version 4", "version = 4", "unsupported version 4"},
		{"version string", `version = "2"`, "is not an integer"},
		{"runtimes not a table", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\nruntimes = 1\n", `"runtimes"] is a int64, not a table`},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			_, err := ConfigureContainerd([]byte(r.in), ContainerdRuntime{})
			require.ErrorIs(t, err, ErrContainerdConfig)
			assert.ErrorContains(t, err, r.want)
		})
	}
}

func TestConfigureCRIO(t *testing.T) {
	in := `[crio]
log_dir = "/var/log/crio/pods"
[crio.runtime]
default_runtime = "crun"
[crio.runtime.runtimes.crun]
runtime_path = "/usr/bin/crun"
[crio.runtime.runtimes.nvidia]
monitor_path = "/usr/libexec/crio/conmon"
`
	out, err := ConfigureCRIO([]byte(in), CRIORuntime{Path: "/usr/bin/nvidia-container-runtime"})
	require.NoError(t, err)
	got := decodeForTest(t, out)
	assert.Equal(t, map[string]any{"runtime_path": "/usr/bin/nvidia-container-runtime", "runtime_type": "oci",
		"monitor_path": "/usr/libexec/crio/conmon"}, at(t, got, "crio", "runtime", "runtimes", "nvidia"))
	assert.Equal(t, "crun", at(t, got, "crio", "runtime", "default_runtime"))
	assert.Equal(t, "/var/log/crio/pods", at(t, got, "crio", "log_dir"))
	assert.Equal(t, "/usr/bin/crun", at(t, got, "crio", "runtime", "runtimes", "crun", "runtime_path"))
	again, err := ConfigureCRIO(out, CRIORuntime{Path: "/usr/bin/nvidia-container-runtime"})
	require.NoError(t, err)
	assert.Equal(t, string(out), string(again), "a second run changed the file")

	out, err = ConfigureCRIO(nil, CRIORuntime{SetAsDefault: true})
	require.NoError(t, err)
	assert.Equal(t, `[crio]
  [crio.runtime]
    default_runtime = "nvidia"
    [crio.runtime.runtimes]
      [crio.runtime.runtimes.nvidia]
        runtime_path = "nvidia-container-runtime"
        runtime_type = "oci"
`, string(out))

	_, err = ConfigureCRIO([]byte("crio = 1"), CRIORuntime{})
	require.ErrorIs(t, err, ErrCRIOConfig)
}
