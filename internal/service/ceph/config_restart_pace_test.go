package ceph

import (
	"testing"
	"time"
)

func TestRestartPacerChecksByWhatTheLastHostTook(t *testing.T) {
	defer func(f, m time.Duration) { restartPollFirst, restartPollMax = f, m }(restartPollFirst, restartPollMax)
	restartPollFirst, restartPollMax = 100*time.Millisecond, 5*time.Second
	var p restartPacer
	// Nothing known: an eighth of the time waited, within the bounds.
	for _, c := range []struct{ elapsed, want time.Duration }{
		{0, 100 * time.Millisecond}, {2 * time.Second, 250 * time.Millisecond}, {time.Minute, 5 * time.Second},
	} {
		if got := p.next(waitOSDsUp, c.elapsed); got != c.want {
			t.Errorf("unknown wait, %v in: next check after %v, want %v", c.elapsed, got, c.want)
		}
	}
	p.took(waitOSDsUp, 10*time.Second)
	p.took(waitPGsClean, 50*time.Millisecond) // ended at once: teaches nothing
	if got := p.next(waitOSDsUp, 200*time.Millisecond); got != 8800*time.Millisecond {
		t.Errorf("known 10s wait, 0.2s in: next check after %v, want 8.8s (at 0.9 of it)", got)
	}
	if got := p.next(waitOSDsUp, 9*time.Second); got != 500*time.Millisecond {
		t.Errorf("known 10s wait, 9s in: next check after %v, want 0.5s (a twentieth)", got)
	}
	if got := p.next(waitPGsClean, 0); got != 100*time.Millisecond {
		t.Errorf("a wait that ended at once: next check after %v, want the unknown pace", got)
	}
}
