package pve

import (
	"testing"
	"time"
)

var testPace = taskPace{min: defaultTaskPollInterval, max: maxTaskPollInterval}

// follow runs the pace against a task that ends at length (since the wait
// began) as waitTask would, on a simulated clock: it returns how many
// status reads saw the task, whether the first one already saw it
// stopped, and how long after its end the last one came.
func follow(t *testing.T, p taskPace, expected, length time.Duration) (reads int, late time.Duration) {
	t.Helper()
	var elapsed time.Duration
	for reads < 10000 {
		wait := p.next(expected, elapsed)
		if wait < p.min/4 || wait > p.max {
			t.Fatalf("next(%v, %v) = %v outside [%v, %v]", expected, elapsed, wait, p.min/4, p.max)
		}
		elapsed += wait
		reads++
		if elapsed >= length {
			return reads, elapsed - length
		}
	}
	t.Fatalf("a task of %v expected to take %v is still read after %d reads", length, expected, reads)
	return
}

// A task of a type not timed yet is read at a quarter of its age: seen
// done at most 25 % (or the shortest wait) after its end, with reads
// growing with the logarithm of its length up to the longest wait.
func TestTaskPaceUnknown(t *testing.T) {
	for _, c := range []struct {
		length   time.Duration
		maxReads int
	}{
		{150 * time.Millisecond, 1},
		{time.Second, 6},
		{7 * time.Second, 14},
		{time.Minute, 30},
		{10 * time.Minute, 140}, // 2 s steps (the old cap) took ~300
	} {
		reads, late := follow(t, testPace, 0, c.length)
		if reads > c.maxReads {
			t.Errorf("unknown task of %v: %d reads, want at most %d", c.length, reads, c.maxReads)
		}
		if limit := max(testPace.min, min(c.length/4, testPace.max)); late > limit {
			t.Errorf("unknown task of %v: seen %v after its end, want at most %v", c.length, late, limit)
		}
	}
}

// A task of a type timed before is read first when it is due to end, then
// in steps of 1/20 of that: one read when it is no longer than the last
// ones, a few when a little longer, and a bounded number when it overruns
// by far.
func TestTaskPaceKnown(t *testing.T) {
	for _, expected := range []time.Duration{300 * time.Millisecond, 2 * time.Second, 25 * time.Second} {
		for _, c := range []struct {
			factor   float64
			maxReads int
			maxLate  float64 // of the length
		}{
			{0.5, 1, 1},      // a shorter one is seen at the expected end
			{0.97, 1, 0.05},  //
			{1.0, 1, 0.05},   // as long as expected: one read
			{1.04, 2, 0.05},  // a little longer: one step more
			{1.3, 7, 0.1},    // overruns: steps, then a quarter of the overrun
			{10, 30, 0.25},   // ten times as long: still bounded
			{100, 120, 0.25}, // the longest wait caps the steps
		} {
			length := time.Duration(float64(expected) * c.factor)
			reads, late := follow(t, testPace, expected, length)
			if reads > c.maxReads {
				t.Errorf("expected %v, task of %v: %d reads, want at most %d", expected, length, reads, c.maxReads)
			}
			limit := max(time.Duration(c.maxLate*float64(length)), testPace.min/4)
			if c.factor < 1 {
				limit = expected - length + testPace.min/4
			}
			if late > limit {
				t.Errorf("expected %v, task of %v: seen %v after its end, want at most %v", expected, length, late, limit)
			}
		}
	}
}

// Tasks of one type that take the same time are soon read once or twice
// each: the first (not timed yet) at a quarter of its age, then when the
// last ones ended. When they get shorter the expectation follows them
// down within ten tasks (first reads that see them stopped count for
// ever less); when they get longer, up.
func TestTaskPaceLearns(t *testing.T) {
	for _, lengths := range [][]time.Duration{
		repeat(20, 190*time.Millisecond), // pvesim's task duration in make lab
		repeat(20, 1300*time.Millisecond),
		repeat(20, 25*time.Second),
		append(repeat(5, 8*time.Second), repeat(15, 2*time.Second)...), // got shorter
		append(repeat(5, 2*time.Second), repeat(15, 8*time.Second)...), // got longer
	} {
		const settledFrom = 15 // ten tasks after a change
		times := NewTaskTimes()
		var reads int
		var late time.Duration
		length := lengths[len(lengths)-1]
		for i, l := range lengths {
			n, after := follow(t, testPace, times.Expected("qmcreate"), l)
			times.Record("qmcreate", l+after, n == 1)
			if i < settledFrom {
				continue
			}
			reads += n
			late += after
			if limit := max(length/10, testPace.min/4); after > limit {
				t.Errorf("lengths %v..%v: task %d seen %v after its end, want at most %v once settled", lengths[0], length, i, after, limit)
			}
		}
		settled := len(lengths) - settledFrom
		if avg := float64(reads) / float64(settled); avg > 2 {
			t.Errorf("lengths %v..%v: %.1f reads a task once settled, want at most 2", lengths[0], length, avg)
		}
		if avg, limit := late/time.Duration(settled), max(length*6/100, testPace.min/8); avg > limit {
			t.Errorf("lengths %v..%v: seen %v after the end on average once settled, want at most %v", lengths[0], length, avg, limit)
		}
	}
}

func repeat(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

func TestTaskTimesRecord(t *testing.T) {
	tt := NewTaskTimes()
	if tt.Expected("srvreload") != 0 {
		t.Fatal("a type never recorded has an expectation")
	}
	tt.Record("srvreload", 2*time.Second, false)
	tt.Record("srvreload", 0, false) // ignored
	if got := tt.Expected("srvreload"); got != 2*time.Second {
		t.Fatalf("Expected = %v after one task of 2s", got)
	}
	tt.Record("srvreload", 4*time.Second, false)
	if got := tt.Expected("srvreload"); got != 3*time.Second {
		t.Fatalf("Expected = %v after 2s and 4s, want the mean 3s", got)
	}
	// Seen stopped at the first read: 90 %, then 80 % of the time seen.
	tt.Record("srvreload", 3*time.Second, true)
	if got := tt.Expected("srvreload"); got != 2850*time.Millisecond {
		t.Fatalf("Expected = %v after a first-read stop at 3s, want (3s + 2.7s)/2", got)
	}
	tt.Record("srvreload", 2850*time.Millisecond, true)
	if got := tt.Expected("srvreload"); got != 2565*time.Millisecond {
		t.Fatalf("Expected = %v after a second first-read stop at 2.85s, want (2.85s + 2.28s)/2", got)
	}
	tt.Record("srvreload", 2600*time.Millisecond, false) // seen running first: the streak ends
	tt.Record("srvreload", 2600*time.Millisecond, true)
	if got := tt.Expected("srvreload"); got != (2582500*time.Microsecond+2340*time.Millisecond)/2 {
		t.Fatalf("Expected = %v: a streak of first-read stops did not start again at 90 %%", got)
	}
	if tt.Expected("qmstart") != 0 {
		t.Fatal("types share an expectation")
	}
}
