package pvesim

import (
	"math"
	"testing"
)

// With TimeScale a task's PVE seconds come from the timing model (disks
// priced by their storage) and the timeline holds each task once it ends.
func TestTimeScaleTimesTasksByPVEsDurations(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, TimeScale: 0.001})
	c := newClient(t, info, info.Nodes[0].Endpoint)
	createRefVM(t, c, "scsi1", "local-lvm:4")
	st := c.waitTask("z2g4a", c.ok("POST", vm100+"/status/start", nil).data().(string))
	if st["exitstatus"] != "OK" {
		t.Fatalf("qmstart: %v", st["exitstatus"])
	}
	spans := map[string]WorkSpan{}
	for _, w := range s.Timeline() {
		spans[w.Kind] = w
	}
	create, start := spans["qmcreate"], spans["qmstart"]
	// qmcreate: 1 s plus two LVM-thin disks of 0.5 s, within the jitter.
	if want := 2.0; math.Abs(create.PVESeconds-want) > 0.15*want+1e-9 || create.ID != "100" || create.Node != "z2g4a" {
		t.Errorf("qmcreate span = %+v, want about %.1f PVE seconds for VM 100 on z2g4a", create, want)
	}
	if want := taskPVESeconds["qmstart"]; math.Abs(start.PVESeconds-want) > 0.15*want+1e-9 {
		t.Errorf("qmstart span = %+v, want about %.1f PVE seconds", start, want)
	}
	if create.End.IsZero() || start.End.IsZero() || create.End.Before(create.Start) {
		t.Errorf("ended tasks without an end: %+v %+v", create, start)
	}
	s.ResetTimeline()
	if n := len(s.Timeline()); n != 0 {
		t.Errorf("after ResetTimeline: %d spans", n)
	}
}

// Without TimeScale the tasks keep TaskDuration and the model only labels
// them, so tests are not slowed by PVE's durations.
func TestTaskDurationWithoutTimeScale(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, TaskDuration: -1})
	c := newClient(t, info, info.Nodes[0].Endpoint)
	createRefVM(t, c)
	tl := s.Timeline()
	if len(tl) != 1 || tl[0].Kind != "qmcreate" || tl[0].PVESeconds < 1.0*0.85 {
		t.Fatalf("timeline = %+v, want one qmcreate with its PVE seconds", tl)
	}
}

func TestJitterIsDeterministicAndBounded(t *testing.T) {
	lo, hi := 2.0, 0.0
	for _, k := range []string{"a", "b", "UPID:z2g4a:1", "UPID:z2g4b:2", "x"} {
		j := jitter(k)
		if j != jitter(k) {
			t.Fatalf("jitter(%q) differs between calls", k)
		}
		lo, hi = math.Min(lo, j), math.Max(hi, j)
	}
	if lo < 0.85 || hi > 1.15 || lo == hi {
		t.Errorf("jitter range [%v, %v], want spread within [0.85, 1.15]", lo, hi)
	}
}
