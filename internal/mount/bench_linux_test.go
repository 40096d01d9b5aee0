package mount

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-nvc/nvc/internal/rootfs"
)

// BenchmarkBindFile measures one file bind into a container and its
// removal, by each method: open the source, attach it onto an existing
// placeholder, detach it. It runs inside one ns.Run (whose own cost is
// BenchmarkRun in internal/ns) so only the mount work is timed.
func BenchmarkBindFile(b *testing.B) {
	host := hostTree(b)
	for _, method := range methods {
		b.Run(method.String(), func(b *testing.B) {
			c := startCtr(b, nil)
			err := c.run(b, func(r *rootfs.Root) error {
				e, err := r.CreateFile(libTarget, 0o644)
				if err != nil {
					return err
				}
				defer e.Close()
				for b.Loop() {
					if err := bindOnce(host+"/"+libTarget, method, e); err != nil {
						return err
					}
				}
				return nil
			})
			require.NoError(b, err)
		})
	}
}

func bindOnce(path string, method Method, e *rootfs.Entry) error {
	src, err := OpenSource(path, ReadOnly|NoSuid|NoDev, &Options{Method: method})
	if err != nil {
		return err
	}
	defer src.Close()
	m, err := src.Attach(e.Dir(), e.Name())
	if err != nil {
		return err
	}
	defer m.Close()
	return m.Detach()
}

// BenchmarkOpenSource measures cloning a host file as a detached mount
// with its attributes (read-only, nosuid, nodev): one open_tree_attr
// (Linux 6.15), or open_tree and mount_setattr where that is missing. The
// clones are closed outside the timer, 100 at a time: closing a clone
// never attached dissolves it, which costs far more than making it.
func BenchmarkOpenSource(b *testing.B) {
	host := hostTree(b)
	for _, tc := range []struct {
		name   string
		noAttr bool
	}{{"open_tree_attr", false}, {"open_tree+mount_setattr", true}} {
		b.Run(tc.name, func(b *testing.B) {
			noTreeAttr.Store(tc.noAttr)
			defer noTreeAttr.Store(false)
			var srcs []*Source
			closeAll := func() {
				for _, s := range srcs {
					s.Close()
				}
				srcs = srcs[:0]
			}
			defer closeAll()
			for b.Loop() {
				src, err := OpenSource(host+"/"+libTarget, ReadOnly|NoSuid|NoDev, &Options{Method: NewAPI})
				require.NoError(b, err)
				if srcs = append(srcs, src); len(srcs) == 100 {
					b.StopTimer()
					closeAll()
					b.StartTimer()
				}
			}
		})
	}
}
