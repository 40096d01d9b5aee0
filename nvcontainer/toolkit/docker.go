package toolkit

import (
	"strings"

	"github.com/go-nvc/nvc/nvcontainer/request"
)

// Environment variables nvidia-docker reads.
const (
	// NVGPUEnv is nvidia-docker's GPU selection: indexes or UUIDs,
	// separated by commas or spaces.
	NVGPUEnv = "NV_GPU"
	// NVDockerEnv names the docker program nvidia-docker runs (default
	// "docker", looked up in PATH).
	NVDockerEnv = "NV_DOCKER"
	// DockerRuntimeName is the runtime name nvidia-docker asks Docker
	// for and `nvidia-ctk runtime configure` registers by default.
	DockerRuntimeName = "nvidia"
)

// dockerValueFlags are docker's global options that take a value as the
// next word (docker 20.10 to 28).
var dockerValueFlags = map[string]bool{
	"H": true, "host": true, "c": true, "context": true, "config": true,
	"l": true, "log-level": true, "tlscacert": true, "tlscert": true, "tlskey": true,
}

// DockerCommand is the command nvidia-docker runs in its place.
type DockerCommand struct {
	// Program is the docker program: $NV_DOCKER, else "docker".
	Program string
	// Args are its arguments (without argv[0]).
	Args []string
	// Version is true for `nvidia-docker version`: the wrapper prints
	// its own version line before docker's.
	Version bool
}

// NvidiaDocker returns the docker command nvidia-docker runs for args (its
// own arguments, without argv[0]) in environment env ("KEY=value"; the
// process environment is never read). As the seed's nvidia-docker script
// did: `run` and `create` get --runtime=nvidia and, when NV_GPU is set,
// -e NVIDIA_VISIBLE_DEVICES=<NV_GPU with spaces made commas>, right after
// the subcommand so that the image and its command stay last; every other
// command passes through unchanged. The subcommand is the first word after
// docker's global options (-H HOST and the like take the next word; "--"
// ends them).
func NvidiaDocker(args, env []string) DockerCommand {
	vars := lookupEnv(env)
	cmd := DockerCommand{Program: vars[NVDockerEnv]}
	if cmd.Program == "" {
		cmd.Program = "docker"
	}
	i := skipOptions(args, dockerValueFlags)
	if i >= len(args) {
		cmd.Args = append([]string(nil), args...)
		return cmd
	}
	switch args[i] {
	case "run", "create":
		extra := []string{"--runtime=" + DockerRuntimeName}
		if gpus := nvGPU(vars[NVGPUEnv]); gpus != "" {
			extra = append(extra, "-e", request.EnvVisibleDevices+"="+gpus)
		}
		cmd.Args = append(append(append([]string(nil), args[:i+1]...), extra...), args[i+1:]...)
	case "version":
		cmd.Version = true
		fallthrough
	default:
		cmd.Args = append([]string(nil), args...)
	}
	return cmd
}

// nvGPU turns NV_GPU's list ("0 1", "0,1", " GPU-… ") into the comma list
// NVIDIA_VISIBLE_DEVICES takes; empty when it names nothing.
func nvGPU(v string) string {
	return strings.Join(strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }), ",")
}
