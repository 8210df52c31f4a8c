package acctest

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// CephRestartsSince lists the Ceph daemons whose units started after t,
// sorted.
func (e *Env) CephRestartsSince(t time.Time) []string {
	var out []string
	for d, at := range e.Sim.CephDaemonStarts() {
		if at.After(t) {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// CheckSafeRestart checks what the simulator recorded of Ceph restarts:
// never two hosts with OSDs down at once, no OSD down without noout (but
// those given), no PG below min_size, and no noout left set. Against a live
// cluster there is no record and it passes.
func (e *Env) CheckSafeRestart(downWithoutNoout ...string) error {
	if e.Sim == nil {
		return nil
	}
	if n := e.Sim.CephMaxHostsDownAtOnce(); n > 1 {
		return fmt.Errorf("%d hosts had OSDs down at the same time: %v", n, e.Sim.CephDownHistory())
	}
	for _, v := range e.Sim.CephDownWithoutNoout() {
		allowed := false
		for _, osd := range downWithoutNoout {
			allowed = allowed || strings.HasPrefix(v, osd+" ")
		}
		if !allowed {
			return fmt.Errorf("OSDs went down without noout: %v", e.Sim.CephDownWithoutNoout())
		}
	}
	if v := e.Sim.CephMinSizeViolations(); len(v) > 0 {
		return fmt.Errorf("PGs fell below min_size: %v", v[:min(len(v), 3)])
	}
	if v := e.Sim.CephNooutSet(); len(v) > 0 {
		return fmt.Errorf("noout still set: %v", v)
	}
	return nil
}
