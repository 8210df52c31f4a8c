package pve

import (
	"sync"
	"time"
)

// TaskTimes records how long the tasks of each type (the UPID's type field:
// qmcreate, srvreload, cephcreateosd, ...) took in this provider run, so
// that WaitTask reads a task's status about once: when a task of its type
// is due to end. One value is shared by all clients of a provider
// (Config.TaskTimes); it is safe for concurrent use.
type TaskTimes struct {
	mu sync.Mutex
	d  map[string]taskTime
}

type taskTime struct {
	expected time.Duration
	// early counts the tasks in a row that were seen stopped at their
	// first read (see Record).
	early int
}

// NewTaskTimes returns an empty record.
func NewTaskTimes() *TaskTimes { return &TaskTimes{d: map[string]taskTime{}} }

// Expected is how long a task of typ is expected to take, 0 when no task
// of that type ended successfully yet.
func (t *TaskTimes) Expected(typ string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.d[typ].expected
}

// Record adds a task of typ that a status read sent seen after the wait
// began saw stopped; firstRead says it was the wait's first read. After a
// read that saw it running, seen is at most one short step after its end,
// and counts as its length. A task seen stopped at its first read may
// have ended well before: it counts as 90 % of seen, the next one in a row
// as 80 %, down to 50 %, so the expectation of a type whose tasks got
// shorter comes down within a few tasks, until a first read comes early
// and the short steps find the end again. The expectation is the mean of
// that and the previous one: one outlier moves it only halfway.
func (t *TaskTimes) Record(typ string, seen time.Duration, firstRead bool) {
	if seen <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	tt, ok := t.d[typ]
	took := seen
	if firstRead {
		tt.early = min(tt.early+1, 5)
		took = seen * time.Duration(10-tt.early) / 10
	} else {
		tt.early = 0
	}
	if ok {
		took = (tt.expected + took) / 2
	}
	tt.expected = took
	t.d[typ] = tt
}

// taskPace bounds the waits between a task's status reads.
type taskPace struct {
	// min is the shortest wait while a task's length is unknown (and the
	// first one: a task seldom ends sooner), max the longest wait.
	min, max time.Duration
}

const (
	defaultTaskPollInterval = 200 * time.Millisecond
	maxTaskPollInterval     = 30 * time.Second
)

// next is how long to wait before the next status read of a task that has
// run for elapsed (since the wait began) and is still running, when tasks
// of its type took expected (0: unknown).
//
// Known: the first read comes when a task of its type is expected to end,
// then short steps of expected/20: a task as long as the last ones is seen
// done with one read, one a little longer with two or three, at most 5 %
// late. A task that overruns its expectation is read at a quarter of its
// overrun once that is longer than the step, so a task ten times as long
// as expected costs a few more reads, not two hundred. (A first read at
// 0.9 × expected would find a task as long as the last ones running and
// cost three reads a task; TaskTimes.Record keeps the expectation from
// drifting up instead.)
//
// Unknown: a quarter of the time elapsed (min at first), so a task is
// seen done at most 25 % after its end, with a number of reads that grows
// with the logarithm of its length.
//
// Every wait is within [min/4, max] (known steps may be shorter than min:
// they aim at an end that is near).
func (p taskPace) next(expected, elapsed time.Duration) time.Duration {
	if expected <= 0 {
		return clampDuration(elapsed/4, p.min, p.max)
	}
	if elapsed < expected {
		return clampDuration(expected-elapsed, p.min/4, p.max)
	}
	step := expected / 20
	if over := (elapsed - expected) / 4; over > step {
		step = over
	}
	return clampDuration(step, p.min/4, p.max)
}

func clampDuration(d, lo, hi time.Duration) time.Duration {
	if d < lo {
		d = lo
	}
	if d > hi {
		d = hi
	}
	return d
}
