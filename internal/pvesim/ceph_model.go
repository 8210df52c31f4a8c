package pvesim

import (
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The Ceph health model. It is deliberately small but keeps the properties
// the provider's safety depends on:
//
//   - every pool has pg_num PGs; CRUSH (here rendezvous hashing, which like
//     straw2 moves little data on change) maps a PG onto `size` OSDs in
//     distinct hosts, choosing among OSDs that are "in";
//   - a PG's copies live on OSDs; the acting set is the up OSDs holding a
//     complete copy (pg_temp keeps an out-but-up OSD acting until the new
//     targets are backfilled, so `out` with too few hosts leaves the PG
//     active+clean+remapped for good, as the real lab showed);
//   - a PG is active with at least min_size complete copies up, degraded and
//     undersized below size, remapped when its acting set differs from its
//     up set; missing targets are backfilled over simulated time at a rate
//     osd_max_backfills controls, unless nobackfill/norecover/norebalance;
//   - a history records every PG that dropped below min_size, every PG that
//     lost its last copy and every OSD destroyed while it was not
//     safe-to-destroy.
//
// All functions here are pure over cephState and run under Sim.mu.

const (
	cephDownOutInterval = 600.0     // mon_osd_down_out_interval, seconds
	cephBackfillRate    = 100 << 20 // bytes per second per backfill slot of a target OSD
	cephObjectSize      = 4 << 20   // RBD object size, for object counts
	cephDefaultStored   = 1 << 30   // data a new pool holds: the reference lab's small data set
)

type cephState struct {
	FSID string `json:"fsid"`
	// Conf is /etc/pve/ceph.conf: section -> key -> value.
	Conf map[string]map[string]string `json:"conf"`
	// ConfigDB is the monitors' configuration database (ceph config set).
	ConfigDB   map[string]map[string]string `json:"config_db,omitempty"`
	Mons       map[string]*cephMon          `json:"mons"`
	Mgrs       map[string]*cephMgr          `json:"mgrs"`
	OSDs       map[int]*cephOSD             `json:"osds"`
	Pools      []*cephPool                  `json:"pools"`
	Flags      map[string]bool              `json:"flags"`
	NextPoolID int                          `json:"next_pool_id"`
	Epoch      int                          `json:"epoch"`
	// Clock is simulated seconds since init.
	Clock float64 `json:"clock"`
	// LastAutoscale is when the pg_autoscaler last ran (Clock).
	LastAutoscale float64 `json:"last_autoscale,omitempty"`
	// AutoscaleInCreate makes a pg_autoscaler pass fall between
	// create_pool's `osd pool create` (mode on, the default) and its
	// set_pool, as it can on a real cluster (test control).
	AutoscaleInCreate bool `json:"autoscale_in_create,omitempty"`
	// History (see the package comment).
	MinSizeViolations []string `json:"min_size_violations,omitempty"`
	DataLoss          []string `json:"data_loss,omitempty"`
	UnsafeDestroys    []string `json:"unsafe_destroys,omitempty"`
	// RecoveredBytes counts bytes backfilled since init (rates in status).
	RecoveredBytes float64   `json:"recovered_bytes"`
	lastRate       float64   // bytes per simulated second in the last step
	lastReal       time.Time // real time of the last clock tick

	// OrphanMons were created while another monitor creation raced them:
	// they bootstrapped a monmap of their own and are not part of Mons'
	// quorum (see cephCreateMon).
	OrphanMons map[string]*cephMon `json:"orphan_mons,omitempty"`
	// CLI is what only the nodes' command line reaches (ssh_ceph_state.go).
	CLI *cephCLIState `json:"cli,omitempty"`
}

type cephMon struct {
	ID      string `json:"id"`
	Host    string `json:"host"`
	Addr    string `json:"addr"`
	Stopped bool   `json:"stopped,omitempty"`
	Rank    int    `json:"rank"`
}

type cephMgr struct {
	ID      string `json:"id"`
	Host    string `json:"host"`
	Stopped bool   `json:"stopped,omitempty"`
}

type cephOSD struct {
	ID        int     `json:"id"`
	Host      string  `json:"host"`
	Dev       string  `json:"dev"`
	DBDev     string  `json:"db_dev,omitempty"`
	WALDev    string  `json:"wal_dev,omitempty"`
	Class     string  `json:"class"`
	Encrypted bool    `json:"encrypted,omitempty"`
	Size      int64   `json:"size"`
	DBSize    int64   `json:"db_size,omitempty"`  // bytes of the block.db LV on DBDev
	WALSize   int64   `json:"wal_size,omitempty"` // bytes of the block.wal LV on WALDev
	Up        bool    `json:"up"`
	In        bool    `json:"in"`
	DownSince float64 `json:"down_since,omitempty"`
	UUID      string  `json:"uuid"`
	hostDown  bool    // the node is powered off (synced from Sim.offline)
}

func (o *cephOSD) isUp() bool { return o.Up && !o.hostDown }

type cephPool struct {
	ID          int     `json:"id"`
	Name        string  `json:"name"`
	Size        int     `json:"size"`
	MinSize     int     `json:"min_size"`
	PGNum       int     `json:"pg_num"`
	PGNumMin    int     `json:"pg_num_min,omitempty"`
	Autoscale   string  `json:"pg_autoscale_mode"`
	Application string  `json:"application"`
	CrushRule   string  `json:"crush_rule"`
	TargetSize  int64   `json:"target_size,omitempty"`
	TargetRatio float64 `json:"target_size_ratio,omitempty"`
	// PGNumTarget is the pg_num Ceph moves the pool to (0: PGNum): a
	// split is done within seconds, a merge takes one PG at a time
	// (MergeCredit counts toward the next; cephMergeSeconds).
	PGNumTarget int       `json:"pg_num_target,omitempty"`
	MergeCredit float64   `json:"merge_credit,omitempty"`
	Stored      int64     `json:"stored"`
	PGs         []*cephPG `json:"pgs"`
	// Images are the RBD images (guest disks) in the pool.
	Images []string `json:"images,omitempty"`
}

// cephPG: Copies maps an OSD to how much of the PG it holds (1 = complete).
type cephPG struct {
	Created bool `json:"created,omitempty"`
	// A new pool's PG is "unknown" until ReportedAt (the manager has no
	// stats of it yet) and creating+peering until PeeredAt (Clock).
	ReportedAt float64         `json:"reported_at,omitempty"`
	PeeredAt   float64         `json:"peered_at,omitempty"`
	Lost       bool            `json:"lost,omitempty"`
	BelowMin   bool            `json:"below_min,omitempty"`
	Copies     map[int]float64 `json:"copies,omitempty"`
}

func (p *cephPool) pgBytes() float64 {
	if p.PGNum == 0 {
		return 0
	}
	return float64(p.Stored) / float64(p.PGNum)
}

func (p *cephPool) pgObjects() int64 {
	if p.PGNum == 0 {
		return 0
	}
	return int64(math.Ceil(p.pgBytes() / cephObjectSize))
}

func pgID(p *cephPool, i int) string { return fmt.Sprintf("%d.%x", p.ID, i) }

func newCephState(fsid string) *cephState {
	return &cephState{
		FSID: fsid, Conf: map[string]map[string]string{}, ConfigDB: map[string]map[string]string{},
		Mons: map[string]*cephMon{}, Mgrs: map[string]*cephMgr{}, OSDs: map[int]*cephOSD{},
		Flags: map[string]bool{}, NextPoolID: 1, Epoch: 1,
	}
}

func (cs *cephState) fixup() {
	if cs.Conf == nil {
		cs.Conf = map[string]map[string]string{}
	}
	if cs.ConfigDB == nil {
		cs.ConfigDB = map[string]map[string]string{}
	}
	if cs.Mons == nil {
		cs.Mons = map[string]*cephMon{}
	}
	if cs.Mgrs == nil {
		cs.Mgrs = map[string]*cephMgr{}
	}
	if cs.OSDs == nil {
		cs.OSDs = map[int]*cephOSD{}
	}
	if cs.Flags == nil {
		cs.Flags = map[string]bool{}
	}
	for _, p := range cs.Pools {
		for _, pg := range p.PGs {
			if pg.Copies == nil {
				pg.Copies = map[int]float64{}
			}
		}
	}
}

func hash64(parts ...any) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = fmt.Fprint(h, p, "/")
	}
	return h.Sum64()
}

// crushHash scores a placement candidate. FNV-1a alone is not enough for
// rendezvous hashing: candidates that differ only in their last bytes
// ("osd/0" vs "osd/3") compare the same way for every PG, so one OSD of a
// host got every PG and its sibling none. The murmur3 finaliser spreads the
// difference over all bits, as CRUSH's hash does for real clusters.
func crushHash(parts ...any) uint64 {
	x := hash64(parts...)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func (cs *cephState) osdIDs() []int {
	ids := make([]int, 0, len(cs.OSDs))
	for id := range cs.OSDs {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// crush maps PG i of pool p onto up to size in-OSDs in distinct hosts.
func (cs *cephState) crush(p *cephPool, i int) []int {
	byHost := map[string][]int{}
	for _, id := range cs.osdIDs() {
		if o := cs.OSDs[id]; o.In {
			byHost[o.Host] = append(byHost[o.Host], id)
		}
	}
	hosts := make([]string, 0, len(byHost))
	for h := range byHost {
		hosts = append(hosts, h)
	}
	sort.Slice(hosts, func(a, b int) bool {
		ha, hb := crushHash(p.ID, i, hosts[a]), crushHash(p.ID, i, hosts[b])
		if ha != hb {
			return ha > hb
		}
		return hosts[a] < hosts[b]
	})
	var out []int
	for _, h := range hosts {
		if len(out) == p.Size {
			break
		}
		best, bestScore := -1, uint64(0)
		for _, id := range byHost[h] {
			if s := crushHash(p.ID, i, "osd", id); best < 0 || s > bestScore {
				best, bestScore = id, s
			}
		}
		out = append(out, best)
	}
	return out
}

// upSet is the CRUSH result without down OSDs.
func (cs *cephState) upSet(p *cephPool, i int) []int {
	var out []int
	for _, id := range cs.crush(p, i) {
		if cs.OSDs[id].isUp() {
			out = append(out, id)
		}
	}
	return out
}

func (cs *cephState) complete(pg *cephPG, upOnly bool) []int {
	var out []int
	for id, f := range pg.Copies {
		o := cs.OSDs[id]
		if o == nil || f < 1 || (upOnly && !o.isUp()) {
			continue
		}
		out = append(out, id)
	}
	sort.Ints(out)
	return out
}

// pgStatus is one PG's derived state.
type pgStatus struct {
	state                       string
	active, degraded, remapped  bool
	undersized, stale, inactive bool
	creating                    bool  // a new pool's, not active yet: no health warning
	missing                     []int // up-set OSDs still to be backfilled
	actingN                     int
}

func (cs *cephState) pgState(p *cephPool, i int) pgStatus {
	pg := p.PGs[i]
	up := cs.upSet(p, i)
	var st pgStatus
	switch {
	case pg.Lost:
		st.state, st.inactive = "incomplete", true
		return st
	case !pg.Created:
		st.state, st.inactive = "unknown", true
		return st
	}
	acting := cs.complete(pg, true)
	st.actingN = len(acting)
	if st.actingN == 0 {
		st.state, st.inactive, st.stale, st.degraded, st.undersized = "stale+undersized+degraded+peered", true, true, true, true
		return st
	}
	have := map[int]bool{}
	for _, id := range acting {
		have[id] = true
	}
	for _, id := range up {
		if !have[id] {
			st.missing = append(st.missing, id)
		}
	}
	st.remapped = len(st.missing) > 0 || len(acting) != len(up)
	st.undersized = st.actingN < p.Size
	st.degraded = st.undersized
	st.active = st.actingN >= p.MinSize
	var parts []string
	if st.active {
		parts = append(parts, "active")
		if !st.degraded && len(st.missing) == 0 {
			parts = append(parts, "clean")
		}
	}
	if st.undersized {
		parts = append(parts, "undersized", "degraded")
	}
	if st.remapped {
		parts = append(parts, "remapped")
	}
	if len(st.missing) > 0 && st.active {
		if cs.backfillBlocked(st.degraded) {
			parts = append(parts, "backfill_wait")
		} else {
			parts = append(parts, "backfilling")
		}
	}
	if !st.active {
		parts = append(parts, "peered")
		st.inactive = true
	}
	st.state = strings.Join(parts, "+")
	if pg.PeeredAt > cs.Clock && st.active {
		// still being created: not serving I/O, not backfilling yet
		st.state, st.active, st.inactive, st.creating = "creating+peering", false, true, true
		if pg.ReportedAt > cs.Clock {
			st.state = "unknown"
		}
	}
	return st
}

func (cs *cephState) backfillBlocked(degraded bool) bool {
	if cs.Flags["nobackfill"] || cs.Flags["pause"] {
		return true
	}
	if degraded {
		return cs.Flags["norecover"]
	}
	return cs.Flags["norebalance"]
}

func (cs *cephState) maxBackfills() float64 {
	if v, err := strconv.ParseFloat(cs.configValue("osd", "osd_max_backfills"), 64); err == nil && v > 0 {
		return v
	}
	return 1
}

func (cs *cephState) configValue(section, key string) string {
	if v, ok := cs.Conf[section][key]; ok {
		return v
	}
	if v, ok := cs.ConfigDB[section][key]; ok {
		return v
	}
	if v, ok := cs.Conf["global"][key]; ok {
		return v
	}
	return cs.ConfigDB["global"][key]
}

// advance moves the simulated clock by dt seconds: down OSDs are marked out
// after the down-out interval (unless noout), missing copies are backfilled.
func (cs *cephState) advance(dt float64) {
	for dt > 0 {
		step := math.Min(dt, 5)
		cs.stepPGNum(step)
		// An auto-out inside this step ends the step there.
		for _, id := range cs.osdIDs() {
			o := cs.OSDs[id]
			if !o.isUp() && o.In && !cs.nooutFor(o) {
				if at := o.DownSince + cephDownOutInterval - cs.Clock; at <= step {
					step = math.Max(at, 0)
				}
			}
		}
		cs.backfill(step)
		cs.Clock += step
		dt -= step
		cs.bootDue()
		for _, id := range cs.osdIDs() {
			o := cs.OSDs[id]
			if !o.isUp() && o.In && !cs.nooutFor(o) && cs.Clock >= o.DownSince+cephDownOutInterval {
				o.In = false
				cs.Epoch++
			}
		}
		cs.settle()
		if step == 0 && dt > 0 {
			continue
		}
	}
	cs.settle()
	cs.autoscaleTick()
}

func (cs *cephState) backfill(step float64) {
	budget := map[int]float64{}
	rate := cephBackfillRate * cs.maxBackfills()
	for id := range cs.OSDs {
		budget[id] = rate * step
	}
	moved := 0.0
	for _, p := range cs.Pools {
		size := p.pgBytes()
		for i, pg := range p.PGs {
			st := cs.pgState(p, i)
			if !st.active || len(st.missing) == 0 || cs.backfillBlocked(st.degraded) {
				continue
			}
			for _, id := range st.missing {
				need := 1 - pg.Copies[id]
				if size <= 0 {
					pg.Copies[id] = 1
					continue
				}
				take := math.Min(need*size, budget[id])
				if take <= 0 {
					continue
				}
				budget[id] -= take
				moved += take
				pg.Copies[id] = math.Min(1, pg.Copies[id]+take/size)
				if 1-pg.Copies[id] < 1e-9 {
					pg.Copies[id] = 1
				}
			}
		}
	}
	cs.RecoveredBytes += moved
	if step > 0 {
		cs.lastRate = moved / step
	}
}

// settle applies what happens without time passing: PGs whose up set is
// complete drop copies elsewhere (pg_temp removed), empty PGs are created
// on their targets, and the history is recorded.
func (cs *cephState) settle() {
	for _, p := range cs.Pools {
		for i, pg := range p.PGs {
			up := cs.upSet(p, i)
			if !pg.Created && !pg.Lost && len(up) > 0 {
				pg.Created = true
				pg.ReportedAt, pg.PeeredAt = cs.Clock+cephPGReportSeconds, cs.Clock+cephPGReportSeconds+cephPGCreateSeconds*hashFrac(p.Name, i)
				for _, id := range up {
					pg.Copies[id] = 1
				}
			}
			if !pg.Created || pg.Lost {
				continue
			}
			inUp := map[int]bool{}
			for _, id := range up {
				inUp[id] = true
			}
			for id, f := range pg.Copies {
				if cs.OSDs[id] == nil || (f < 1 && !inUp[id]) {
					delete(pg.Copies, id)
				}
			}
			st := cs.pgState(p, i)
			if len(st.missing) == 0 && len(up) >= p.Size {
				for id := range pg.Copies {
					if !inUp[id] {
						delete(pg.Copies, id)
					}
				}
			}
			if len(cs.complete(pg, false)) == 0 {
				pg.Lost = true
				pg.Copies = map[int]float64{}
				cs.DataLoss = append(cs.DataLoss, fmt.Sprintf("pg %s (pool %s) lost its last copy at t=%.0fs", pgID(p, i), p.Name, cs.Clock))
				continue
			}
			n := len(cs.complete(pg, true))
			below := n < p.MinSize
			if below && !pg.BelowMin {
				cs.MinSizeViolations = append(cs.MinSizeViolations,
					fmt.Sprintf("pg %s (pool %s) had %d of min_size %d copies up at t=%.0fs", pgID(p, i), p.Name, n, p.MinSize, cs.Clock))
			}
			pg.BelowMin = below
		}
	}
	cs.recordDownHosts()
}

// setPGNum splits or merges a pool's PGs; each new PG inherits the copies
// of the PG its objects come from.
// target is the pg_num the pool is moving to.
func (p *cephPool) target() int {
	if p.PGNumTarget > 0 {
		return p.PGNumTarget
	}
	return p.PGNum
}

// A new pool's PGs on Ceph 16 (make testlab, `ceph pg ls-by-pool` every
// 0.2 s after `osd pool create m 32` returned): all 32 "unknown" for the
// first ~1.5 s, then creating+peering, the last active+clean after 8.6 s,
// while health stayed HEALTH_OK. Each PG here is unknown for
// cephPGReportSeconds and peers for up to cephPGCreateSeconds more.
const (
	cephPGReportSeconds = 2.0
	cephPGCreateSeconds = 6.5
)

// hashFrac is a fraction in [0, 1) fixed by parts.
func hashFrac(parts ...any) float64 { return float64(hash64(parts...)%1000) / 1000 }

// cephMergeSeconds is how long Ceph takes per merged PG: Ceph 16 merged an
// empty 128-PG pool down one PG every ~3 s after `pool set pg_num 32`,
// while a split from 64 to 128 was done within 2 s (make testlab).
const cephMergeSeconds = 3.0

// stepPGNum moves each pool's pg_num toward its target over step seconds.
func (cs *cephState) stepPGNum(step float64) {
	for _, p := range cs.Pools {
		t := p.target()
		switch {
		case t > p.PGNum:
			p.setPGNum(t)
			cs.Epoch++
		case t < p.PGNum:
			p.MergeCredit += step / cephMergeSeconds
			if k := min(int(p.MergeCredit), p.PGNum-t); k > 0 {
				p.setPGNum(p.PGNum - k)
				p.MergeCredit -= float64(k)
				cs.Epoch++
			}
		default:
			p.MergeCredit = 0
		}
	}
}

func (p *cephPool) setPGNum(n int) {
	old := p.PGs
	p.PGNum = n
	p.PGs = make([]*cephPG, n)
	for i := range p.PGs {
		pg := &cephPG{Copies: map[int]float64{}}
		if len(old) > 0 {
			src := old[i%len(old)]
			pg.Created, pg.Lost, pg.ReportedAt, pg.PeeredAt = src.Created, src.Lost, src.ReportedAt, src.PeeredAt
			for id, f := range src.Copies {
				pg.Copies[id] = f
			}
		}
		p.PGs[i] = pg
	}
}

// storedPGs lists the PGs an OSD holds any copy of, or is a target of.
func (cs *cephState) storedPGs(osd int) []string {
	var out []string
	for _, p := range cs.Pools {
		for i, pg := range p.PGs {
			if _, ok := pg.Copies[osd]; ok {
				out = append(out, pgID(p, i))
				continue
			}
			for _, id := range cs.upSet(p, i) {
				if id == osd {
					out = append(out, pgID(p, i))
					break
				}
			}
		}
	}
	return out
}

// okToStop is `ceph osd ok-to-stop`: no PG may drop below min_size.
func (cs *cephState) okToStop(ids ...int) (bool, string) {
	stop := map[int]bool{}
	for _, id := range ids {
		if cs.OSDs[id] == nil {
			return false, fmt.Sprintf("osd.%d does not exist", id)
		}
		stop[id] = true
	}
	bad := 0
	for _, p := range cs.Pools {
		for _, pg := range p.PGs {
			if !pg.Created || pg.Lost {
				continue
			}
			n, touched := 0, false
			for _, id := range cs.complete(pg, true) {
				if stop[id] {
					touched = true
				} else {
					n++
				}
			}
			if touched && n < p.MinSize {
				bad++
			}
		}
	}
	if bad > 0 {
		return false, fmt.Sprintf("unsafe to stop osd(s) at this time (%d PGs are or would become offline)", bad)
	}
	return true, ""
}

// safeToDestroy is `ceph osd safe-to-destroy` after the mgr's
// DaemonServer::_check_safe_to_destroy: an OSD that PGs map to (or that
// still holds a copy) is not safe; a down OSD cannot report stats, so while
// not every PG is active+clean no conclusion is drawn; an up OSD that holds
// nothing is safe (stopping it is the caller's next step).
func (cs *cephState) safeToDestroy(id int) (bool, string) {
	o := cs.OSDs[id]
	if o == nil {
		return true, "" // "clearly safe to destroy": it is gone
	}
	if pgs := cs.storedPGs(id); len(pgs) > 0 {
		// DaemonServer ends each sentence with a space (Ceph 16, make testlab).
		return false, fmt.Sprintf("OSD(s) %d have %d pgs currently mapped to them. ", id, len(pgs))
	}
	if !o.isUp() && !cs.allActiveClean() {
		return false, fmt.Sprintf("OSD(s) %d have no reported stats, and not all PGs are active+clean; we cannot draw any conclusions. ", id)
	}
	return true, ""
}

// allActiveClean: every PG is active+clean (remapped included).
func (cs *cephState) allActiveClean() bool {
	for _, p := range cs.Pools {
		for i := range p.PGs {
			st := cs.pgState(p, i)
			if !st.active || st.degraded || len(st.missing) > 0 {
				return false
			}
		}
	}
	return true
}

// destroyOSD removes an OSD and its copies, recording an unsafe destroy.
func (cs *cephState) destroyOSD(id int) {
	if ok, why := cs.safeToDestroy(id); !ok && cs.OSDs[id] != nil {
		cs.UnsafeDestroys = append(cs.UnsafeDestroys, fmt.Sprintf("osd.%d destroyed while not safe-to-destroy at t=%.0fs: %s", id, cs.Clock, why))
	}
	cs.removeOSD(id)
}

// removeOSD removes an OSD and its copies (the verdict is the caller's).
func (cs *cephState) removeOSD(id int) {
	delete(cs.OSDs, id)
	for _, p := range cs.Pools {
		for _, pg := range p.PGs {
			delete(pg.Copies, id)
		}
	}
	cs.Epoch++
	cs.settle()
}

func (cs *cephState) setOSDUp(id int, up bool) {
	o := cs.OSDs[id]
	if o == nil || o.Up == up {
		return
	}
	o.Up = up
	if !up {
		o.DownSince = cs.Clock
	}
	cs.Epoch++
	cs.settle()
}

func (cs *cephState) addPool(p *cephPool) {
	p.setPGNum(p.PGNum)
	cs.Pools = append(cs.Pools, p)
	cs.settle()
}

func (cs *cephState) pool(name string) *cephPool {
	for _, p := range cs.Pools {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// healthCheck is one entry of health.checks.
type healthCheck struct {
	Severity string `json:"severity"`
	Summary  struct {
		Message string `json:"message"`
		Count   int    `json:"count"`
	} `json:"summary"`
	Muted bool `json:"muted"`
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// cephFlagOrder is the order Ceph prints osdmap flags in.
var cephFlagOrder = []string{"pause", "noup", "nodown", "noout", "noin", "nobackfill", "norebalance", "norecover", "noscrub", "nodeep-scrub", "notieragent"}

type pgSummary struct {
	byState                                  map[string]int
	numPGs, inactive, stale, incomplete      int
	degradedPGs, undersizedPGs, remappedPGs  int
	objects, degradedObj, misplacedObj, copy int64
}

func (cs *cephState) summarize() pgSummary {
	s := pgSummary{byState: map[string]int{}}
	for _, p := range cs.Pools {
		objs := p.pgObjects()
		for i := range p.PGs {
			st := cs.pgState(p, i)
			s.numPGs++
			s.byState[st.state]++
			s.objects += objs
			s.copy += objs * int64(p.Size)
			if st.inactive && !st.creating {
				s.inactive++
			}
			if st.stale {
				s.stale++
			}
			if p.PGs[i].Lost {
				s.incomplete++
			}
			if st.degraded {
				s.degradedPGs++
				s.degradedObj += objs * int64(max(p.Size-st.actingN, 0))
			}
			if st.undersized {
				s.undersizedPGs++
			}
			if st.remapped {
				s.remappedPGs++
				s.misplacedObj += objs * int64(len(st.missing))
			}
		}
	}
	return s
}

// health computes HEALTH_OK/WARN/ERR and the checks Ceph raises.
func (cs *cephState) health(monUp func(*cephMon) bool, mgrUp bool) (string, map[string]*healthCheck) {
	checks := map[string]*healthCheck{}
	add := func(name, sev, msg string, count int) {
		c := &healthCheck{Severity: sev}
		c.Summary.Message, c.Summary.Count = msg, count
		checks[name] = c
	}
	var flags []string
	for _, f := range cephFlagOrder {
		if cs.Flags[f] {
			if f == "pause" {
				flags = append(flags, "pauserd", "pausewr")
				continue
			}
			flags = append(flags, f)
		}
	}
	if len(flags) > 0 {
		add("OSDMAP_FLAGS", "HEALTH_WARN", strings.Join(flags, ",")+" flag(s) set", len(flags))
	}
	cs.groupFlagCheck(add)
	down, hostOSDs, hostDown := 0, map[string]int{}, map[string]int{}
	for _, o := range cs.OSDs {
		hostOSDs[o.Host]++
		if !o.isUp() {
			down++
			hostDown[o.Host]++
		}
	}
	if down > 0 {
		add("OSD_DOWN", "HEALTH_WARN", plural(down, "osds down", "osds down"), down)
		hosts, osds := 0, 0
		for h, n := range hostDown {
			if n == hostOSDs[h] {
				hosts++
				osds += n
			}
		}
		if hosts > 0 {
			add("OSD_HOST_DOWN", "HEALTH_WARN", fmt.Sprintf("%s (%s) down", plural(hosts, "host", "hosts"), plural(osds, "osds", "osds")), hosts)
		}
	}
	if def, _ := strconv.Atoi(cs.configValue("global", "osd_pool_default_size")); def > 0 && len(cs.OSDs) < def {
		add("TOO_FEW_OSDS", "HEALTH_WARN", fmt.Sprintf("OSD count %d < osd_pool_default_size %d", len(cs.OSDs), def), 1)
	}
	monsDown := 0
	var quorum []string
	for _, m := range cs.sortedMons() {
		if monUp(m) {
			quorum = append(quorum, m.ID)
		} else {
			monsDown++
		}
	}
	if monsDown > 0 {
		add("MON_DOWN", "HEALTH_WARN", fmt.Sprintf("%d/%d mons down, quorum %s", monsDown, len(cs.Mons), strings.Join(quorum, ",")), monsDown)
	}
	if len(cs.Mons) > 0 && !mgrUp {
		add("MGR_DOWN", "HEALTH_WARN", "no active mgr", 1)
	}
	s := cs.summarize()
	if s.inactive > 0 {
		msg := "Reduced data availability: " + plural(s.inactive, "pg inactive", "pgs inactive")
		if s.stale > 0 {
			msg += ", " + plural(s.stale, "pg stale", "pgs stale")
		}
		if s.incomplete > 0 {
			msg += ", " + plural(s.incomplete, "pg incomplete", "pgs incomplete")
		}
		add("PG_AVAILABILITY", "HEALTH_WARN", msg, s.inactive)
	}
	if s.degradedPGs > 0 {
		msg := "Degraded data redundancy: "
		if s.copy > 0 {
			msg += fmt.Sprintf("%d/%d objects degraded (%.3f%%), ", s.degradedObj, s.copy, float64(s.degradedObj)*100/float64(s.copy))
		}
		msg += plural(s.degradedPGs, "pg degraded", "pgs degraded")
		if s.undersizedPGs > 0 {
			msg += ", " + plural(s.undersizedPGs, "pg undersized", "pgs undersized")
		}
		add("PG_DEGRADED", "HEALTH_WARN", msg, s.degradedPGs)
	}
	noRed := 0
	for _, p := range cs.Pools {
		if p.Size == 1 {
			noRed++
		}
	}
	if noRed > 0 {
		add("POOL_NO_REDUNDANCY", "HEALTH_WARN", fmt.Sprintf("%d pool(s) have no replicas configured", noRed), noRed)
	}
	status := "HEALTH_OK"
	for _, c := range checks {
		if c.Severity == "HEALTH_ERR" {
			status = "HEALTH_ERR"
			break
		}
		status = "HEALTH_WARN"
	}
	return status, checks
}

func (cs *cephState) sortedMons() []*cephMon {
	out := make([]*cephMon, 0, len(cs.Mons))
	for _, m := range cs.Mons {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
