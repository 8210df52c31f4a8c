package pvesim

import (
	"context"
	"sort"
	"strconv"
	"time"
)

// WorkSpan is one piece of PVE's own work: a task, a timed node program,
// an HA action or an OSD restart with its recovery. Kind is the task type
// ("qmcreate"), "ssh:<program> <verb>", "ha" or "osd-restart"; ID is the
// task's ID (a VMID, an OSD, "networking"), the HA sid or the OSD. End is
// zero while it runs. PVESeconds is what it takes on real PVE; with
// Options.TimeScale its real duration is about TimeScale × PVESeconds.
type WorkSpan struct {
	Node       string
	Kind       string
	ID         string
	Start, End time.Time
	PVESeconds float64
}

// lockedWorkers spend most of their time holding the guest's config lock
// (qemu-server's workers lock first, then allocate or copy): with
// TimeScale, 10% of their time passes before the lock, 90% under it.
var lockedWorkers = map[string]bool{"qmcreate": true, "qmconfig": true, "resize": true, "qmmove": true, "qmigrate": true}

// stagedWorkers change what clients see partway through: their effect
// starts after the share of their time given here and spends the rest in
// workLocked. clusterjoin switches the node to the cluster's pmxcfs (its
// tickets, its membership) when pve-cluster restarts, about a quarter
// into PVE's join worker (Setup::join: the login to the member, addnode
// and writing corosync's files come first; waiting for quorum, the node's
// files and certificate and the pveproxy restart after).
var stagedWorkers = map[string]float64{"clusterjoin": 0.25}

// timeTaskLocked decides how long t runs and enters it into the timeline.
func (s *Sim) timeTaskLocked(c *call, t *task) {
	pveSec := s.taskSeconds(c, t.Type) * jitter(t.UPID)
	if s.opts.TimeScale > 0 {
		total := time.Duration(pveSec * s.opts.TimeScale * float64(time.Second))
		t.lead, t.work = total, 0
		if lockedWorkers[t.Type] {
			t.lead, t.work = total/10, total-total/10
		}
		if share, ok := stagedWorkers[t.Type]; ok {
			t.lead = time.Duration(share * float64(total))
			t.work = total - t.lead
		}
	} else {
		t.lead, t.work = s.opts.TaskDuration, s.opts.TaskDuration
	}
	t.span = s.startSpan(WorkSpan{Node: t.Node, Kind: t.Type, ID: t.ID, PVESeconds: pveSec})
}

func (s *Sim) startSpan(w WorkSpan) int {
	s.timeMu.Lock()
	defer s.timeMu.Unlock()
	if w.Start.IsZero() {
		w.Start = time.Now()
	}
	s.timeline = append(s.timeline, w)
	return len(s.timeline) - 1
}

func (s *Sim) endSpan(i int) {
	s.timeMu.Lock()
	defer s.timeMu.Unlock()
	if i < len(s.timeline) && s.timeline[i].End.IsZero() {
		s.timeline[i].End = time.Now()
	}
}

// runProgramTime lets a timed node program (timing_model.go) take its time
// before it runs, with nothing locked, unless ctx ends first.
func (s *Sim) runProgramTime(ctx context.Context, node string, argv []string) bool {
	sec := programSeconds(argv)
	if s.opts.TimeScale <= 0 || sec == 0 {
		return true
	}
	kind := "ssh:" + argv[0]
	if len(argv) > 1 {
		kind += " " + argv[1]
	}
	sec *= jitter(node + kind + time.Now().String())
	i := s.startSpan(WorkSpan{Node: node, Kind: kind, PVESeconds: sec})
	defer s.endSpan(i)
	t := time.NewTimer(time.Duration(sec * s.opts.TimeScale * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.closing:
		return false
	}
}

// haDelay is how long the CRM and LRMs take to act on a request: what
// SetHACRMDelay set, else one round with TimeScale, else nothing.
func (s *Sim) haDelay(h *haConfig) time.Duration {
	if h.crmDelay == 0 && s.opts.TimeScale > 0 {
		return time.Duration(haRoundSeconds * s.opts.TimeScale * float64(time.Second))
	}
	return h.crmDelay
}

// recordHASpan enters an HA action the CRM finished into the timeline.
func (s *Sim) recordHASpan(node, sid string, since time.Time, d time.Duration) {
	sec := haRoundSeconds
	if s.opts.TimeScale > 0 {
		sec = d.Seconds() / s.opts.TimeScale
	} else if d == 0 {
		sec = 0
	}
	s.startSpan(WorkSpan{Node: node, Kind: "ha", ID: sid, Start: since, End: since.Add(d), PVESeconds: sec})
}

// Timeline returns the work spans so far, ordered by start.
func (s *Sim) Timeline() []WorkSpan {
	s.timeMu.Lock()
	out := append([]WorkSpan(nil), s.timeline...)
	s.timeMu.Unlock()
	s.mu.Lock()
	out = append(out, s.osdRestartSpansLocked()...)
	s.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// ResetTimeline forgets the spans so far (a benchmark's next phase) and
// the OSD restarts recorded.
func (s *Sim) ResetTimeline() {
	s.timeMu.Lock()
	s.timeline = nil
	s.timeMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.st.Domains {
		if d.Ceph != nil && d.Ceph.CLI != nil {
			d.Ceph.CLI.Restarts = nil
		}
	}
}

// TimeScale is Options.TimeScale.
func (s *Sim) TimeScale() float64 { return s.opts.TimeScale }

// osdRestartSpansLocked are the OSD restarts as spans: down, boot and
// recovery, in real time by Ceph's clock rate.
func (s *Sim) osdRestartSpansLocked() []WorkSpan {
	scale := s.opts.CephTimeScale
	if scale <= 0 {
		scale = 60
	}
	var out []WorkSpan
	for _, d := range s.st.Domains {
		if d.Ceph == nil || d.Ceph.CLI == nil {
			continue
		}
		for _, r := range d.Ceph.CLI.Restarts {
			w := WorkSpan{Node: r.Host, Kind: "osd-restart", ID: "osd." + strconv.Itoa(r.OSD), Start: r.Real}
			if r.booted {
				w.PVESeconds = r.UpAt - r.DownAt + r.Recovery
				w.End = r.Real.Add(time.Duration(w.PVESeconds / scale * float64(time.Second)))
			}
			out = append(out, w)
		}
	}
	return out
}
