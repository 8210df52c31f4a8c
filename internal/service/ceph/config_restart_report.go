package ceph

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// A rolling restart can take an hour; Terraform shows only warnings of an
// apply at the default log level, so the restart ends with a summary
// warning: what restarted, in which order, how long each host took
// (issue #13). tflog keeps the step-by-step progress.

// restartStep is one host's daemons of one kind, restarted together (OSDs)
// or one daemon (a monitor, a manager).
type restartStep struct {
	Host    string
	Daemons []string
	Took    time.Duration
	Err     error
}

// timed runs one step and records it.
func (r *restarter) timed(host string, ds []cephDaemon, f func() error) error {
	start := time.Now()
	err := f()
	r.steps = append(r.steps, restartStep{Host: host, Daemons: daemonNames(ds), Took: time.Since(start), Err: err})
	return err
}

func roundDuration(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// restartSummary describes the steps, numbered in order.
func restartSummary(steps []restartStep) string {
	var b strings.Builder
	for i, s := range steps {
		state := "restarted"
		if s.Err != nil {
			state = "FAILED"
		}
		fmt.Fprintf(&b, "\n  %d. %s: %s %s in %s", i+1, s.Host, strings.Join(s.Daemons, ", "), state, roundDuration(s.Took))
	}
	return b.String()
}

// addRestartReport adds the summary warning of a rolling restart for id.
func addRestartReport(diags *diag.Diagnostics, id string, steps []restartStep, total time.Duration, rerr error) {
	if len(steps) == 0 {
		return
	}
	n, hosts := 0, map[string]bool{}
	for _, s := range steps {
		if s.Err == nil {
			n += len(s.Daemons)
			hosts[s.Host] = true
		}
	}
	if rerr != nil {
		diags.AddWarning(fmt.Sprintf("Ceph rolling restart for %s %s stopped after %d daemon(s)", configTypeName, id, n),
			fmt.Sprintf("In order, one host at a time (%s in all):%s", roundDuration(total), restartSummary(steps)))
		return
	}
	diags.AddWarning(fmt.Sprintf("Ceph rolling restart for %s %s: %d daemon(s) on %d host(s) restarted in %s", configTypeName, id, n,
		len(hosts), roundDuration(total)),
		"In order, one host at a time, each after Ceph's ok-to-stop and with noout on that host only:"+restartSummary(steps))
}
