package ceph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Ceph's command line over SSH: what the PVE API does not offer (the
// config database's writes, group flags, ok-to-stop for several OSDs,
// systemd units). Every value is one argv element; nodeexec quotes it.

// cephCLI runs `ceph` on one node with the admin keyring.
type cephCLI struct {
	ex   *nodeexec.Pool
	node string
}

func (c cephCLI) run(ctx context.Context, args ...string) (*nodeexec.Result, error) {
	return c.ex.Run(ctx, c.node, nodeexec.Cmd("ceph", args...))
}

// json runs a ceph command with --format json and decodes its output.
func (c cephCLI) json(ctx context.Context, v any, args ...string) error {
	res, err := c.run(ctx, append(args, "--format", "json")...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res.Stdout, v); err != nil {
		return fmt.Errorf("node %s: ceph %s: unexpected output %q: %w", c.node, strings.Join(args, " "), shorten(res.Stdout), err)
	}
	return nil
}

func shorten(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// configEntry is one entry of `ceph config dump`.
type configEntry struct {
	Section, Name, Value, Mask string
}

func (c cephCLI) configDump(ctx context.Context) ([]configEntry, error) {
	var wire []struct {
		Section string `json:"section"`
		Name    string `json:"name"`
		Value   string `json:"value"`
		Mask    string `json:"mask"`
	}
	if err := c.json(ctx, &wire, "config", "dump"); err != nil {
		return nil, err
	}
	out := make([]configEntry, 0, len(wire))
	for _, w := range wire {
		out = append(out, configEntry{Section: w.Section, Name: w.Name, Value: w.Value, Mask: w.Mask})
	}
	return out, nil
}

// optionInfo is what `ceph config help` says about an option.
type optionInfo struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Services []string `json:"services"`
	// Flags holds "runtime" when running daemons observe a change. Not
	// can_update_at_runtime: Ceph says true there for every number and
	// bool, observed or not (bdev_enable_discard takes effect only when
	// the OSD restarts; real Ceph, make testlab).
	Flags []string `json:"flags"`
}

// observed reports whether running daemons apply a change of the option.
func (o *optionInfo) observed() bool { return containsString(o.Flags, "runtime") }

// optionHelp returns the option's description, or nil when Ceph does not
// know it (ENOENT).
func (c cephCLI) optionHelp(ctx context.Context, name string) (*optionInfo, error) {
	res, err := c.ex.Run(ctx, c.node, nodeexec.Cmd("ceph", "config", "help", name, "--format", "json").AcceptExit(2))
	if err != nil {
		return nil, err
	}
	if res.ExitCode == 2 {
		return nil, nil
	}
	var o optionInfo
	if err := json.Unmarshal(res.Stdout, &o); err != nil {
		return nil, fmt.Errorf("node %s: ceph config help %s: unexpected output %q", c.node, name, shorten(res.Stdout))
	}
	return &o, nil
}

// cephHealth is Ceph's health: its status (HEALTH_OK, HEALTH_WARN,
// HEALTH_ERR) and each check's severity and message.
type cephHealth struct {
	Status string
	Checks map[string]string
}

// healthWire is the health in `ceph health` and in `ceph status`.
type healthWire struct {
	Status string `json:"status"`
	Checks map[string]struct {
		Severity string `json:"severity"`
		Summary  struct {
			Message string `json:"message"`
		} `json:"summary"`
	} `json:"checks"`
}

func (w healthWire) health() cephHealth {
	checks := map[string]string{}
	for k, v := range w.Checks {
		checks[k] = v.Severity + ": " + v.Summary.Message
	}
	return cephHealth{Status: w.Status, Checks: checks}
}

// health is `ceph health`.
func (c cephCLI) health(ctx context.Context) (cephHealth, error) {
	var wire healthWire
	if err := c.json(ctx, &wire, "health"); err != nil {
		return cephHealth{}, err
	}
	return wire.health(), nil
}

// osdDump is the part of `ceph osd dump` the restart needs.
type osdDump struct {
	Flags          string              `json:"flags"`
	CrushNodeFlags map[string][]string `json:"crush_node_flags"`
	OSDs           []struct {
		OSD   int      `json:"osd"`
		Up    int      `json:"up"`
		In    int      `json:"in"`
		State []string `json:"state"`
	} `json:"osds"`
}

func (d *osdDump) flagSet(f string) bool {
	for _, x := range strings.Split(d.Flags, ",") {
		if x == f {
			return true
		}
	}
	return false
}

func (d *osdDump) up(id int) bool {
	for _, o := range d.OSDs {
		if o.OSD == id {
			return o.Up == 1
		}
	}
	return false
}

func (c cephCLI) osdDump(ctx context.Context) (*osdDump, error) {
	var d osdDump
	if err := c.json(ctx, &d, "osd", "dump"); err != nil {
		return nil, err
	}
	return &d, nil
}

// okToStop is `ceph osd ok-to-stop`: exit 0 when the OSDs can stop without
// any PG going below min_size, EBUSY (16) or EAGAIN (11) with Ceph's
// reason otherwise.
func (c cephCLI) okToStop(ctx context.Context, ids []int) (bool, string, error) {
	args := []string{"osd", "ok-to-stop"}
	for _, id := range ids {
		args = append(args, strconv.Itoa(id))
	}
	res, err := c.ex.Run(ctx, c.node, nodeexec.Cmd("ceph", args...).AcceptExit(11, 16))
	if err != nil {
		return false, "", err
	}
	return res.ExitCode == 0, strings.TrimSpace(string(res.Stderr)), nil
}

// monOkToStop is `ceph mon ok-to-stop`.
func (c cephCLI) monOkToStop(ctx context.Context, id string) (bool, string, error) {
	res, err := c.ex.Run(ctx, c.node, nodeexec.Cmd("ceph", "mon", "ok-to-stop", id).AcceptExit(11, 16))
	if err != nil {
		return false, "", err
	}
	return res.ExitCode == 0, strings.TrimSpace(string(res.Stderr)), nil
}

func (c cephCLI) quorumNames(ctx context.Context) ([]string, error) {
	var q struct {
		Names []string `json:"quorum_names"`
	}
	err := c.json(ctx, &q, "quorum_status")
	return q.Names, err
}

// mgrRunning reports whether manager id is active or a standby.
func (c cephCLI) mgrRunning(ctx context.Context, id string) (bool, error) {
	var d struct {
		Available bool   `json:"available"`
		Active    string `json:"active_name"`
		Standbys  []struct {
			Name string `json:"name"`
		} `json:"standbys"`
	}
	if err := c.json(ctx, &d, "mgr", "dump"); err != nil {
		return false, err
	}
	if d.Available && d.Active == id {
		return true, nil
	}
	for _, s := range d.Standbys {
		if s.Name == id {
			return d.Available, nil
		}
	}
	return false, nil
}

// pgsActiveClean reports whether every PG is active+clean, and the health
// that came with the answer (`ceph status` carries both).
func (c cephCLI) pgsActiveClean(ctx context.Context) (bool, string, cephHealth, error) {
	var st struct {
		Health healthWire `json:"health"`
		PGMap  struct {
			ByState []struct {
				Name  string `json:"state_name"`
				Count int    `json:"count"`
			} `json:"pgs_by_state"`
		} `json:"pgmap"`
	}
	if err := c.json(ctx, &st, "status"); err != nil {
		return false, "", cephHealth{}, err
	}
	var other []string
	for _, s := range st.PGMap.ByState {
		parts := strings.Split(s.Name, "+")
		active, clean := false, false
		for _, p := range parts {
			active = active || p == "active"
			clean = clean || p == "clean"
		}
		if !active || !clean || len(parts) != 2 {
			other = append(other, fmt.Sprintf("%d %s", s.Count, s.Name))
		}
	}
	sort.Strings(other)
	return len(other) == 0, strings.Join(other, ", "), st.Health.health(), nil
}

// isInvalidCommand reports Ceph's answer to a command it does not know.
func isInvalidCommand(err error) bool {
	var e *nodeexec.Error
	return errors.As(err, &e) && e.ExitCode == 22 && strings.Contains(e.Stderr, "invalid command")
}

// ---- daemons and their units ----

// cephDaemon is a daemon the provider may restart: its kind (mon, mgr,
// osd), id and host.
type cephDaemon struct {
	Kind, ID, Host string
}

func (d cephDaemon) Name() string { return d.Kind + "." + d.ID }
func (d cephDaemon) Unit() string { return "ceph-" + d.Kind + "@" + d.ID + ".service" }

func (d cephDaemon) osdID() int {
	n, _ := strconv.Atoi(d.ID)
	return n
}

// daemonKinds are the kinds the provider restarts, in restart order.
var daemonKinds = []string{"mon", "mgr", "osd"}

// cephTopology lists the cluster's monitors, managers and OSDs with their
// hosts, through the API.
func cephTopology(ctx context.Context, c *pve.Client, node string) ([]cephDaemon, error) {
	var out []cephDaemon
	mons, err := c.CephMons(ctx, node)
	if err != nil {
		return nil, fmt.Errorf("list Ceph monitors: %w", err)
	}
	for _, m := range mons {
		out = append(out, cephDaemon{Kind: "mon", ID: m.Name, Host: m.Host})
	}
	mgrs, err := c.CephMgrs(ctx, node)
	if err != nil {
		return nil, fmt.Errorf("list Ceph managers: %w", err)
	}
	for _, m := range mgrs {
		out = append(out, cephDaemon{Kind: "mgr", ID: m.Name, Host: m.Host})
	}
	tree, err := c.CephOSDTree(ctx, node)
	if err != nil {
		return nil, fmt.Errorf("read the Ceph OSD tree: %w", err)
	}
	for _, o := range tree.OSDs {
		out = append(out, cephDaemon{Kind: "osd", ID: strconv.FormatInt(o.ID, 10), Host: o.Host})
	}
	sortDaemons(out)
	return out, nil
}

// sortDaemons orders by kind (restart order), host, then id.
func sortDaemons(ds []cephDaemon) {
	rank := func(k string) int {
		for i, x := range daemonKinds {
			if x == k {
				return i
			}
		}
		return len(daemonKinds)
	}
	sort.Slice(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Kind != b.Kind {
			return rank(a.Kind) < rank(b.Kind)
		}
		if a.Host != b.Host {
			return a.Host < b.Host
		}
		if a.Kind == "osd" {
			return a.osdID() < b.osdID()
		}
		return a.ID < b.ID
	})
}

// affectedDaemons are the daemons that read a setting of section who that
// the given daemon kinds use (nil: every kind).
func affectedDaemons(all []cephDaemon, who string, kinds []string) []cephDaemon {
	sec, id, hasID := strings.Cut(who, ".")
	var out []cephDaemon
	for _, d := range all {
		if kinds != nil && !containsString(kinds, d.Kind) {
			continue
		}
		switch {
		case sec == "global":
		case sec != d.Kind:
			continue
		case hasID && id != d.ID:
			continue
		}
		out = append(out, d)
	}
	return out
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// unitStarts returns each unit's ActiveEnterTimestamp on host: it changes
// exactly when the unit (re)starts.
func unitStarts(ctx context.Context, ex *nodeexec.Pool, host string, units []string) (map[string]string, error) {
	args := []string{"show", "--timestamp=us+utc", "-p", "Id", "-p", "ActiveEnterTimestamp"}
	res, err := ex.Run(ctx, host, nodeexec.Cmd("systemctl", append(args, units...)...))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	id := ""
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "Id":
			id = v
		case "ActiveEnterTimestamp":
			if id != "" {
				out[id] = v
			}
		}
	}
	return out, nil
}

// unitStates returns each unit's ActiveState (systemctl is-active).
func unitStates(ctx context.Context, ex *nodeexec.Pool, host string, units []string) (map[string]string, error) {
	res, err := ex.Run(ctx, host, nodeexec.Cmd("systemctl", append([]string{"is-active"}, units...)...).AcceptExit(3))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if len(lines) != len(units) {
		return nil, fmt.Errorf("node %s: systemctl is-active answered %q for %d units", host, res.Stdout, len(units))
	}
	out := map[string]string{}
	for i, u := range units {
		out[u] = strings.TrimSpace(lines[i])
	}
	return out, nil
}

// daemonStarts returns the ActiveEnterTimestamp of each daemon's unit,
// one SSH command per host.
func daemonStarts(ctx context.Context, ex *nodeexec.Pool, ds []cephDaemon) (map[string]string, error) {
	byHost := map[string][]cephDaemon{}
	for _, d := range ds {
		byHost[d.Host] = append(byHost[d.Host], d)
	}
	out := map[string]string{}
	for _, h := range sortedHosts(byHost) {
		var units []string
		for _, d := range byHost[h] {
			units = append(units, d.Unit())
		}
		starts, err := unitStarts(ctx, ex, h, units)
		if err != nil {
			return nil, err
		}
		for _, d := range byHost[h] {
			out[d.Name()] = starts[d.Unit()]
		}
	}
	return out, nil
}

func sortedHosts[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for h := range m {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}
