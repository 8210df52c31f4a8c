package bench

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

type row struct {
	scenario, phase string
	m               measured
	resources       int
	critical        float64 // real seconds; 0 when not computed
	criticalName    string
	// timed is what the ratio compares with critical when it is not the
	// CLI's wall time: one resource's apply (timedName), in seconds.
	timed     float64
	timedName string
	target    string
	ok        bool
}

type report struct {
	scale   float64
	started time.Time
	rows    []row
}

func (r *report) add(x row) { r.rows = append(r.rows, x) }

func (r *report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "make bench: %s, %d CPUs, %s, time scale %.2f (real s per PVE s), %s\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), runtime.Version(), r.scale,
		time.Since(r.started).Round(time.Second))
	b.WriteString("| scenario | phase | requests | resources | req/resource | wall s | critical path s | wall/path | peak RSS MiB | CPU s | target | met |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, x := range r.rows {
		cp, ratio := "", ""
		if x.critical > 0 {
			cp = fmt.Sprintf("%.1f", x.critical)
			if x.criticalName != "" {
				cp += " (" + x.criticalName + ")"
			}
			ratio = fmt.Sprintf("%.2f", x.m.run.Duration.Seconds()/x.critical)
			if x.timed > 0 {
				ratio = fmt.Sprintf("%.2f (%s %.1f s)", x.timed/x.critical, x.timedName, x.timed)
			}
		}
		met := ""
		if x.target != "" {
			met = map[bool]string{true: "yes", false: "**no**"}[x.ok]
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %.3f | %.1f | %s | %s | %.0f | %.1f | %s | %s |\n",
			x.scenario, x.phase, len(x.m.requests), x.resources, float64(len(x.m.requests))/float64(max(x.resources, 1)),
			x.m.run.Duration.Seconds(), cp, ratio, x.m.rssMiB, x.m.cpuSec, x.target, met)
	}
	b.WriteString("\nWhere an apply's wall time goes (from `apply -json`): the CLI's start, refresh and plan before the\n" +
		"first resource starts, the resources, and the CLI's finish after the last one:\n\n")
	for _, x := range r.rows {
		if p, ok := phasesOf(x.m); ok {
			fmt.Fprintf(&b, "- %s, %s: before the first resource %.1f s and %d requests; resources %.1f s; after the last %.1f s\n",
				x.scenario, x.phase, p.before, p.beforeRequests, p.resources, p.after)
		}
	}
	b.WriteString("\nRequests by kind (top 8 per run):\n\n")
	for _, x := range r.rows {
		fmt.Fprintf(&b, "%s, %s:\n```\n%s```\n", x.scenario, x.phase, Top(CountRequests(x.m.requests, x.m.nodes), 8))
	}
	return b.String()
}

// applyPhases splits an apply's wall time at its first resource's start
// and its last resource's end.
type applyPhases struct {
	before, resources, after float64 // seconds
	beforeRequests           int
}

func phasesOf(m measured) (applyPhases, bool) {
	if m.run == nil || m.start.IsZero() {
		return applyPhases{}, false
	}
	var first, last time.Time
	for _, iv := range ApplyTimes(m.run.Output) {
		if first.IsZero() || iv.Start.Before(first) {
			first = iv.Start
		}
		if iv.End.After(last) {
			last = iv.End
		}
	}
	if first.IsZero() {
		return applyPhases{}, false
	}
	p := applyPhases{
		before:    first.Sub(m.start).Seconds(),
		resources: last.Sub(first).Seconds(),
		after:     m.start.Add(m.run.Duration).Sub(last).Seconds(),
	}
	for _, q := range m.requests {
		if q.Time.Before(first) {
			p.beforeRequests++
		}
	}
	return p, true
}
