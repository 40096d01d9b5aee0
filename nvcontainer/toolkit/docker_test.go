package toolkit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNvidiaDocker(t *testing.T) {
	rows := []struct {
		name    string
		args    []string
		env     []string
		want    []string
		prog    string
		version bool
	}{
		{"run", []string{"run", "--rm", "img", "nvidia-smi"}, nil,
			[]string{"run", "--runtime=nvidia", "--rm", "img", "nvidia-smi"}, "docker", false},
		{"create with NV_GPU", []string{"create", "img"}, []string{"NV_GPU=0 2"},
			[]string{"create", "--runtime=nvidia", "-e", "NVIDIA_VISIBLE_DEVICES=0,2", "img"}, "docker", false},
		{"NV_GPU commas and uuids", []string{"run", "img"}, []string{"NV_GPU= GPU-a,GPU-b "},
			[]string{"run", "--runtime=nvidia", "-e", "NVIDIA_VISIBLE_DEVICES=GPU-a,GPU-b", "img"}, "docker", false},
		{"empty NV_GPU", []string{"run", "img"}, []string{"NV_GPU="},
			[]string{"run", "--runtime=nvidia", "img"}, "docker", false},
		{"global options", []string{"-H", "unix:///s", "--log-level=debug", "run", "img"}, nil,
			[]string{"-H", "unix:///s", "--log-level=debug", "run", "--runtime=nvidia", "img"}, "docker", false},
		{"host named run", []string{"-H", "run", "ps"}, []string{"NV_GPU=0"},
			[]string{"-H", "run", "ps"}, "docker", false},
		{"image named run", []string{"pull", "run"}, []string{"NV_GPU=0"},
			[]string{"pull", "run"}, "docker", false},
		{"container run", []string{"container", "run", "img"}, nil,
			[]string{"container", "run", "img"}, "docker", false},
		{"version", []string{"version"}, nil, []string{"version"}, "docker", true},
		{"NV_DOCKER", []string{"ps", "-a"}, []string{"NV_DOCKER=/opt/docker"},
			[]string{"ps", "-a"}, "/opt/docker", false},
		{"nothing", nil, nil, []string{}, "docker", false},
		{"after --", []string{"--", "run"}, nil, []string{"--", "run"}, "docker", false},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got := NvidiaDocker(r.args, r.env)
			assert.Equal(t, r.prog, got.Program)
			assert.Equal(t, r.want, append([]string{}, got.Args...))
			assert.Equal(t, r.version, got.Version)
		})
	}
}

func TestConfigureDocker(t *testing.T) {
	const user = `{
  "log-driver": "json-file",
  "log-opts": {"max-size": "10m"},
  "runtimes": {
    "kata": {"path": "/usr/bin/kata-runtime"},
    "nvidia": {"path": "/old/nvidia-container-runtime", "runtimeArgs": ["--debug"]}
  },
  "features": {"buildkit": true},
  "max-concurrent-downloads": 3.50
}`
	rows := []struct {
		name string
		in   string
		rt   DockerRuntime
		want string
	}{
		{"empty file", "", DockerRuntime{},
			`{"runtimes":{"nvidia":{"args":[],"path":"nvidia-container-runtime"}}}`},
		{"null", "null\n", DockerRuntime{Path: "/usr/bin/nvidia-container-runtime"},
			`{"runtimes":{"nvidia":{"args":[],"path":"/usr/bin/nvidia-container-runtime"}}}`},
		{"keeps the user's keys", user, DockerRuntime{Path: "/p"},
			`{"features":{"buildkit":true},"log-driver":"json-file","log-opts":{"max-size":"10m"},"max-concurrent-downloads":3.50,` +
				`"runtimes":{"kata":{"path":"/usr/bin/kata-runtime"},"nvidia":{"args":[],"path":"/p","runtimeArgs":["--debug"]}}}`},
		{"default and cdi", user, DockerRuntime{Name: "nv", SetAsDefault: true, CDIEnabled: true},
			`{"default-runtime":"nv","features":{"buildkit":true,"cdi":true},"log-driver":"json-file","log-opts":{"max-size":"10m"},"max-concurrent-downloads":3.50,` +
				`"runtimes":{"kata":{"path":"/usr/bin/kata-runtime"},"nv":{"args":[],"path":"nvidia-container-runtime"},` +
				`"nvidia":{"path":"/old/nvidia-container-runtime","runtimeArgs":["--debug"]}}}`},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			out, err := ConfigureDocker([]byte(r.in), r.rt)
			require.NoError(t, err)
			assert.True(t, strings.HasSuffix(string(out), "}\n"), "output ends in a newline: %q", out)
			assert.Contains(t, string(out), "\n    \"", "indented with four spaces: %s", out)
			var compact strings.Builder
			require.NoError(t, json.NewEncoder(&compact).Encode(json.RawMessage(out)))
			assert.JSONEq(t, r.want, compact.String())
			assert.Equal(t, r.want+"\n", compact.String(), "members sorted, numbers as written")
			again, err := ConfigureDocker(out, r.rt)
			require.NoError(t, err)
			assert.Equal(t, string(out), string(again), "configuring twice changes nothing")
		})
	}
	for _, bad := range []string{"[]", `"x"`, "{", `{"runtimes": []}`, `{"runtimes": {"nvidia": 1}}`} {
		t.Run("invalid "+bad, func(t *testing.T) {
			_, err := ConfigureDocker([]byte(bad), DockerRuntime{CDIEnabled: true})
			require.ErrorIs(t, err, ErrDockerConfig)
		})
	}
	t.Run("invalid features", func(t *testing.T) {
		_, err := ConfigureDocker([]byte(`{"features": 1}`), DockerRuntime{CDIEnabled: true})
		require.ErrorIs(t, err, ErrDockerConfig)
	})
}
