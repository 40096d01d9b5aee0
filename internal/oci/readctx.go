package oci

import (
	"context"
	"io"
)

// ReadContext is ReadLimited that returns when ctx is done: then it gives
// ctx's error (context.Cause) and leaves the read to end with r (close r
// to end it sooner).
func ReadContext(ctx context.Context, r io.Reader, limit int64) ([]byte, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	if ctx.Done() == nil {
		return ReadLimited(r, limit)
	}
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := ReadLimited(r, limit)
		done <- result{data, err}
	}()
	select {
	case res := <-done:
		return res.data, res.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}
