package main

import (
	"os"
	"path/filepath"
	"slices"
	"time"
)

// fsyncProbe is the data directory's own fdatasync latency, measured
// with nothing else running: small records appended to a preallocated
// file, each followed by fdatasync, as lazuli's log commits. With N
// clients each holding one request in flight and every acknowledged
// write waiting for a sync that started after its record was written,
// durable ops/s <= N / F, so a durable/--sync=false ratio cannot pass
// N / (F * nosync ops/s).
type fsyncProbe struct {
	Syncs    int     `json:"syncs"`
	MedianMS float64 `json:"median_ms"`
	P99MS    float64 `json:"p99_ms"`
}

// probeFsync appends count 512-byte records to a 1 MiB file written in
// full beforehand (so each sync flushes data, not a size change) in dir.
func probeFsync(dir string, count int) (*fsyncProbe, error) {
	f, err := os.CreateTemp(dir, "lazuli-bench-fsync-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(filepath.Clean(f.Name()))
	defer f.Close()
	const size, record = 1 << 20, 512
	if _, err := f.Write(make([]byte, size)); err != nil {
		return nil, err
	}
	if err := datasync(f); err != nil {
		return nil, err
	}
	rec := pattern(record)
	lat := make([]time.Duration, 0, count)
	for i := range count {
		if _, err := f.WriteAt(rec, int64(i*record)%size); err != nil {
			return nil, err
		}
		t := time.Now()
		if err := datasync(f); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t))
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return &fsyncProbe{Syncs: count, MedianMS: ms(lat[len(lat)/2]), P99MS: ms(lat[len(lat)*99/100])}, nil
}

// syncsPerOp is how many dependent durable requests one op of a
// workload makes, each waiting for a sync of its own; 1 when not listed.
var syncsPerOp = map[string]float64{"blob-lease": 2, "file-put-1k": 2}

// applyFsyncCeiling sets, on each durable-over-nosync goal, the ratio
// N / (S * F * nosync ops/s), S its syncsPerOp, the probe's median latency F allows and the
// fraction of it the measured ratio reaches.
func applyFsyncCeiling(gs []goalResult, clients int, p *fsyncProbe) {
	if p == nil || p.MedianMS <= 0 {
		return
	}
	for i := range gs {
		g := &gs[i]
		if g.Target != goalDurable || g.AnchorTarget != goalNoSync || g.AnchorOpsPerSec <= 0 {
			continue
		}
		s := syncsPerOp[g.Workload]
		if s == 0 {
			s = 1
		}
		g.FsyncCeiling = float64(clients) / (s * p.MedianMS / 1000 * g.AnchorOpsPerSec)
		if g.Ratio > 0 {
			g.OfCeiling = g.Ratio / min(g.FsyncCeiling, 1)
		}
	}
}
