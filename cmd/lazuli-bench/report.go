package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// report is a whole run: its settings and every result.
type report struct {
	Started     time.Time `json:"started"`
	DurationS   float64   `json:"duration_s"`
	WarmupS     float64   `json:"warmup_s"`
	Concurrency int       `json:"concurrency"`
	Preload     int       `json:"preload"`
	// PreloadFor are the per-target preloads that replace Preload.
	PreloadFor map[string]int `json:"preload_for,omitempty"`
	APIVersion string         `json:"api_version"`
	CPUs       int            `json:"cpus"`
	LoadBefore string         `json:"load_before,omitempty"`
	LoadAfter  string         `json:"load_after,omitempty"`
	Targets    []string       `json:"targets"`
	// Rounds is how often each workload ran on each target; every
	// result is its median round's.
	Rounds  int       `json:"rounds,omitempty"`
	Results []*result `json:"results"`
	// Goals are the speed goals with this run's figures (--goals).
	Goals []goalResult `json:"goals,omitempty"`
}

// loadAverage returns the 1, 5 and 15 minute load averages where the
// system exposes them, else "".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func (rep *report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// find returns the result of workload on target, or nil.
func (rep *report) find(workload, target string) *result {
	for _, r := range rep.Results {
		if r.Workload == workload && r.Target == target {
			return r
		}
	}
	return nil
}

// writeTable prints one row per workload with the targets side by side,
// then the ops/s ratio of the first target to each other one, then notes
// on every failure.
func (rep *report) writeTable(w io.Writer) error {
	preload := strconv.Itoa(rep.Preload)
	for _, t := range rep.Targets {
		if n, ok := rep.PreloadFor[t]; ok {
			preload += fmt.Sprintf(" (%s %d)", t, n)
		}
	}
	fmt.Fprintf(w, "lazuli-bench %s: %s per workload after %s warm-up, %d clients, preload %s, x-ms-version %s\n",
		rep.Started.UTC().Format(time.RFC3339), fmtSeconds(rep.DurationS), fmtSeconds(rep.WarmupS),
		rep.Concurrency, preload, rep.APIVersion)
	if rep.Rounds > 1 {
		fmt.Fprintf(w, "%d rounds, the targets' order reversed every other round; each figure is the median round's\n", rep.Rounds)
	}
	if rep.LoadBefore != "" {
		fmt.Fprintf(w, "load average (1/5/15 min) before %s, after %s; %d CPUs\n", rep.LoadBefore, rep.LoadAfter, rep.CPUs)
	}
	fmt.Fprintln(w)

	var workloads []string
	for _, r := range rep.Results {
		if !slices.Contains(workloads, r.Workload) {
			workloads = append(workloads, r.Workload)
		}
	}
	// Numbers align right; pad the names so they still read left-aligned.
	width := len("workload")
	for _, wl := range workloads {
		width = max(width, len(wl))
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-len(s)) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{pad("workload")}
	for _, t := range rep.Targets {
		head = append(head, t+" ops/s", "p50 ms", "p99 ms", "MB/s")
	}
	servers := rep.serverTargets()
	for _, t := range servers[min(1, len(servers)):] {
		head = append(head, servers[0]+"/"+t)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, wl := range workloads {
		row := []string{pad(wl)}
		for _, t := range rep.Targets {
			row = append(row, cells(rep.find(wl, t))...)
		}
		if len(servers) > 0 {
			first := rep.find(wl, servers[0])
			for _, t := range servers[1:] {
				row = append(row, ratio(first, rep.find(wl, t)))
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	var multi []string
	for _, wl := range workloads {
		if n := requestsPerOp(wl); n != "" {
			multi = append(multi, wl+" = "+n)
		}
	}
	if len(multi) > 0 {
		fmt.Fprintln(w, "\none op of "+strings.Join(multi, "; "))
	}

	writeServerCPU(w, rep, workloads)
	var remarks []string
	for _, wl := range workloads {
		for _, t := range rep.Targets {
			if r := rep.find(wl, t); r != nil && r.Note != "" {
				remarks = append(remarks, fmt.Sprintf("  [%s] %s: %s", t, wl, r.Note))
			}
			if r := rep.find(wl, t); r != nil && r.Engine != "" {
				remarks = append(remarks, fmt.Sprintf("  [%s] %s: engine: %s", t, wl, r.Engine))
			}
		}
	}
	if len(remarks) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range remarks {
			fmt.Fprintln(w, n)
		}
	}

	var notes []string
	for _, wl := range workloads {
		for _, t := range rep.Targets {
			if n := note(rep.find(wl, t)); n != "" {
				notes = append(notes, n)
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nfailures (\"!\" after ops/s: some operations failed):")
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	if rep.Goals != nil {
		return writeGoals(w, rep.Goals)
	}
	return nil
}

// serverTargets are the targets that are servers, not the limits measured
// beside them; ratio columns compare only those.
func (rep *report) serverTargets() []string {
	var out []string
	for _, t := range rep.Targets {
		if t != diskTarget && t != groupCommitTarget && t != pgbenchTarget {
			out = append(out, t)
		}
	}
	return out
}

// writeServerCPU prints, when --cpu named server processes, the CPU per
// operation of each tier of each target, in microseconds.
func writeServerCPU(w io.Writer, rep *report, workloads []string) {
	type col struct{ target, tier string }
	var cols []col
	for _, r := range rep.Results {
		for _, c := range r.ServerCPU {
			if k := (col{r.Target, c.Tier}); !slices.Contains(cols, k) {
				cols = append(cols, k)
			}
		}
	}
	if len(cols) == 0 {
		return
	}
	slices.SortStableFunc(cols, func(a, b col) int {
		return slices.Index(rep.Targets, a.target) - slices.Index(rep.Targets, b.target)
	})
	fmt.Fprintln(w, "\nCPU per operation, µs (cores busy in parentheses; client: the load generator):")
	width := len("workload")
	for _, wl := range workloads {
		width = max(width, len(wl))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"workload" + strings.Repeat(" ", width-len("workload"))}
	for _, c := range cols {
		head = append(head, c.target+" "+c.tier)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, wl := range workloads {
		row := []string{wl + strings.Repeat(" ", width-len(wl))}
		for _, c := range cols {
			cell := "-"
			if r := rep.find(wl, c.target); r != nil && !r.failed() {
				for _, u := range r.ServerCPU {
					if u.Tier == c.tier {
						cell = fmt.Sprintf("%.0f (%.2f)", u.MicrosPerOp, u.Cores)
					}
				}
			}
			row = append(row, cell)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
}

// requestsPerOp says what one operation of a workload is when it is more
// than one request, or "".
func requestsPerOp(workload string) string {
	switch workload {
	case "blob-lease":
		return "acquire + release"
	case "blob-upload-64m":
		return "16 Put Block + Put Block List"
	case "blob-upload-64m-md5":
		return "16 Put Block with Content-MD5 + Put Block List"
	case "blob-put-setmeta-1k":
		return "Put Blob + Set Blob Metadata"
	case "disk-write-64m":
		return "write 64 MiB to a new file + fdatasync"
	case "file-put-1k":
		return "Create File + Put Range"
	case "file-upload-64m":
		return "Create File + 16 Put Range"
	case "queue-receive-delete":
		return "Get Messages + Delete Message"
	case "blob-cas-hot":
		return "(Get Blob Properties + Put Blob with If-Match) until the put wins"
	}
	return ""
}

// cells are the four columns of one result.
func cells(r *result) []string {
	switch {
	case r == nil:
		return []string{"-", "-", "-", "-"}
	case r.SetupError != "":
		return []string{"setup failed", "-", "-", "-"}
	case r.Ops == 0:
		return []string{"failed", "-", "-", "-"}
	}
	ops := fmtRate(r.OpsPerSec)
	if r.Failures > 0 {
		ops += "!"
	}
	mbs := "-"
	if r.BytesPerOp > 0 {
		mbs = fmtRate(r.MBPerSec)
	}
	if r.P99ms == 0 {
		// pgbench reports no percentiles.
		return []string{ops, "-", "-", mbs}
	}
	return []string{ops, fmtMs(r.P50ms), fmtMs(r.P99ms), mbs}
}

// ratio is a's ops/s over b's.
func ratio(a, b *result) string {
	if a == nil || b == nil || a.failed() || b.failed() || b.OpsPerSec == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a.OpsPerSec/b.OpsPerSec)
}

// note explains the failures of r, or returns "".
func note(r *result) string {
	if r == nil || r.Failures == 0 && r.SetupError == "" {
		return ""
	}
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(r.Errors)) {
		kinds = append(kinds, fmt.Sprintf("%s ×%d", k, r.Errors[k]))
	}
	by := ""
	if len(kinds) > 0 {
		by = " (" + strings.Join(kinds, ", ") + ")"
	}
	if r.SetupError != "" {
		return fmt.Sprintf("  [%s] %s: setup failed, %d failed request(s)%s; first: %s",
			r.Target, r.Workload, r.Failures, by, r.SetupError)
	}
	return fmt.Sprintf("  [%s] %s: %d of %d operations failed%s; first: %s",
		r.Target, r.Workload, r.Failures, r.Failures+r.Ops, by, r.FirstError)
}

func fmtRate(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func fmtMs(v float64) string {
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func fmtSeconds(s float64) string {
	return time.Duration(s * float64(time.Second)).String()
}
