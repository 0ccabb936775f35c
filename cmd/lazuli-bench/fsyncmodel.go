package main

// applyFsyncModel sets, on each durable-over-nosync goal whose durable
// measurement saw fsyncs, the ratio they leave if durability only added
// their wait to each request: 1 / (1 + 1.5 * S * F * nosync ops/s / N),
// F the mean fsync of that measurement, S its syncsPerOp, N the clients.
// With one fsync in flight, a request waits for the rest of the one
// running when its record comes (half of one on average) and then its
// own: 1.5 F. Each client then spends 1.5 S F of durable wait on top of
// the N / (nosync ops/s) its op took without. Where the ratio measured
// is near this, the disk's fsync time during the run stops the goal,
// not the group commit; the idle probe's ceiling (applyFsyncCeiling)
// does not see a disk that other work keeps busy.
func applyFsyncModel(gs []goalResult, rep *report, clients int) {
	for i := range gs {
		g := &gs[i]
		if g.Target != goalDurable || g.AnchorTarget != goalNoSync || g.AnchorOpsPerSec <= 0 || clients <= 0 {
			continue
		}
		r := rep.find(g.Workload, g.Target)
		if r == nil || r.FsyncMS <= 0 {
			continue
		}
		s := syncsPerOp[g.Workload]
		if s == 0 {
			s = 1
		}
		g.RunFsyncMS = r.FsyncMS
		g.FsyncModel = 1 / (1 + 1.5*s*r.FsyncMS/1000*g.AnchorOpsPerSec/float64(clients))
	}
}
