// Command nvidia-docker is the seed's Docker wrapper rebuilt on this
// module: it runs docker with the same arguments, except that `run` and
// `create` get --runtime=nvidia (the runtime `nvidia-ctk runtime configure
// --runtime=docker` registers) and, when NV_GPU is set, -e
// NVIDIA_VISIBLE_DEVICES=<NV_GPU, spaces made commas>.
//
//	NV_GPU=0,1 nvidia-docker run --rm IMAGE nvidia-smi
//	nvidia-docker version
//
// NV_DOCKER names the docker program (default: docker in PATH). Docker's
// global options before the subcommand (-H HOST, --context NAME, …) are
// passed on; `docker container run` is passed through unchanged, as the
// seed's script did. The rule is package nvcontainer/toolkit's
// NvidiaDocker; this program only execs its result.
//
// # What it reads and changes
//
// Its arguments and NV_GPU, NV_DOCKER and PATH; it changes nothing itself
// and replaces its process with docker (exec), so docker's exit status is
// its own. It needs whatever docker needs (access to the daemon's socket).
//
// # When not to use it
//
// With Docker 19.03 and later, `docker run --gpus` (through
// nvidia-container-runtime-hook) or `--runtime=nvidia` with
// NVIDIA_VISIBLE_DEVICES does the same without a wrapper; nvidia-docker
// exists for scripts written for nvidia-docker 2.
package main
