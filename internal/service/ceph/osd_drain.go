package ceph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/pvelab/terraform-provider-pve/internal/framework"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Destroying an OSD the safe way (Ceph's own procedure, health-checks.rst):
// mark it out, wait until `ceph osd safe-to-destroy` says no PG needs it,
// stop it, destroy it. PVE's DELETE checks only that the OSD is out and
// down, so the waiting is the provider's job.

var (
	// drainPollFirst is the first interval between safe-to-destroy checks;
	// it grows by half each time up to drainPollMax.
	drainPollFirst = 200 * time.Millisecond
	drainPollMax   = 15 * time.Second
	// downWait bounds the wait for the monitors to mark a stopped OSD down.
	downWait = 2 * time.Minute
	// settleWait bounds the wait for PGs that are inactive only on their
	// way to active (peering, activating, creating), as every PG is for
	// seconds after a pool is made or its pg_num changes (real Ceph 16).
	settleWait = 90 * time.Second
)

// transientPGParts are PG states Ceph passes through on its own on the way
// to active; any other inactive state (peered, down, incomplete, stale)
// stays until someone acts.
var transientPGParts = map[string]bool{"peering": true, "activating": true, "creating": true, "unknown": true}

// poll calls check until it reports done or fails, pausing drainPollFirst
// at first and half as long again each time, up to maxPause. It returns
// check's error, or ctx's once ctx ends first.
func poll(ctx context.Context, maxPause time.Duration, check func() (bool, error)) error {
	for pause := drainPollFirst; ; pause = min(pause*3/2, maxPause) {
		if done, err := check(); done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// onlyTransient: every inactive PG is on its way to active.
func onlyTransient(st *pve.CephStatus) bool {
	for state := range st.PGsByState {
		parts := strings.Split(state, "+")
		if slices.Contains(parts, "active") {
			continue
		}
		if !slices.ContainsFunc(parts, func(p string) bool { return transientPGParts[p] }) ||
			slices.ContainsFunc(parts, func(p string) bool { return p == "down" || p == "incomplete" || p == "stale" || p == "peered" }) {
			return false
		}
	}
	return true
}

// settledStatus reads the Ceph status, waiting up to settleWait while the
// only inactive PGs are transient ones, so that a drain is not refused
// for PGs that peer a second later.
func settledStatus(ctx context.Context, c *pve.Client, node string) (*pve.CephStatus, error) {
	deadline := time.Now().Add(settleWait)
	for {
		st, err := c.CephNodeStatus(ctx, node)
		if err != nil {
			return nil, err
		}
		n, states := inactivePGs(st)
		if n == 0 || !onlyTransient(st) || time.Now().After(deadline) {
			return st, nil
		}
		tflog.Info(ctx, "waiting for PGs on their way to active before the drain", map[string]any{"inactive": strings.Join(states, ", ")})
		select {
		case <-ctx.Done():
			return st, nil
		case <-time.After(time.Second):
		}
	}
}

// drainBlockingFlags are the osdmap flags under which Ceph moves no data off
// an out OSD (backfill, rebalance and recovery are suspended).
var drainBlockingFlags = []string{"pause", "nobackfill", "norebalance", "norecover"}

// osdDestroyLock serialises OSD destroys in one run: one OSD drains at a
// time, as Ceph advises, and every check sees the previous destroy done.
const osdDestroyLock = "ceph/osd-destroy"

func blockingFlags(flags []string) []string {
	var out []string
	for _, f := range flags {
		for _, b := range drainBlockingFlags {
			if f == b {
				out = append(out, f)
			}
		}
	}
	return out
}

// inactivePGs sums the PGs whose state lacks "active" (peered, stale,
// incomplete, unknown, ...).
func inactivePGs(st *pve.CephStatus) (int64, []string) {
	var n int64
	var states []string
	for s, c := range st.PGsByState {
		active := false
		for _, p := range strings.Split(s, "+") {
			active = active || p == "active"
		}
		if !active {
			n += c
			states = append(states, fmt.Sprintf("%d %s", c, s))
		}
	}
	sort.Strings(states)
	return n, states
}

func downOSDs(tree *pve.CephOSDTree) []string {
	var out []string
	for _, o := range tree.OSDs {
		if !o.Up() {
			out = append(out, fmt.Sprintf("%s (%s)", o.Name, o.Host))
		}
	}
	return out
}

func isTarget(id int64, ids []int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// preflightDrain returns the reasons why Ceph cannot drain the OSDs now,
// from what PVE reports before anything is changed: flags that stop data
// movement, inactive PGs (which do not recover, and may have their last
// copy that is up on these OSDs), and pools that need more hosts than would
// be left (CRUSH's failure domain host leaves such PGs remapped for good).
func preflightDrain(ctx context.Context, c *pve.Client, node string, ids []int64, tree *pve.CephOSDTree) ([]string, error) {
	names := osdNames(ids)
	var reasons []string
	if f := blockingFlags(tree.Flags); len(f) > 0 {
		reasons = append(reasons, fmt.Sprintf("The cluster flag(s) %s are set, so Ceph moves no data off %s. Unset them (pve_ceph_flags, or `ceph osd unset %s`) and apply again.",
			strings.Join(f, ", "), names, f[0]))
	}
	st, err := settledStatus(ctx, c, node)
	if err != nil {
		return nil, fmt.Errorf("read the Ceph status: %w", err)
	}
	if n, states := inactivePGs(st); n > 0 {
		down := downOSDs(tree)
		msg := fmt.Sprintf("Ceph reports %d of %d PGs inactive (%s): they have fewer than min_size copies up, do not recover, and %s may hold the last copy of their data that is up.",
			n, st.NumPGs, strings.Join(states, ", "), names)
		if len(down) > 0 {
			msg += " Down OSDs: " + strings.Join(down, ", ") + ". Start them again (or replace their disks and let Ceph recover) until every PG is active, then apply again."
		} else {
			msg += " Wait until every PG is active, then apply again."
		}
		reasons = append(reasons, msg)
	}
	pools, err := c.CephPools(ctx, node)
	if err != nil {
		return nil, fmt.Errorf("list the Ceph pools: %w", err)
	}
	hosts := map[string]bool{}
	for _, o := range tree.OSDs {
		if o.In && !isTarget(o.ID, ids) {
			hosts[o.Host] = true
		}
	}
	hostList := make([]string, 0, len(hosts))
	for h := range hosts {
		hostList = append(hostList, h)
	}
	sort.Strings(hostList)
	for _, p := range pools {
		// PVE's replicated_rule: one copy per host. Other rules are not
		// published by the API; the timeout explains if those cannot drain.
		if p.CrushRule != "" && p.CrushRule != "replicated_rule" {
			continue
		}
		if p.Size > int64(len(hosts)) {
			where := "no host has"
			if len(hostList) > 0 {
				where = fmt.Sprintf("only %d host(s) have", len(hostList))
			}
			reasons = append(reasons, fmt.Sprintf("Pool %q keeps size = %d copies on distinct hosts (CRUSH rule %s), but without %s %s OSDs that are in (%s). "+
				"Ceph would keep its PGs active+clean+remapped on %s for good. Add an OSD first (on %s or on another host), or lower the pool's size; "+
				"or set force = true to destroy anyway, leaving those PGs with %d copies until capacity returns.",
				p.Name, p.Size, ruleName(p.CrushRule), names, where, strings.Join(hostList, ", "), names, node, len(hostList)))
		}
	}
	return reasons, nil
}

func ruleName(r string) string {
	if r == "" {
		return "replicated_rule"
	}
	return r
}

// safeToDestroy asks Ceph about every OSD; it returns "" when all are safe,
// else Ceph's status message(s).
func safeToDestroy(ctx context.Context, c *pve.Client, node string, ids []int64) (string, error) {
	var msgs []string
	for _, id := range ids {
		s, err := c.CephCmdSafety(ctx, node, "osd", strconv.FormatInt(id, 10), "destroy")
		if err != nil {
			return "", err
		}
		if !s.Safe {
			msg := s.Status
			if msg == "" {
				msg = osdName(id) + " is not safe to destroy yet"
			}
			msgs = append(msgs, msg)
		}
	}
	return strings.Join(msgs, " "), nil
}

// awaitSafeAgain waits until Ceph calls the stopped OSDs safe to destroy.
// A stopped OSD reports no statistics, and until every PG is active+clean
// again Ceph cannot vouch for it (real Ceph 16 right after the stop: "OSD(s)
// 5 have no reported stats, and not all PGs are active+clean; we cannot
// draw any conclusions"), so the destroy waits for a yes after the stop too.
func awaitSafeAgain(ctx context.Context, c *pve.Client, node string, ids []int64) error {
	waitCtx, cancel := context.WithTimeout(ctx, downWait)
	defer cancel()
	var msg string
	var err error
	if poll(waitCtx, 5*time.Second, func() (bool, error) {
		msg, err = safeToDestroy(waitCtx, c, node, ids)
		return err == nil && msg == "", nil
	}) == nil {
		return nil
	}
	if err == nil {
		err = errors.New(msg)
	}
	return fmt.Errorf("%s stopped and out, but Ceph did not call it safe to destroy again within %s (nothing was destroyed; apply again): %w",
		osdNames(ids), downWait, err)
}

func fmtBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}

// progress describes how far the drain is, from the tree and the status.
func progress(ctx context.Context, c *pve.Client, node string, ids []int64) string {
	var parts []string
	if tree, err := c.CephOSDTree(ctx, node); err == nil {
		var pgs, used int64
		for _, id := range ids {
			if o := tree.OSD(id); o != nil {
				pgs += o.PGs
				used += o.BytesUsed
			}
		}
		parts = append(parts, fmt.Sprintf("%d PGs and %s still on %s", pgs, fmtBytes(used), osdNames(ids)))
		if f := blockingFlags(tree.Flags); len(f) > 0 {
			parts = append(parts, "flags "+strings.Join(f, ",")+" set (no data moves while they are)")
		}
	}
	if st, err := c.CephNodeStatus(ctx, node); err == nil {
		parts = append(parts, fmt.Sprintf("cluster %s, %d objects misplaced, %d degraded", st.Health, st.MisplacedObjects, st.DegradedObjects))
		var states []string
		for s, n := range st.PGsByState {
			states = append(states, fmt.Sprintf("%d %s", n, s))
		}
		sort.Strings(states)
		parts = append(parts, "PGs: "+strings.Join(states, ", "))
	}
	return strings.Join(parts, "; ")
}

// drain marks the OSDs out and waits until Ceph says they are safe to
// destroy. It returns a refusal (nothing changed) or a timeout (the OSDs
// stay out) as an error whose text says why and what to do.
func drain(ctx context.Context, c *pve.Client, node string, ids []int64, deadline time.Duration) error {
	names := osdNames(ids)
	tree, err := c.CephOSDTree(ctx, node)
	if err != nil {
		return err
	}
	if msg, err := safeToDestroy(ctx, c, node, ids); err != nil {
		return fmt.Errorf("ask Ceph whether %s is safe to destroy: %w", names, err)
	} else if msg == "" {
		tflog.Info(ctx, "Ceph says the OSD is safe to destroy already", map[string]any{"osds": names})
		return nil
	}
	reasons, err := preflightDrain(ctx, c, node, ids, tree)
	if err != nil {
		return err
	}
	if len(reasons) > 0 {
		return &drainRefusal{names: names, reasons: reasons, out: anyOut(tree, ids)}
	}
	for _, id := range ids {
		if o := tree.OSD(id); o != nil && o.In {
			tflog.Info(ctx, "marking the OSD out: Ceph starts moving its data to the other OSDs", map[string]any{"osd": osdName(id)})
			if err := c.MarkCephOSDOut(ctx, node, id); err != nil {
				return fmt.Errorf("mark %s out: %w", osdName(id), err)
			}
		}
	}
	started := time.Now()
	var last string
	err = poll(ctx, drainPollMax, func() (bool, error) {
		msg, err := safeToDestroy(ctx, c, node, ids)
		if err != nil && ctx.Err() == nil {
			return false, fmt.Errorf("ask Ceph whether %s is safe to destroy: %w", names, err)
		}
		if err == nil && msg == "" {
			tflog.Info(ctx, "Ceph says the OSD is safe to destroy", map[string]any{"osds": names, "waited": time.Since(started).Round(time.Second).String()})
			return true, nil
		}
		if msg != "" {
			last = msg
		}
		if ctx.Err() == nil {
			tflog.Info(ctx, "waiting for Ceph to drain the OSD", map[string]any{"osds": names, "safe_to_destroy": last,
				"progress": progress(ctx, c, node, ids), "waited": time.Since(started).Round(time.Second).String()})
		}
		return false, nil
	})
	if err != nil && ctx.Err() != nil {
		return timeoutError(c, node, ids, deadline, last)
	}
	return err
}

// upCount is how many of ids the tree shows up.
func upCount(tree *pve.CephOSDTree, ids []int64) int {
	n := 0
	for _, id := range ids {
		if o := tree.OSD(id); o != nil && o.Up() {
			n++
		}
	}
	return n
}

func anyOut(tree *pve.CephOSDTree, ids []int64) bool {
	for _, id := range ids {
		if o := tree.OSD(id); o != nil && !o.In {
			return true
		}
	}
	return false
}

// drainRefusal: draining cannot finish as the cluster is; nothing was changed.
type drainRefusal struct {
	names   string
	reasons []string
	out     bool // an earlier attempt had marked the OSD out already
}

func (e *drainRefusal) Error() string {
	state := "it is still in and keeps its data, and it stays in Terraform state"
	if e.out {
		state = "it stays out (an earlier attempt marked it out; `ceph osd in` takes it back) and stays in Terraform state"
	}
	return fmt.Sprintf("Refusing to destroy %s: Ceph cannot drain it as the cluster is now, so destroying it would lose copies of data. Nothing was changed: %s.\n\n%s\n\n"+
		"force = true destroys without waiting: only for an OSD whose data is lost or expendable.",
		e.names, state, strings.Join(e.reasons, "\n\n"))
}

func timeoutError(c *pve.Client, node string, ids []int64, deadline time.Duration, last string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	names := osdNames(ids)
	return fmt.Errorf("timed out after %s waiting for Ceph to drain %s (safe-to-destroy: %q). %s stays out, so Ceph keeps moving its data, and stays in Terraform state: "+
		"apply again to keep waiting, or raise timeouts.delete.\n\nState: %s.\n\n"+
		"PGs that stay active+clean+remapped without backfilling mean Ceph has nowhere to put the data (for example a pool with as many copies as hosts, failure domain host): "+
		"add an OSD or a host, or lower the pool size. Flags nobackfill/norebalance/norecover/pause stop the movement. force = true destroys without waiting (copies are lost). "+
		"To keep the OSD instead, mark it in again (`ceph osd in %d`, or Ceph > OSD > In in the GUI) and keep it in the configuration",
		deadline, names, last, names, progress(ctx, c, node, ids), ids[0])
}

// stopAndDestroy stops the OSDs, waits until the monitors see them down
// (and, with vouch, until Ceph calls them safe to destroy again) and
// destroys them with cleanup (PVE zaps the LVs and wipes the disk).
func stopAndDestroy(ctx context.Context, pd *framework.ProviderData, c *pve.Client, node string, ids []int64, vouch bool) error {
	tree, err := c.CephOSDTree(ctx, node)
	if err != nil {
		return err
	}
	for _, id := range ids {
		o := tree.OSD(id)
		if o == nil {
			continue
		}
		if o.In { // force: PVE refuses an OSD that is in
			if err := c.MarkCephOSDOut(ctx, node, id); err != nil {
				return fmt.Errorf("mark %s out: %w", osdName(id), err)
			}
		}
		if o.Up() {
			tflog.Info(ctx, "stopping the OSD", map[string]any{"osd": osdName(id), "node": node})
			upid, err := c.StopCephService(ctx, node, osdName(id))
			if _, err := c.Await(ctx, upid, err); err != nil {
				return fmt.Errorf("stop %s: %w", osdName(id), err)
			}
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, downWait)
	defer cancel()
	var treeErr error
	if poll(waitCtx, 5*time.Second, func() (bool, error) {
		tree, treeErr = c.CephOSDTree(waitCtx, node)
		return treeErr == nil && upCount(tree, ids) == 0, nil // an error: ask again
	}) != nil {
		if treeErr != nil {
			return fmt.Errorf("%s not reported down within %s of stopping it: %w", osdNames(ids), downWait, treeErr)
		}
		return fmt.Errorf("%s still up %s after stopping it", osdNames(ids), downWait)
	}
	if vouch {
		if err := awaitSafeAgain(ctx, c, node, ids); err != nil {
			return err
		}
	}
	for _, id := range ids {
		if tree.OSD(id) == nil {
			continue
		}
		tflog.Info(ctx, "destroying the OSD (cleanup: its LVs are removed and the disk wiped)", map[string]any{"osd": osdName(id), "node": node})
		upid, err := c.DestroyCephOSD(ctx, node, id, true)
		_, err = c.Await(ctx, upid, err)
		invalidateOSDReads(pd, node)
		if err != nil && !strings.Contains(err.Error(), "no such OSD") {
			return fmt.Errorf("destroy %s: %w", osdName(id), err)
		}
	}
	return nil
}

// destroyOSD is Delete: identity checks, drain (unless force), stop, destroy.
func (r *osdResource) destroyOSD(ctx context.Context, st *osdModel, deadline time.Duration, diags *diag.Diagnostics) {
	node, id, force := st.Node.ValueString(), st.ID.ValueString(), st.Force.ValueBool()
	c := r.NodeClient(ctx, node, diags)
	if c == nil {
		return
	}
	unlock := r.PD.NodeLocks.Lock(osdDestroyLock)
	defer unlock()
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()

	tree, err := c.CephOSDTree(ctx, node)
	if cephNotInitialized(err) {
		return
	}
	if err != nil {
		framework.AddUnable(diags, "Delete", "Ceph OSD", id, err)
		return
	}
	live, ok := liveOSDs(ctx, tree, st, diags)
	if !ok || !verifyOSDIdentity(ctx, c, st, live[0], diags) {
		return
	}
	pgs, used := drainLoad(tree, live)
	drainStart := time.Now()
	if force {
		diags.AddWarning("Destroying "+osdNames(live)+" without draining (force = true)",
			"Ceph was not asked whether the OSD is safe to destroy: every copy of data it held is gone, and PGs whose other copies are missing lose data.")
	} else if err := drain(ctx, c, node, live, deadline); err != nil {
		framework.AddUnable(diags, "Delete", "Ceph OSD", id, err)
		return
	}
	drained := time.Since(drainStart)
	invalidateOSDReads(r.PD, node)
	if err := stopAndDestroy(ctx, r.PD, c, node, live, !force); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %s: %w", deadline, err)
		}
		framework.AddUnable(diags, "Delete", "Ceph OSD", id, err)
		return
	}
	if !force {
		addDrainReport(diags, node, live, pgs, used, drained, time.Since(drainStart))
	}
}

// liveOSDs are st's OSDs that the tree still lists; ok is false when none
// is left (nothing to destroy) or one is on another host than st's node
// (refused).
func liveOSDs(ctx context.Context, tree *pve.CephOSDTree, st *osdModel, diags *diag.Diagnostics) (live []int64, ok bool) {
	node, ids := st.Node.ValueString(), st.ids(ctx)
	for _, x := range ids {
		o := tree.OSD(x)
		if o == nil {
			continue
		}
		if o.Host != node {
			framework.RefuseDestroy(diags, "", "Ceph OSD "+st.ID.ValueString(),
				fmt.Sprintf("Ceph places %s on host %s, but this resource manages an OSD on %s. Refresh and check the configuration; nothing was changed.", o.Name, o.Host, node))
			return nil, false
		}
		live = append(live, x)
	}
	if len(live) == 0 {
		tflog.Info(ctx, "the OSD is gone already", map[string]any{"osds": osdNames(ids)})
		return nil, false
	}
	return live, true
}

// verifyOSDIdentity refuses the destroy unless the disk and the fsid of
// OSD first are still the ones in state (a missing disk passes with force).
func verifyOSDIdentity(ctx context.Context, c *pve.Client, st *osdModel, first int64, diags *diag.Diagnostics) bool {
	node, dev, id := st.Node.ValueString(), st.Device.ValueString(), st.ID.ValueString()
	disks, err := c.Disks(ctx, node, false)
	if err != nil {
		framework.AddUnable(diags, "Delete", "Ceph OSD", id, fmt.Errorf("list the disks of %s to verify the OSD's device: %w", node, err))
		return false
	}
	d := diskWithOSD(disks, first)
	switch {
	case d == nil && !st.Force.ValueBool():
		framework.RefuseDestroy(diags, "", "Ceph OSD "+id,
			fmt.Sprintf("PVE lists no disk of %s that holds %s (disks: %s), so its device (%s in state) cannot be verified. "+
				"If its disk failed or was pulled, set force = true to remove it; nothing was changed.", node, osdName(first), devPaths(disks), dev))
		return false
	case d != nil && d.DevPath != dev:
		framework.RefuseDestroy(diags, "", "Ceph OSD "+id,
			fmt.Sprintf("PVE reports %s on %s, but the state records %s. A device mismatch is never resolved by destroying an OSD: "+
				"refresh (terraform apply -refresh-only) and check which disk is which; nothing was changed.", osdName(first), d.DevPath, dev))
		return false
	}
	if uuid := st.UUID.ValueString(); uuid != "" && d != nil {
		if v, err := c.CephOSDLVInfo(ctx, node, first, "block"); err == nil && v.OSDFSID() != "" && v.OSDFSID() != uuid {
			framework.RefuseDestroy(diags, "", "Ceph OSD "+id,
				fmt.Sprintf("The fsid of %s is %s, but this resource created the OSD with fsid %s, so it is another OSD that got the same id. "+
					"Remove the resource from state (terraform state rm) if the old OSD is gone; nothing was changed.", osdName(first), v.OSDFSID(), uuid))
			return false
		}
	}
	return true
}
