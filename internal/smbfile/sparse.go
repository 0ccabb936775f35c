package smbfile

import (
	"context"

	"github.com/lazuli-storage/lazuli/internal/azerr"
	"github.com/lazuli-storage/lazuli/internal/smb"
)

// The File service's handles are sparse-capable: its files keep the
// ranges written, and FSCTL_SET_ZERO_DATA is Clear Range.
var _ smb.Sparse = (*handle)(nil)

func (h *handle) SetSparse(ctx context.Context, sparse bool) error {
	_, err := h.svc.SetSparse(ctx, h.ref, sparse)
	if code(err) == azerr.InvalidInput {
		return smb.ErrInvalidParameter
	}
	return mapErr(err)
}

func (h *handle) ZeroRange(ctx context.Context, start, end int64) error {
	h.written.Store(true)
	_, err := h.svc.ZeroRange(ctx, h.ref, start, end)
	return dataErr(err)
}

func (h *handle) AllocatedRanges(ctx context.Context, off, n int64) ([][2]int64, error) {
	rs, err := h.svc.AllocatedRanges(ctx, h.ref, off, n)
	if err != nil {
		return nil, dataErr(err)
	}
	out := make([][2]int64, len(rs))
	for i, r := range rs {
		out[i] = [2]int64{r.Start, r.End + 1}
	}
	return out, nil
}
