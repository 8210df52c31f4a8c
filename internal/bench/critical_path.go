package bench

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// The critical path of an apply is what PVE itself makes it take: the
// work of PVE's tasks (pvesim's timeline, in PVE seconds), laid out over
// Terraform's dependency graph with Terraform's parallelism and PVE's own
// serialisations. Each span of work is first attributed to the resource
// instance that caused it; an instance's weight is the union of its spans.

// workHints are the resource types (substrings) whose instances start
// each kind of work.
var workHints = map[string][]string{
	"qmcreate": {"_vm"}, "qmconfig": {"_vm"}, "qmstart": {"_vm"}, "qmstop": {"_vm"}, "qmshutdown": {"_vm"},
	"qmreboot": {"_vm"}, "qmdestroy": {"_vm"}, "resize": {"_vm"}, "qmmove": {"_vm"}, "qmigrate": {"_vm", "_ha"},
	"hastart": {"_ha", "_vm"}, "hastop": {"_ha", "_vm"}, "ha": {"_ha"},
	"srvreload": {"network"}, "ssh:ifreload": {"network"},
	"clustercreate": {"cluster"}, "clusterjoin": {"cluster_node", "cluster"},
	"cephcreatemon": {"ceph_mon"}, "cephcreatemgr": {"ceph_mgr"}, "cephcreateosd": {"ceph_osd"},
	"cephdestroyosd": {"ceph_osd"}, "cephcreatepool": {"ceph_pool"}, "cephsetpool": {"ceph_pool"},
	"cephsetflags": {"ceph_flags"}, "osd-restart": {"ceph_config"}, "srvrestart": {"ceph_config"},
	"ssh:pveceph install": {"ceph_install", "ceph_package"}, "ssh:tuned-adm profile": {"tuned"},
	"ssh:apt-get install": {"package", "apt"}, "ssh:update-ca-certificates": {"ca", "certificate"},
}

// serialGroup names the work PVE does one at a time: monitor creation
// and cluster joins take cluster-wide locks, disk work on a node takes
// that node's disk lock, and a guest's workers hold its config lock.
func serialGroup(w pvesim.WorkSpan) string {
	switch w.Kind {
	case "cephcreatemon", "cephdestroymon":
		return "mon"
	case "clusterjoin", "clustercreate":
		return "join"
	case "cephcreateosd", "cephdestroyosd", "wipedisk":
		return "disk@" + w.Node
	case "qmcreate", "qmconfig", "resize", "qmmove", "qmigrate", "qmstart", "qmstop", "qmdestroy":
		return "vm@" + w.ID
	}
	return ""
}

// Attribution is the work of each instance, in PVE seconds.
type Attribution struct {
	Work  map[string]float64
	Group map[string]string
	// Spans counts the spans attributed to each instance.
	Spans map[string]int
	// Log says which span went where, for BENCH_VERBOSE.
	Log []string
	// Unattributed are spans no instance's interval holds (with a node,
	// kind and start, for the report).
	Unattributed []pvesim.WorkSpan
}

// Attribute gives each ended span to the instance that most likely
// started it: one whose apply interval holds the span's start, preferring
// the type the work hints at, the same node and the same ID, then the
// shortest interval. scale is real seconds per PVE second.
func Attribute(spans []pvesim.WorkSpan, insts []Instance, times map[string]Interval, scale float64) Attribution {
	a := Attribution{Work: map[string]float64{}, Group: map[string]string{}, Spans: map[string]int{}}
	byInst := map[string][][2]time.Time{}
	const slack = 200 * time.Millisecond
	for _, w := range spans {
		if w.End.IsZero() {
			continue
		}
		best, bestScore, bestLen := "", -1, time.Duration(0)
		for _, in := range insts {
			iv, ok := times[in.Addr]
			if !ok || iv.End.IsZero() || w.Start.Before(iv.Start.Add(-slack)) || w.Start.After(iv.End) {
				continue
			}
			score := 0
			for _, h := range workHints[w.Kind] {
				if strings.Contains(in.Type, h) {
					score += 4
					break
				}
			}
			if in.Node != "" && in.Node == w.Node {
				score += 2
			}
			id := strings.TrimPrefix(w.ID, "osd.")
			for _, x := range in.IDs {
				if id != "" && (x == id || strings.HasSuffix(x, "/"+id) || strings.HasSuffix(x, ":"+id)) {
					score += 2
					break
				}
			}
			l := iv.End.Sub(iv.Start)
			if score > bestScore || score == bestScore && l < bestLen {
				best, bestScore, bestLen = in.Addr, score, l
			}
		}
		if best == "" {
			a.Unattributed = append(a.Unattributed, w)
			continue
		}
		a.Log = append(a.Log, fmt.Sprintf("%s %s %s %.1f PVE s [%s +%.1fs] -> %s [%s +%.1fs]", w.Node, w.Kind, w.ID, w.PVESeconds,
			w.Start.Format("15:04:05.000"), w.End.Sub(w.Start).Seconds(), best, times[best].Start.Format("15:04:05.000"), times[best].End.Sub(times[best].Start).Seconds()))
		from := w.End.Add(-time.Duration(w.PVESeconds * scale * float64(time.Second)))
		byInst[best] = append(byInst[best], [2]time.Time{from, w.End})
		a.Spans[best]++
		if g := serialGroup(w); g != "" && a.Group[best] == "" {
			a.Group[best] = g
		}
	}
	for addr, ivs := range byInst {
		a.Work[addr] = unionSeconds(ivs) / scale
	}
	return a
}

// unionSeconds is the length of the union of the intervals, in seconds.
func unionSeconds(ivs [][2]time.Time) float64 {
	sort.Slice(ivs, func(i, j int) bool { return ivs[i][0].Before(ivs[j][0]) })
	var total time.Duration
	var cur [2]time.Time
	for i, iv := range ivs {
		switch {
		case i == 0:
			cur = iv
		case iv[0].After(cur[1]):
			total += cur[1].Sub(cur[0])
			cur = iv
		case iv[1].After(cur[1]):
			cur[1] = iv[1]
		}
	}
	if len(ivs) > 0 {
		total += cur[1].Sub(cur[0])
	}
	return total.Seconds()
}

// CriticalPath is the makespan, in PVE seconds, of the instances' work
// scheduled over their dependencies with at most parallelism at once
// (Terraform's -parallelism, 10 by default) and one instance per serial
// group at a time: list scheduling, longest remaining path first.
func CriticalPath(insts []Instance, a Attribution, parallelism int) float64 {
	idx := map[string]int{}
	byRes := map[string][]int{}
	for i, in := range insts {
		idx[in.Addr] = i
		byRes[resourceOf(in.Addr)] = append(byRes[resourceOf(in.Addr)], i)
	}
	deps := make([][]int, len(insts))
	succ := make([][]int, len(insts))
	for i, in := range insts {
		for _, d := range in.DependsOn {
			for _, j := range byRes[d] {
				if j != i {
					deps[i] = append(deps[i], j)
					succ[j] = append(succ[j], i)
				}
			}
		}
	}
	level := make([]float64, len(insts))
	seen := make([]int, len(insts)) // 0 new, 1 visiting, 2 done
	var bottom func(i int) float64
	bottom = func(i int) float64 {
		if seen[i] == 2 || seen[i] == 1 {
			return level[i]
		}
		seen[i] = 1
		m := 0.0
		for _, s := range succ[i] {
			m = max(m, bottom(s))
		}
		level[i] = a.Work[insts[i].Addr] + m
		seen[i] = 2
		return level[i]
	}
	for i := range insts {
		bottom(i)
	}
	type run struct {
		i   int
		end float64
	}
	started := make([]bool, len(insts))
	finished := make([]bool, len(insts))
	busy := map[string]bool{}
	var running []run
	now, left := 0.0, len(insts)
	for left > 0 {
		var ready []int
		for i := range insts {
			if started[i] || busy[a.Group[insts[i].Addr]] && a.Group[insts[i].Addr] != "" {
				continue
			}
			ok := true
			for _, d := range deps[i] {
				if !finished[d] {
					ok = false
					break
				}
			}
			if ok {
				ready = append(ready, i)
			}
		}
		sort.SliceStable(ready, func(x, y int) bool { return level[ready[x]] > level[ready[y]] })
		progressed := false
		for _, i := range ready {
			if len(running) >= parallelism {
				break
			}
			g := a.Group[insts[i].Addr]
			if g != "" && busy[g] {
				continue
			}
			started[i] = true
			progressed = true
			w := a.Work[insts[i].Addr]
			if w == 0 {
				finished[i] = true
				left--
				continue
			}
			if g != "" {
				busy[g] = true
			}
			running = append(running, run{i, now + w})
		}
		if progressed && len(running) < parallelism {
			continue // zero-work instances may have readied others
		}
		if len(running) == 0 {
			break // a cycle: cannot happen in a Terraform graph
		}
		sort.Slice(running, func(x, y int) bool { return running[x].end < running[y].end })
		now = running[0].end
		for len(running) > 0 && running[0].end <= now {
			i := running[0].i
			running = running[1:]
			finished[i] = true
			left--
			if g := a.Group[insts[i].Addr]; g != "" {
				busy[g] = false
			}
		}
	}
	return now
}
