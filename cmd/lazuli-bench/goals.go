package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Target names the speed goals compare (--goals): lazuli durable (its
// default), the same server with --sync=false, and one lazuli instance on
// PostgreSQL; "disk" and "pgbench" are the limits measured beside them.
const (
	goalDurable = "lazuli"
	goalNoSync  = "lazuli-nosync"
	goalPG      = "pg1"
)

// goal is one speed goal: the ops/s of a workload on a target over the
// ops/s of its anchor (a limit of the machine, or equal work), at least
// want.
type goal struct {
	Name           string  `json:"name"`
	Workload       string  `json:"workload"`
	Target         string  `json:"target"`
	AnchorWorkload string  `json:"anchor_workload"`
	AnchorTarget   string  `json:"anchor_target"`
	Want           float64 `json:"want"`
}

// goalResult is a goal with what this run measured.
type goalResult struct {
	goal
	OpsPerSec       float64 `json:"ops_per_sec,omitempty"`
	AnchorOpsPerSec float64 `json:"anchor_ops_per_sec,omitempty"`
	// Ratio is OpsPerSec / AnchorOpsPerSec; 0 when either is missing.
	Ratio float64 `json:"ratio,omitempty"`
	Met   bool    `json:"met"`
	// Limit, on a durable-over-nosync goal, is the ratio the disk's
	// group commit leaves: groupCommitTarget's ops/s (LimitOpsPerSec)
	// over the anchor's; OfLimit is Ratio over min(Limit, 1).
	// RunFsyncMS is the mean fsync of the durable target's log during
	// its measurement (--engine-stats).
	LimitOpsPerSec float64 `json:"limit_ops_per_sec,omitempty"`
	Limit          float64 `json:"limit,omitempty"`
	OfLimit        float64 `json:"of_limit,omitempty"`
	RunFsyncMS     float64 `json:"run_fsync_ms,omitempty"`
}

// goals are the speed goals, in the order they print.
func goals() []goal {
	var g []goal
	for _, w := range []string{"blob-upload-64m", "file-upload-64m"} {
		g = append(g, goal{"durable upload at the disk", w, goalDurable, "disk-write-64m", diskTarget, 0.8})
	}
	for _, w := range []string{"blob-put-1k", "blob-lease", "blob-put-ifmatch", "table-insert",
		"table-replace-ifmatch", "queue-put", "file-put-1k"} {
		g = append(g, goal{"durable small write at one shared fsync", w, goalDurable, w, goalNoSync, 0.8})
	}
	for _, w := range []string{"blob-put-1k", "blob-put-ifmatch", "blob-lease", "table-insert",
		"queue-put", "queue-receive-delete"} {
		g = append(g, goal{"PostgreSQL engine at PostgreSQL's speed", w, goalPG, w, pgbenchTarget, 0.7})
	}
	g = append(g,
		goal{"Files equal to Blob for equal work", "file-upload-64m", goalDurable, "blob-upload-64m-md5", goalDurable, 0.9},
		goal{"Files equal to Blob for equal work", "file-put-1k", goalDurable, "blob-put-setmeta-1k", goalDurable, 0.9})
	return g
}

// evalGoals measures every goal against rep's results.
func evalGoals(rep *report) []goalResult {
	var out []goalResult
	for _, g := range goals() {
		gr := goalResult{goal: g}
		a, b := rep.find(g.Workload, g.Target), rep.find(g.AnchorWorkload, g.AnchorTarget)
		if a != nil && !a.failed() {
			gr.OpsPerSec = a.OpsPerSec
		}
		if b != nil && !b.failed() {
			gr.AnchorOpsPerSec = b.OpsPerSec
		}
		if gr.OpsPerSec > 0 && gr.AnchorOpsPerSec > 0 {
			gr.Ratio = gr.OpsPerSec / gr.AnchorOpsPerSec
			gr.Met = gr.Ratio >= g.Want
		}
		out = append(out, gr)
	}
	return out
}

// writeGoals prints each goal: its measured figure, its limit or anchor,
// the ratio, the ratio wanted, and whether it is met.
func writeGoals(w io.Writer, gs []goalResult) error {
	fmt.Fprintln(w, "\ngoals (ops/s, medians; the ratio is measured over limit):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "goal\tmeasured\tops/s\tlimit or anchor\tops/s\tratio\twant\tmet\t"+groupCommitTarget+" ops/s\tlimit\tof limit\tfsync in run ms\t")
	for _, g := range gs {
		if g.OpsPerSec == 0 && g.AnchorOpsPerSec == 0 {
			// A run of some workloads only (--workloads) leaves the
			// other goals out.
			continue
		}
		measured, anchor := g.Workload+" @"+g.Target, g.AnchorWorkload+" @"+g.AnchorTarget
		ops, aops, ratio, met := "-", "-", "-", "not measured"
		if g.OpsPerSec > 0 {
			ops = fmtRate(g.OpsPerSec)
		}
		if g.AnchorOpsPerSec > 0 {
			aops = fmtRate(g.AnchorOpsPerSec)
		}
		if g.Ratio > 0 {
			// Rounded down, so that a ratio printed as the goal meets it.
			ratio = fmt.Sprintf("%.2f", math.Floor(g.Ratio*100)/100)
			met = "no"
			if g.Met {
				met = "yes"
			}
		}
		lops, limit, of, runF := "-", "-", "-", "-"
		if g.Limit > 0 {
			lops, limit = fmtRate(g.LimitOpsPerSec), fmt.Sprintf("%.2f", g.Limit)
		}
		if g.OfLimit > 0 {
			of = fmt.Sprintf("%.2f", g.OfLimit)
		}
		if g.RunFsyncMS > 0 {
			runF = fmt.Sprintf("%.2f", g.RunFsyncMS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t\n", g.Name, measured, ops, anchor, aops, ratio, g.Want, met, lops, limit, of, runF)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range gs {
		if g.Limit > 0 {
			_, err := fmt.Fprintln(w, "limit = "+groupCommitTarget+" over the anchor: the --sync=false server's workload with, after each durable request, "+
				"the wait for a group commit of its record on the data directory's disk (one fsync at a time, each for every record written before it started) and nothing else")
			return err
		}
	}
	return nil
}

// durableSmallWrite reports whether a durable-over-nosync goal measures
// workload.
func durableSmallWrite(workload string) bool {
	for _, g := range goals() {
		if g.Workload == workload && g.Target == goalDurable && g.AnchorTarget == goalNoSync {
			return true
		}
	}
	return false
}

// goalNeeds reports whether, with --goals, workload runs on target: a
// target the goals name runs only what a goal reads from it (the slow
// uploads stay off the PostgreSQL instance); any other runs everything.
func goalNeeds(workload, target string) bool {
	if target != goalDurable && target != goalNoSync && target != goalPG {
		return true
	}
	for _, g := range goals() {
		if (g.Workload == workload && g.Target == target) || (g.AnchorWorkload == workload && g.AnchorTarget == target) {
			return true
		}
	}
	return false
}

// goalWorkloads are the workloads the goals need, in the order they run
// by default, the disk's right before the uploads it bounds.
func goalWorkloads() []string {
	var names []string
	for _, g := range goals() {
		for _, w := range []string{g.Workload, g.AnchorWorkload} {
			if !slices.Contains(names, w) {
				names = append(names, w)
			}
		}
	}
	var out []string
	for _, w := range workloads() {
		if slices.Contains(names, w.name) {
			out = append(out, w.name)
		}
	}
	return out
}

// goalWorkloadList is goalWorkloads as a --workloads value.
func goalWorkloadList() string { return strings.Join(goalWorkloads(), ",") }
