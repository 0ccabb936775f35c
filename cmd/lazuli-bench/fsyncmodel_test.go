package main

import (
	"math"
	"testing"
)

// TestFsyncModel pins the ratio the run's own fsync time leaves a durable
// goal, 1 / (1 + 1.5 S F nosync/N), and that only durable-over-nosync
// goals whose durable measurement saw fsyncs get one.
func TestFsyncModel(t *testing.T) {
	rep := &report{Results: []*result{
		{Workload: "table-insert", Target: goalDurable, FsyncMS: 2},
		{Workload: "blob-lease", Target: goalDurable, FsyncMS: 2},
		{Workload: "queue-put", Target: goalDurable},
	}}
	gs := []goalResult{
		{goal: goal{Workload: "table-insert", Target: goalDurable, AnchorTarget: goalNoSync}, AnchorOpsPerSec: 8000},
		{goal: goal{Workload: "blob-lease", Target: goalDurable, AnchorTarget: goalNoSync}, AnchorOpsPerSec: 2000},
		{goal: goal{Workload: "queue-put", Target: goalDurable, AnchorTarget: goalNoSync}, AnchorOpsPerSec: 8000},
		{goal: goal{Workload: "table-insert", Target: goalPG, AnchorTarget: pgbenchTarget}, AnchorOpsPerSec: 8000},
	}
	applyFsyncModel(gs, rep, 16)
	// 1.5 * 2 ms * 8000/s / 16 = 1.5: 1 / 2.5.
	if g := gs[0]; !near(g.FsyncModel, 0.4) || g.RunFsyncMS != 2 {
		t.Errorf("table-insert: model %v at %v ms, want 0.4 at 2 ms", g.FsyncModel, g.RunFsyncMS)
	}
	// Two syncs per op: 1.5 * 2 * 2 ms * 2000/s / 16 = 0.75.
	if g := gs[1]; !near(g.FsyncModel, 1/1.75) {
		t.Errorf("blob-lease: model %v, want %v", g.FsyncModel, 1/1.75)
	}
	if gs[2].FsyncModel != 0 || gs[3].FsyncModel != 0 {
		t.Errorf("a model without fsyncs (%v) or for PostgreSQL (%v)", gs[2].FsyncModel, gs[3].FsyncModel)
	}
}

// TestMeanFsyncMS: the mean fsync between two engine samples.
func TestMeanFsyncMS(t *testing.T) {
	before := engineStats{"fsyncs_total": 10, "fsync_seconds_total": 0.01}
	after := engineStats{"fsyncs_total": 110, "fsync_seconds_total": 0.21}
	if got := meanFsyncMS(before, after); !near(got, 2) {
		t.Errorf("mean %v ms, want 2", got)
	}
	if meanFsyncMS(before, before) != 0 || meanFsyncMS(nil, after) != 0 {
		t.Error("a mean without fsyncs or samples")
	}
}

// near compares computed ratios.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
