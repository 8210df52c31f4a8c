package pvesim

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Ceph's systemd units on a node are views of the Ceph model:
// ceph-osd@N, ceph-mon@ID and ceph-mgr@ID for the daemons on that node,
// and the targets ceph-osd.target, ceph-mon.target, ceph-mgr.target and
// ceph.target, which restart every daemon of their kind (the daemon units
// are PartOf them).

var cephUnitRE = regexp.MustCompile(`^ceph-(osd|mon|mgr)@([A-Za-z0-9][A-Za-z0-9-]*)\.service$`)

func cephTargetKind(unit string) (string, bool) {
	switch unit {
	case "ceph.target":
		return "", true
	case "ceph-osd.target":
		return "osd", true
	case "ceph-mon.target":
		return "mon", true
	case "ceph-mgr.target":
		return "mgr", true
	}
	return "", false
}

// cephUnits makes ceph-osd@N, ceph-mon@, ceph-mgr@ and the Ceph targets
// views of the Ceph state.
func cephUnits() *unitHook {
	return &unitHook{
		match: func(u string) bool {
			_, target := cephTargetKind(u)
			return target || cephUnitRE.MatchString(u)
		},
		get: func(x *sshExec, unit string) *simUnit {
			cs := x.domain().Ceph
			if _, ok := cephTargetKind(unit); ok {
				// Installed with Ceph (pveceph install), which the
				// simulator counts as done on every node.
				return &simUnit{Enabled: "enabled", Active: "active"}
			}
			if cs == nil {
				return nil
			}
			x.s.cephTickLocked(cs)
			name := cephDaemonName(unit)
			if host, ok := cs.daemonHost(name); !ok || host != x.node {
				return nil
			}
			d := cs.daemon(name)
			if r := x.s.realCeph; r != nil {
				active, since := r.unit(name)
				return &simUnit{Enabled: d.Enabled, Active: active, Since: since.UnixMicro()}
			}
			return &simUnit{Enabled: d.Enabled, Active: x.s.unitState(cs, name), Since: d.Since.UnixMicro()}
		},
		set: func(x *sshExec, unit string, u *simUnit, verb string) {
			cs := x.domain().Ceph
			if cs == nil {
				return
			}
			var names []string
			if kind, ok := cephTargetKind(unit); ok {
				names = cs.nodeDaemons(x.node, kind)
			} else {
				names = []string{cephDaemonName(unit)}
			}
			switch verb {
			case "enable", "disable":
				for _, n := range names {
					cs.daemon(n).Enabled = u.Enabled
				}
				if u.Active == "active" || u.Active == "inactive" {
					// enable/disable --now
					verb = map[string]string{"active": "start", "inactive": "stop"}[u.Active]
				} else {
					return
				}
				if _, target := cephTargetKind(unit); target {
					return
				}
			}
			failed := false
			for _, n := range names {
				if r := x.s.realCeph; r != nil {
					// The real daemon, not the model's: the model's clock
					// would otherwise decide when the OSD is back.
					err, ran := x.realJobs[n]
					if !ran {
						err = r.daemon(verb, n)
					}
					if err != nil {
						x.errf("%v\n", err)
						failed = true
					}
					_, cs.daemon(n).Since = r.unit(n)
					continue
				}
				if !x.s.daemonOp(cs, n, verb) {
					failed = true
				}
			}
			cs.settle()
			if failed && !strings.HasSuffix(unit, ".target") {
				u.Active = "failed"
			}
		},
	}
}

// realCephJobs runs on the real lab, all at once, what a systemctl
// start, stop or restart of several Ceph units asks of their daemons:
// systemd runs the jobs of one call in parallel. The unit hook then takes
// each daemon's result instead of running it again.
func (x *sshExec) realCephJobs(verb string, units []string) {
	r := x.s.realCeph
	cs := x.domain().Ceph
	if r == nil || cs == nil {
		return
	}
	var names []string
	for _, u := range units {
		if kind, ok := cephTargetKind(u); ok {
			names = append(names, cs.nodeDaemons(x.node, kind)...)
		} else if cephUnitRE.MatchString(u) {
			names = append(names, cephDaemonName(u))
		}
	}
	if len(names) < 2 {
		return
	}
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() { errs[i] = r.daemon(verb, n) })
	}
	wg.Wait()
	x.realJobs = map[string]error{}
	for i, n := range names {
		x.realJobs[n] = errs[i]
	}
}

// cephDaemonName is the daemon a unit runs: ceph-osd@3.service is osd.3.
func cephDaemonName(unit string) string {
	m := cephUnitRE.FindStringSubmatch(unit)
	if m == nil {
		return ""
	}
	return m[1] + "." + m[2]
}

// unitTimestamp formats a unit's ActiveEnterTimestamp as systemctl show
// does with --timestamp=format; "" when the unit never became active.
func (x *sshExec) unitTimestamp(un *simUnit, format string) string {
	if un == nil {
		return ""
	}
	var t time.Time
	switch {
	case un.Since > 0:
		t = time.UnixMicro(un.Since)
	case un.Active == "active" || un.Active == "failed":
		t = time.Unix(x.s.st.Nodes[x.node].BootTime, 0)
	default:
		return ""
	}
	t = t.UTC()
	switch format {
	case "unix":
		return fmt.Sprintf("@%d", t.Unix())
	case "us", "µs", "us+utc", "µs+utc":
		return t.Format("Mon 2006-01-02 15:04:05.000000 MST")
	}
	return t.Format("Mon 2006-01-02 15:04:05 MST")
}

// osdNames sorts daemon names with OSDs by number.
func sortDaemons(names []string) {
	sort.Slice(names, func(i, j int) bool {
		ki, ii, _ := strings.Cut(names[i], ".")
		kj, ij, _ := strings.Cut(names[j], ".")
		if ki != kj {
			return ki < kj
		}
		ni, ei := strconv.Atoi(ii)
		nj, ej := strconv.Atoi(ij)
		if ei == nil && ej == nil {
			return ni < nj
		}
		return ii < ij
	})
}
