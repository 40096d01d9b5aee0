// Package oci reads what an OCI runtime hands a hook: the container state
// a runtime writes to the hook's stdin, the bundle's config.json, and,
// from the two, the container's root filesystem.
//
// It is shared by package nvcontainer (the prestart hook's request) and by
// package nvcontainer/cdihook (the static CDI hook's actions), which needs
// nothing else of nvcontainer. The package therefore imports nothing but the standard
// library, runtime-spec's types and internal/sentinel (the shared error
// identities, itself standard library only); keep it so.
//
// # What it reads and changes
//
// It reads an io.Reader (the state, at most [MaxStateSize] bytes) and
// <bundle>/config.json (at most [MaxSpecSize] bytes); [ReadLimited] is the
// bounded read both use. It changes nothing, needs no privileges and no
// particular kernel, and has no OS-specific code.
//
// # The root filesystem
//
// [Rootfs] takes crun's non-standard "root" state field when it is set and
// the spec's root.path otherwise, joining a relative path to the bundle
// directory. That is the order of the NVIDIA Container Toolkit's hooks
// (oci.State.GetContainerRoot in nvidia-cdi-hook and nvidia-ctk hook): crun
// reports the root it actually resolved, so when the two differ the
// state's is the one the container runs on. runc writes no "root" field,
// so under runc root.path is always used. A root of "/" (the host's own
// root) is refused: nvidia-container-cli configure refuses it too, and a
// hook must never rewrite the host's files.
//
// # When not to use it
//
// It is not a runtime-spec validator: [ParseSpec] checks only what the
// hooks rely on (ociVersion, process and root present) and [ParseState]
// only a bundle and a pid that is not negative. A runtime that already
// holds its spec in memory does not need it.
package oci
