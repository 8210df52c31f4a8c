package ceph

import "time"

// waitKind names one kind of wait of a rolling restart; waits of one kind
// take about as long on every host (the same daemons, disks and data).
type waitKind string

const (
	waitOSDsOkToStop waitKind = "osd-ok-to-stop"
	waitOSDsUp       waitKind = "osds-up"
	waitPGsClean     waitKind = "pgs-clean"
	waitMonOkToStop  waitKind = "mon-ok-to-stop"
)

// restartPacer times the checks of a wait by what the same kind of wait
// took before in this restart. Before anything is known a check follows
// after an eighth of the time waited so far (between restartPollFirst and
// restartPollMax): at most an eighth late, a dozen checks or so. Once one
// host's OSDs took d to come up, the next host's are checked first at
// 0.9 d and then every d/20: they are seen up within a twentieth of the
// wait instead of up to half of it later, over a few checks more.
type restartPacer struct {
	seen map[waitKind]time.Duration
}

// next is how long to wait before the next check, elapsed into a wait.
func (p *restartPacer) next(kind waitKind, elapsed time.Duration) time.Duration {
	if d := p.seen[kind]; d > 0 {
		if early := d*9/10 - elapsed; early > 0 {
			return early
		}
		return clampPoll(d / 20)
	}
	return clampPoll(elapsed / 8)
}

// took records that a wait of kind ended after d; a wait that ended at
// its first check (nothing to wait for) teaches nothing.
func (p *restartPacer) took(kind waitKind, d time.Duration) {
	if d < restartPollFirst {
		return
	}
	if p.seen == nil {
		p.seen = map[waitKind]time.Duration{}
	}
	p.seen[kind] = d
}

func clampPoll(d time.Duration) time.Duration {
	return min(max(d, restartPollFirst), restartPollMax)
}
