package ceph

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// A rolling restart of Ceph daemons after a change they only read when
// they start, after Ceph's and PVE's procedures (ceph-ansible's
// rolling_update, PVE's restart-bulk, pveceph.adoc): one host at a time,
// monitors first (each only while the others keep a quorum), then
// managers, then OSDs. Before a host's OSDs stop, `ceph osd ok-to-stop`
// must pass for them (every PG keeps min_size copies up), so the host
// before has recovered; while they restart, noout keeps Ceph from marking
// them out and moving their data (`ceph osd set-group noout <host>`, or the
// cluster flag on a Ceph without group flags). HEALTH_ERR stops the
// restart. Flags the restart set are always cleared again, with a fresh
// context when the apply was cancelled.

var (
	// restartPollFirst is the shortest interval between checks while
	// waiting (a check is one status read); restartPollMax the longest
	// (restartPacer).
	restartPollFirst = 100 * time.Millisecond
	restartPollMax   = 5 * time.Second
	// restartWait bounds each wait (for ok-to-stop, a daemon to come up,
	// PGs to be active+clean), as PVE's restart-bulk does per OSD.
	restartWait = 10 * time.Minute
	// cleanupTimeout bounds clearing the flags after a failure.
	cleanupTimeout = 2 * time.Minute
)

// rollingRestartLock serialises rolling restarts in one Terraform run, so
// that two resources never restart daemons on two hosts at once.
const rollingRestartLock = "ceph/rolling-restart"

// benignOSDMapFlags may be set when a rolling restart starts (PVE's
// BENIGN_OSDMAP_FLAGS); any other flag (noup, nobackfill, norecover,
// pause, ...) would keep restarted OSDs from booting or recovering.
var benignOSDMapFlags = []string{"noout", "noscrub", "nodeep-scrub", "notieragent", "sortbitwise", "recovery_deletes",
	"purged_snapdirs", "pglog_hardlimit"}

type restarter struct {
	ex        *nodeexec.Pool
	ceph      cephCLI
	waitClean bool

	// Flags this restart set, to clear again: hosts with group noout,
	// and whether it set the cluster-wide noout.
	groupNoout   map[string]bool
	clusterNoout bool
	noGroups     bool // osd set-group is unknown to this Ceph

	steps []restartStep // what was restarted, in order
	pace  restartPacer

	// polledHealth is the health a waitFor check read with its answer in
	// this poll, nil when it read none.
	polledHealth *cephHealth
}

// rollingRestart restarts daemons host by host. It returns when all run
// again, or with the first error; flags it set are cleared either way (a
// failure to clear them is part of the error).
func rollingRestart(ctx context.Context, ex *nodeexec.Pool, cmdNode string, daemons []cephDaemon, waitClean bool) error {
	_, err := rollingRestartReport(ctx, ex, cmdNode, daemons, waitClean)
	return err
}

// rollingRestartReport is rollingRestart that also returns what it did, in
// order (config_restart_report.go).
func rollingRestartReport(ctx context.Context, ex *nodeexec.Pool, cmdNode string, daemons []cephDaemon, waitClean bool) (steps []restartStep, err error) {
	r := &restarter{ex: ex, ceph: cephCLI{ex: ex, node: cmdNode}, waitClean: waitClean, groupNoout: map[string]bool{}}
	defer func() { steps = r.steps }()
	defer func() {
		if cerr := r.cleanup(ctx); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	if err := r.preflight(ctx); err != nil {
		return nil, err
	}
	ds := append([]cephDaemon(nil), daemons...)
	sortDaemons(ds)
	for _, kind := range daemonKinds {
		byHost := map[string][]cephDaemon{}
		for _, d := range ds {
			if d.Kind == kind {
				byHost[d.Host] = append(byHost[d.Host], d)
			}
		}
		for _, host := range sortedHosts(byHost) {
			var err error
			switch kind {
			case "osd":
				err = r.timed(host, byHost[host], func() error { return r.restartOSDs(ctx, host, byHost[host]) })
			default:
				for _, d := range byHost[host] {
					if err = r.timed(host, []cephDaemon{d}, func() error { return r.restartDaemon(ctx, d) }); err != nil {
						break
					}
				}
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}

// preflight refuses to start on HEALTH_ERR or with flags set that stop
// OSDs from booting or recovering.
func (r *restarter) preflight(ctx context.Context) error {
	if err := r.healthGate(ctx); err != nil {
		return err
	}
	d, err := r.ceph.osdDump(ctx)
	if err != nil {
		return err
	}
	var bad []string
	for _, f := range strings.Split(d.Flags, ",") {
		if f != "" && !containsString(benignOSDMapFlags, f) && !strings.HasPrefix(f, "require_") {
			bad = append(bad, f)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("refusing to start a rolling restart while the OSD flag(s) %s are set: restarted OSDs would not come up or "+
			"recover (clear them with ceph osd unset <flag>, or pve_ceph_flags)", strings.Join(bad, ", "))
	}
	return nil
}

// healthGate fails on HEALTH_ERR.
func (r *restarter) healthGate(ctx context.Context) error {
	h, err := r.ceph.health(ctx)
	if err != nil {
		return err
	}
	return h.gate()
}

// gate fails on HEALTH_ERR, naming each check.
func (h cephHealth) gate() error {
	if h.Status != "HEALTH_ERR" {
		return nil
	}
	var lines []string
	for _, k := range sortedHosts(h.Checks) {
		lines = append(lines, "  - "+k+": "+h.Checks[k])
	}
	return fmt.Errorf("the rolling restart stops: Ceph reports HEALTH_ERR:\n%s", strings.Join(lines, "\n"))
}

// pgsActiveClean is a waitFor check that keeps the health it read with the
// PG states, so that the wait's HEALTH_ERR gate need not ask again: on a
// real cluster each `ceph` call over SSH costs most of a second.
func (r *restarter) pgsActiveClean(ctx context.Context) (bool, string, error) {
	done, msg, h, err := r.ceph.pgsActiveClean(ctx)
	if err == nil {
		r.polledHealth = &h
	}
	return done, msg, err
}

// waitFor polls check until it reports done, an error, HEALTH_ERR, the
// wait's timeout or ctx's end.
func (r *restarter) waitFor(ctx context.Context, kind waitKind, what string, check func(context.Context) (bool, string, error)) error {
	start := time.Now()
	deadline := start.Add(restartWait)
	last := ""
	for {
		r.polledHealth = nil
		done, msg, err := check(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("cancelled while waiting for %s (%s): %w", what, last, ctx.Err())
		}
		var ce *nodeexec.Error
		switch {
		case errors.As(err, &ce) && ce.Err == nil:
			// Ceph answered with an error (a monitor election, a manager
			// failing over): ask again.
			msg = err.Error()
		case err != nil:
			return err
		}
		if done {
			r.pace.took(kind, time.Since(start))
			return nil
		}
		last = msg
		var gateErr error
		if h := r.polledHealth; h != nil {
			gateErr = h.gate()
		} else {
			gateErr = r.healthGate(ctx)
		}
		if gateErr != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("cancelled while waiting for %s (%s): %w", what, last, ctx.Err())
			}
			return fmt.Errorf("while waiting for %s: %w", what, gateErr)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up waiting for %s after %s: %s", what, restartWait, last)
		}
		tflog.Debug(ctx, "Ceph rolling restart: waiting", map[string]any{"for": what, "ceph": msg})
		select {
		case <-ctx.Done():
			return fmt.Errorf("cancelled while waiting for %s (%s): %w", what, last, ctx.Err())
		case <-time.After(r.pace.next(kind, time.Since(start))):
		}
	}
}

func osdList(ds []cephDaemon) ([]int, string) {
	ids := make([]int, len(ds))
	names := make([]string, len(ds))
	for i, d := range ds {
		ids[i], names[i] = d.osdID(), d.Name()
	}
	sort.Ints(ids)
	return ids, strings.Join(names, ", ")
}

// restartOSDs restarts one host's OSDs together.
func (r *restarter) restartOSDs(ctx context.Context, host string, osds []cephDaemon) error {
	ids, names := osdList(osds)
	if err := r.healthGate(ctx); err != nil {
		return err
	}
	tflog.Info(ctx, "Ceph rolling restart: waiting until the host's OSDs are ok to stop", map[string]any{"host": host, "osds": names})
	err := r.waitFor(ctx, waitOSDsOkToStop, fmt.Sprintf("ceph osd ok-to-stop %s (host %s)", names, host), func(ctx context.Context) (bool, string, error) {
		return r.ceph.okToStop(ctx, ids)
	})
	if err != nil {
		return err
	}
	if err := r.setNoout(ctx, host); err != nil {
		return err
	}
	units := make([]string, len(osds))
	for i, d := range osds {
		units[i] = d.Unit()
	}
	tflog.Info(ctx, "Ceph rolling restart: restarting OSDs", map[string]any{"host": host, "osds": names})
	if _, err := r.ex.Run(ctx, host, nodeexec.Cmd("systemctl", append([]string{"restart"}, units...)...)); err != nil {
		return fmt.Errorf("restart the OSDs on %s: %w", host, err)
	}
	err = r.waitFor(ctx, waitOSDsUp, fmt.Sprintf("%s on %s to come up", names, host), func(ctx context.Context) (bool, string, error) {
		d, err := r.ceph.osdDump(ctx)
		if err != nil {
			return false, "", err
		}
		var down []string
		for _, o := range osds {
			if !d.up(o.osdID()) {
				down = append(down, o.Name())
			}
		}
		if len(down) == 0 {
			return true, "", nil
		}
		states, err := unitStates(ctx, r.ex, host, units)
		if err != nil {
			return false, "", err
		}
		for _, o := range osds {
			if states[o.Unit()] == "failed" {
				return false, "", fmt.Errorf("%s failed to start on %s (see journalctl -u %s on the node)", o.Unit(), host, o.Unit())
			}
		}
		return false, strings.Join(down, ", ") + " still down", nil
	})
	if err != nil {
		return err
	}
	tflog.Info(ctx, "Ceph rolling restart: OSDs are up again", map[string]any{"host": host, "osds": names})
	if err := r.clearNoout(ctx, host); err != nil {
		return err
	}
	if r.waitClean {
		return r.waitFor(ctx, waitPGsClean, "all placement groups to be active+clean", r.pgsActiveClean)
	}
	return nil
}

// setNoout keeps host's OSDs in while they restart. It records a flag as
// its own before setting it, so that the cleanup clears it even when the
// set itself was interrupted; a flag someone else set is left alone.
func (r *restarter) setNoout(ctx context.Context, host string) error {
	d, err := r.ceph.osdDump(ctx)
	if err != nil {
		return err
	}
	if d.flagSet("noout") {
		return nil // the operator's cluster-wide noout covers it
	}
	if !r.noGroups {
		if containsString(d.CrushNodeFlags[host], "noout") {
			return nil
		}
		r.groupNoout[host] = true
		tflog.Info(ctx, "Ceph rolling restart: setting noout on the host", map[string]any{"host": host})
		_, err := r.ceph.run(ctx, "osd", "set-group", "noout", host)
		if err == nil {
			return nil
		}
		if !isInvalidCommand(err) {
			return fmt.Errorf("set noout on host %s: %w", host, err)
		}
		delete(r.groupNoout, host)
		r.noGroups = true
		tflog.Warn(ctx, "Ceph has no osd set-group: using the cluster-wide noout flag for the restart")
	}
	r.clusterNoout = true
	if _, err := r.ceph.run(ctx, "osd", "set", "noout"); err != nil {
		return fmt.Errorf("set noout: %w", err)
	}
	return nil
}

// clearNoout clears the host's group noout once its OSDs are up (the
// cluster-wide flag stays until the end).
func (r *restarter) clearNoout(ctx context.Context, host string) error {
	if !r.groupNoout[host] {
		return nil
	}
	tflog.Info(ctx, "Ceph rolling restart: clearing noout on the host", map[string]any{"host": host})
	if _, err := r.ceph.run(ctx, "osd", "unset-group", "noout", host); err != nil {
		return fmt.Errorf("clear noout on host %s: %w", host, err)
	}
	delete(r.groupNoout, host)
	return nil
}

// cleanup clears every flag the restart set and has not cleared, with a
// fresh context if ctx has ended.
func (r *restarter) cleanup(ctx context.Context) error {
	if len(r.groupNoout) == 0 && !r.clusterNoout {
		return nil
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	var errs []error
	for _, host := range sortedHosts(r.groupNoout) {
		tflog.Info(cctx, "Ceph rolling restart: clearing the noout it set", map[string]any{"host": host})
		if _, err := r.ceph.run(cctx, "osd", "unset-group", "noout", host); err != nil {
			errs = append(errs, fmt.Errorf("the rolling restart set noout on host %s and could not clear it; clear it by hand with "+
				"`ceph osd unset-group noout %s`: %w", host, host, err))
			continue
		}
		delete(r.groupNoout, host)
	}
	if r.clusterNoout {
		tflog.Info(cctx, "Ceph rolling restart: clearing the cluster-wide noout it set")
		if _, err := r.ceph.run(cctx, "osd", "unset", "noout"); err != nil {
			errs = append(errs, fmt.Errorf("the rolling restart set the cluster-wide noout and could not clear it; clear it by hand "+
				"with `ceph osd unset noout`: %w", err))
		} else {
			r.clusterNoout = false
		}
	}
	return errors.Join(errs...)
}

// restartDaemon restarts a monitor (once the others keep a quorum without
// it) or a manager, and waits until it is back.
func (r *restarter) restartDaemon(ctx context.Context, d cephDaemon) error {
	if err := r.healthGate(ctx); err != nil {
		return err
	}
	if d.Kind == "mon" {
		err := r.waitFor(ctx, waitMonOkToStop, "ceph mon ok-to-stop "+d.ID, func(ctx context.Context) (bool, string, error) {
			return r.ceph.monOkToStop(ctx, d.ID)
		})
		if err != nil {
			return err
		}
	}
	tflog.Info(ctx, "Ceph rolling restart: restarting daemon", map[string]any{"host": d.Host, "daemon": d.Name()})
	if _, err := r.ex.Run(ctx, d.Host, nodeexec.Cmd("systemctl", "restart", d.Unit())); err != nil {
		return fmt.Errorf("restart %s on %s: %w", d.Name(), d.Host, err)
	}
	return r.waitFor(ctx, waitKind("back:"+d.Kind), d.Name()+" on "+d.Host+" to be back", func(ctx context.Context) (bool, string, error) {
		var back bool
		var err error
		if d.Kind == "mon" {
			var names []string
			names, err = r.ceph.quorumNames(ctx)
			back = containsString(names, d.ID)
		} else {
			back, err = r.ceph.mgrRunning(ctx, d.ID)
		}
		if err != nil || back {
			return back, "", err
		}
		states, err := unitStates(ctx, r.ex, d.Host, []string{d.Unit()})
		if err != nil {
			return false, "", err
		}
		if states[d.Unit()] == "failed" {
			return false, "", fmt.Errorf("%s failed to start on %s (see journalctl -u %s on the node)", d.Unit(), d.Host, d.Unit())
		}
		return false, d.Name() + " not back yet", nil
	})
}

// daemonNames lists daemons' names, for messages.
func daemonNames(ds []cephDaemon) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Name()
	}
	return out
}
