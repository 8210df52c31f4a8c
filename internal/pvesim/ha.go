package pvesim

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// HA after pve-ha-manager: the API (PVE::API2::HA::Resources, Groups,
// Rules, Status) over /etc/pve/ha/{resources,groups,rules}.cfg of one
// trust domain, and a cluster resource manager (CRM) that acts at once.
//
// Releases: PVE 8.4 (ha-manager 4.0) has groups and no rules; resources
// take `group`. PVE 9.1 (ha-manager 5.x) migrated groups to node-affinity
// rules: with no group left in groups.cfg (always so here, since a
// simulated 9.1 cluster never had 8.x groups) every groups call dies with
// "cannot <verb> group: ha groups have been migrated to rules", `group` on
// a resource is refused, and /cluster/ha/rules exists (node-affinity and
// resource-affinity). 9.1 adds `failback` to resources and `purge` to
// their DELETE.
//
// The CRM: PVE's CRM reads the request state within seconds and starts or
// stops the guest through the LRM of its node. pvesim applies it inside the
// write, so a read right after it sees what PVE shows once the CRM ran:
// service state started and the VM running for `started`, stopped for
// `stopped` and `disabled`, no service entry for `ignored`. Placement
// (groups, node-affinity rules, failback) is stored and checked, but guests
// are not moved by it; migrations (`ha-manager migrate`, a hamigrate task,
// or the HAMigrate hooks standing for maintenance and the CRS) run as the
// LRM runs them (haMigrateLocked).

// haConfig is /etc/pve/ha of one trust domain plus the manager status.
type haConfig struct {
	// Resources is resources.cfg by sid ("vm:100"): options as written.
	Resources map[string]*haSection `json:"resources,omitempty"`
	// Groups is groups.cfg (8.4) by group id.
	Groups map[string]*haSection `json:"groups,omitempty"`
	// Rules is rules.cfg (9.1) by rule id; Order is its ordinal.
	Rules map[string]*haSection `json:"rules,omitempty"`
	// Services is manager_status' service_status by sid.
	Services map[string]*haService `json:"services,omitempty"`
	// MasterNode is the CRM master: the first node that got a resource.
	MasterNode string `json:"master_node,omitempty"`
	// crmDelay is how long the CRM and LRM take to act on a request
	// (SetHACRMDelay); failStart are services whose start fails
	// (SetHAStartFails). Test settings, not persisted.
	crmDelay  time.Duration
	failStart map[string]bool
	// queued is when the CRM first could see each resource it does not
	// manage yet: it takes one up at its next round (haDelay).
	queued   map[string]time.Time
	managing bool // haTickLocked runs a round for what was queued
}

// haSection is one section of a section config: its type and options as
// the file keeps them (strings).
type haSection struct {
	Type  string            `json:"type"`
	Order int               `json:"order,omitempty"`
	Opts  map[string]string `json:"opts"`
}

// haService is one service_status entry of manager_status.
type haService struct {
	Node    string `json:"node"`
	State   string `json:"state"`
	Running bool   `json:"running,omitempty"`
	UID     string `json:"uid"`
	// Target is the state the CRM is bringing the service to since Since.
	Target string    `json:"target,omitempty"`
	Since  time.Time `json:"since,omitempty"`
	// MigrateTo is the target node while the service is in state
	// `migrate` or `relocate` (manager_status' `target`).
	MigrateTo string `json:"migrate_to,omitempty"`
}

// haIntKeys are options whose schema type is integer or boolean: the API
// returns them as numbers.
var haIntKeys = map[string]bool{
	"max_restart": true, "max_relocate": true, "failback": true, "restricted": true, "nofailback": true,
	"strict": true, "disable": true,
}

var (
	haResourceIDRE     = regexp.MustCompile(`^[a-z]+:\S+$`)
	haResourceOrVMIDRE = regexp.MustCompile(`^([a-z]+:\S+|\d+)$`)
	haNodeRE           = regexp.MustCompile(`^([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)(:\d+)?$`)
	haSidRE            = regexp.MustCompile(`^(\S+):(\S+)$`)
	haVMIDNameRE       = regexp.MustCompile(`^[1-9][0-9]+$`)
)

func haListFormat(re *regexp.Regexp, msg string) func(string) string {
	return func(v string) string {
		for _, item := range splitList(v) {
			if !re.MatchString(item) {
				return msg
			}
		}
		return ""
	}
}

func pHASid() param {
	return param{typ: tString, formatFn: func(v string) string {
		if !haResourceOrVMIDRE.MatchString(v) {
			return "value does not look like a valid ha resource id"
		}
		return ""
	}}
}

func pHANodeList(rel pveRelease) param {
	if rel.atLeast9() {
		return param{typ: tString, optional: true, formatFn: haListFormat(haNodeRE, "value does not look like a valid ha node")}
	}
	return param{typ: tString, optional: true, formatFn: haListFormat(haNodeRE, "value does not look like a valid ha group node")}
}

func pComment() param { return pStr().maxLen(4096) }

func registerHA(t *routeTable) {
	rel := t.rel
	t.add("GET", "/cluster/ha", &method{params: schema{}, handler: func(c *call) (any, *apiError) {
		if c.s.rel.atLeast9() {
			return subdirs("resources", "rules", "status"), nil
		}
		return subdirs("groups", "resources", "status"), nil
	}})

	resOpts := func(create bool) schema {
		sc := schema{
			"sid":          pHASid(),
			"state":        pEnum("started", "stopped", "enabled", "disabled", "ignored"),
			"group":        pFmt("pve-configid"),
			"max_restart":  pInt(i64(0), nil),
			"max_relocate": pInt(i64(0), nil),
			"comment":      pComment(),
		}
		if rel.atLeast9() {
			sc["failback"] = pBool()
		}
		if create {
			sc["type"] = pEnum("ct", "vm")
		} else {
			sc["digest"] = pStr().maxLen(64)
			sc["delete"] = pFmt("pve-configid-list").maxLen(4096)
		}
		return sc
	}
	t.add("GET", "/cluster/ha/resources", &method{params: schema{"type": pEnum("ct", "vm")}, handler: haListResources})
	t.add("POST", "/cluster/ha/resources", &method{params: resOpts(true), handler: haCreateResource})
	t.add("GET", "/cluster/ha/resources/{sid}", &method{params: schema{"sid": pHASid()}, handler: haReadResource})
	t.add("PUT", "/cluster/ha/resources/{sid}", &method{params: resOpts(false), handler: haUpdateResource})
	delParams := schema{"sid": pHASid()}
	if rel.atLeast9() {
		delParams["purge"] = pBool()
	}
	t.add("DELETE", "/cluster/ha/resources/{sid}", &method{params: delParams, handler: haDeleteResource})

	groupOpts := func(create bool) schema {
		sc := schema{
			"group":      pFmt("pve-configid").req(),
			"nodes":      pHANodeList(rel),
			"restricted": pBool(),
			"nofailback": pBool(),
			"comment":    pComment(),
		}
		if create {
			sc["nodes"] = sc["nodes"].req()
			sc["type"] = pEnum("group")
		} else {
			sc["digest"] = pStr().maxLen(64)
			sc["delete"] = pFmt("pve-configid-list").maxLen(4096)
		}
		return sc
	}
	t.add("GET", "/cluster/ha/groups", &method{params: schema{}, handler: haListGroups})
	t.add("POST", "/cluster/ha/groups", &method{params: groupOpts(true), handler: haCreateGroup})
	t.add("GET", "/cluster/ha/groups/{group}", &method{params: schema{"group": pFmt("pve-configid").req()}, handler: haReadGroup})
	t.add("PUT", "/cluster/ha/groups/{group}", &method{params: groupOpts(false), handler: haUpdateGroup})
	t.add("DELETE", "/cluster/ha/groups/{group}", &method{params: schema{"group": pFmt("pve-configid").req()}, handler: haDeleteGroup})

	if rel.atLeast9() {
		ruleOpts := func(create bool) schema {
			sc := schema{
				"rule":      pFmt("pve-configid").req(),
				"type":      pEnum("node-affinity", "resource-affinity").req(),
				"resources": param{typ: tString, formatFn: haListFormat(haResourceIDRE, "value does not look like a valid ha resource id")},
				"nodes":     pHANodeList(rel),
				"strict":    pBool(),
				"affinity":  pEnum("positive", "negative"),
				"disable":   pBool(),
				"comment":   pComment(),
			}
			if !create {
				r := sc["resources"]
				r.optional = true
				sc["resources"] = r
				sc["digest"] = pStr().maxLen(64)
				sc["delete"] = pFmt("pve-configid-list").maxLen(4096)
			}
			return sc
		}
		t.add("GET", "/cluster/ha/rules", &method{params: schema{
			"type": pEnum("node-affinity", "resource-affinity"), "resource": pStr(),
		}, handler: haListRules})
		t.add("POST", "/cluster/ha/rules", &method{params: ruleOpts(true), handler: haCreateRule})
		t.add("GET", "/cluster/ha/rules/{rule}", &method{params: schema{"rule": pFmt("pve-configid").req()}, handler: haReadRule})
		t.add("PUT", "/cluster/ha/rules/{rule}", &method{params: ruleOpts(false), handler: haUpdateRule})
		t.add("DELETE", "/cluster/ha/rules/{rule}", &method{params: schema{"rule": pFmt("pve-configid").req()}, handler: haDeleteRule})
	}

	t.add("GET", "/cluster/ha/status", &method{params: schema{}, handler: func(*call) (any, *apiError) {
		return subdirs("current", "manager_status"), nil
	}})
	t.add("GET", "/cluster/ha/status/current", &method{params: schema{}, handler: haStatusCurrent})
	t.add("GET", "/cluster/ha/status/manager_status", &method{params: schema{}, handler: haManagerStatus})
}

// haOf is the trust domain's /etc/pve/ha.
func haOf(c *call) *haConfig {
	d := c.s.domainFor(c.listener)
	if d.HA == nil {
		d.HA = &haConfig{}
	}
	h := d.HA
	if h.Resources == nil {
		h.Resources = map[string]*haSection{}
	}
	if h.Groups == nil {
		h.Groups = map[string]*haSection{}
	}
	if h.Rules == nil {
		h.Rules = map[string]*haSection{}
	}
	if h.Services == nil {
		h.Services = map[string]*haService{}
	}
	return h
}

// haDigest is the SHA1 of the section config file as PVE writes it.
func haDigest(sections map[string]*haSection, header func(id string, s *haSection) string) string {
	ids := make([]string, 0, len(sections))
	for id := range sections {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if sections[ids[i]].Order != sections[ids[j]].Order {
			return sections[ids[i]].Order < sections[ids[j]].Order
		}
		return ids[i] < ids[j]
	})
	var b strings.Builder
	for _, id := range ids {
		s := sections[id]
		b.WriteString(header(id, s))
		keys := make([]string, 0, len(s.Opts))
		for k := range s.Opts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "\t%s %s\n", k, s.Opts[k])
		}
		b.WriteString("\n")
	}
	sum := sha1.Sum([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

func resourcesDigest(h *haConfig) string {
	return haDigest(h.Resources, func(id string, s *haSection) string {
		_, name, _ := strings.Cut(id, ":")
		return s.Type + ": " + name + "\n"
	})
}

func groupsDigest(h *haConfig) string {
	return haDigest(h.Groups, func(id string, s *haSection) string { return "group: " + id + "\n" })
}

func rulesDigest(h *haConfig) string {
	return haDigest(h.Rules, func(id string, s *haSection) string { return s.Type + ": " + id + "\n" })
}

// haView renders a section's options as the API returns them.
func haView(s *haSection) map[string]any {
	out := map[string]any{"type": s.Type}
	for k, v := range s.Opts {
		if haIntKeys[k] {
			if n, err := strconv.Atoi(v); err == nil {
				out[k] = n
				continue
			}
		}
		out[k] = v
	}
	return out
}

const modifiedConfig = "detected modified configuration - file changed by other user? Try again."

// groupsMigrated is have_groups_been_migrated: true on 9.x, where the
// simulated groups.cfg is always empty.
func groupsMigrated(c *call) bool { return c.s.rel.atLeast9() }

// checkCfsQuorum is PVE::Cluster::check_cfs_quorum: creates need a
// quorate cluster (/etc/pve is read-only without quorum).
func checkCfsQuorum(c *call) *apiError {
	cc := c.s.clusterOf(c.listener)
	if cc != nil && !c.s.quorate(c.s.st.Nodes[c.listener].Domain, cc) {
		return die("cluster not ready - no quorum?")
	}
	return nil
}

// parseSid is PVE::HA::Config::parse_sid.
func parseSid(c *call, sid string) (string, string, string, *apiError) {
	if integerRE.MatchString(sid) && !strings.ContainsAny(sid, "+-") {
		id, _ := strconv.Atoi(sid)
		if node, _ := c.s.guestNodeLocked(c.listener, id); node != "" {
			return "vm:" + sid, "vm", sid, nil
		}
		return "", "", "", die("unable to detect SID from VMID - VM/CT %s does not exist", sid)
	}
	m := haSidRE.FindStringSubmatch(sid)
	if m == nil {
		return "", "", "", die("unable to parse service id '%s'", sid)
	}
	return sid, m[1], m[2], nil
}

// haResourceOptions are the options a resource type takes.
func haResourceOptions(c *call) map[string]bool {
	o := map[string]bool{"state": true, "group": true, "comment": true, "max_restart": true, "max_relocate": true}
	if c.s.rel.atLeast9() {
		o["failback"] = true
	}
	return o
}

func haListResources(c *call) (any, *apiError) {
	h := haOf(c)
	out := []map[string]any{}
	for _, sid := range sortedKeys(h.Resources) {
		r := h.Resources[sid]
		if t := c.params["type"]; t != "" && t != r.Type {
			continue
		}
		v := haResourceView(c, h, sid)
		if g := r.Opts["group"]; g != "" && !groupsMigrated(c) && h.Groups[g] == nil {
			v["errors"] = map[string]any{"group": fmt.Sprintf("group '%s' does not exist", g)}
		}
		out = append(out, v)
	}
	return out, nil
}

func haResourceView(c *call, h *haConfig, sid string) map[string]any {
	v := haView(h.Resources[sid])
	v["sid"] = sid
	v["digest"] = resourcesDigest(h)
	if groupsMigrated(c) {
		delete(v, "group")
	}
	return v
}

func haReadResource(c *call) (any, *apiError) {
	h := haOf(c)
	sid, _, _, aerr := parseSid(c, c.params["sid"])
	if aerr != nil {
		return nil, aerr
	}
	if h.Resources[sid] == nil {
		return nil, die("no such resource '%s'", sid)
	}
	return haResourceView(c, h, sid), nil
}

// haCheckName is the resource plugin's lookup, verify_name and exists.
func haCheckName(c *call, typ, name string) *apiError {
	if typ != "vm" && typ != "ct" {
		return die("unknown section type '%s'", typ)
	}
	if !haVMIDNameRE.MatchString(name) {
		return die("invalid VMID")
	}
	id, _ := strconv.Atoi(name)
	node, _ := c.s.guestNodeLocked(c.listener, id)
	if node == "" {
		return die("resource '%s:%s' does not exist in cluster", typ, name)
	}
	if typ == "ct" {
		// The simulator's guests are all VMs.
		return die("resource 'ct:%s' - guest with ID %s is not a CT", name, name)
	}
	return nil
}

func haCreateResource(c *call) (any, *apiError) {
	if aerr := checkCfsQuorum(c); aerr != nil {
		return nil, aerr
	}
	sid, typ, name, aerr := parseSid(c, c.params["sid"])
	if aerr != nil {
		return nil, aerr
	}
	if pt := c.params["type"]; pt != "" && pt != typ {
		return nil, die("types does not match")
	}
	if _, ok := c.params["group"]; ok && groupsMigrated(c) {
		return nil, die("invalid parameter 'group': ha groups have been migrated to rules")
	}
	if aerr := haCheckName(c, typ, name); aerr != nil {
		return nil, aerr
	}
	h := haOf(c)
	if h.Resources[sid] != nil {
		return nil, die("create resource failed: resource ID '%s' already defined", sid)
	}
	opts := map[string]string{}
	for k := range haResourceOptions(c) {
		if v, ok := c.params[k]; ok {
			opts[k] = v
		}
	}
	h.Resources[sid] = &haSection{Type: typ, Opts: opts}
	c.s.haManageLocked(c.listener, h)
	c.s.saveLocked()
	return nil, nil
}

func haUpdateResource(c *call) (any, *apiError) {
	sid, typ, _, aerr := parseSid(c, c.params["sid"])
	if aerr != nil {
		return nil, aerr
	}
	if pt := c.params["type"]; pt != "" && pt != typ {
		return nil, die("types does not match")
	}
	h := haOf(c)
	if g := c.params["group"]; g != "" {
		if groupsMigrated(c) {
			return nil, die("invalid parameter 'group': ha groups have been migrated to rules")
		}
		if h.Groups[g] == nil {
			return nil, die("HA group '%s' does not exist", g)
		}
	}
	c.s.haTickLocked(h)
	if svc := h.Services[sid]; svc != nil && svc.State == "error" && c.params["state"] != "disabled" {
		return nil, die("service '%s' in error state, must be disabled and fixed first", sid)
	}
	if d, ok := c.params["digest"]; ok && d != resourcesDigest(h) {
		return nil, die("update resources config failed: %s", modifiedConfig)
	}
	r := h.Resources[sid]
	if r == nil {
		return nil, die("update resources config failed: no such resource '%s'", sid)
	}
	opts := haResourceOptions(c)
	next := map[string]string{}
	for k, v := range r.Opts {
		next[k] = v
	}
	for k := range opts {
		if v, ok := c.params[k]; ok {
			next[k] = v
		}
	}
	for _, k := range splitList(c.params["delete"]) {
		if !opts[k] {
			return nil, die("update resources config failed: no such option '%s'", k)
		}
		delete(next, k)
	}
	r.Opts = next
	c.s.haManageLocked(c.listener, h)
	c.s.saveLocked()
	return nil, nil
}

func haDeleteResource(c *call) (any, *apiError) {
	sid, _, _, aerr := parseSid(c, c.params["sid"])
	if aerr != nil {
		return nil, aerr
	}
	h := haOf(c)
	if h.Resources[sid] == nil {
		return nil, die("cannot delete service '%s', not HA managed!", sid)
	}
	delete(h.Resources, sid)
	if c.s.rel.atLeast9() && c.params["purge"] != "0" {
		haPurgeFromRules(h, sid)
	}
	// The CRM drops the service; the guest keeps running as it is.
	c.s.haManageLocked(c.listener, h)
	c.s.saveLocked()
	return nil, nil
}

// HA status (PVE/API2/HA/Status.pm).

func haStatusCurrent(c *call) (any, *apiError) {
	h := haOf(c)
	c.s.haTickLocked(h)
	now := time.Now()
	stamp := now.Format("Mon Jan  2 15:04:05 2006")
	out := []map[string]any{{"id": "quorum", "type": "quorum", "node": c.listener, "status": "OK", "quorate": 1}}
	nodes := c.s.visibleNodeNames(c.listener)
	if h.MasterNode != "" {
		out = append(out, map[string]any{
			"id": "master", "type": "master", "node": h.MasterNode,
			"status": fmt.Sprintf("%s (active, %s)", h.MasterNode, stamp), "timestamp": now.Unix(),
		})
		for _, n := range nodes {
			active := 0
			for _, svc := range h.Services {
				if svc.Node == n {
					active++
				}
			}
			mode := "idle"
			if active > 0 {
				mode = "active"
			}
			out = append(out, map[string]any{
				"id": "lrm:" + n, "type": "lrm", "node": n,
				"status": fmt.Sprintf("%s (%s, %s)", n, mode, stamp), "timestamp": now.Unix(),
			})
		}
	}
	for _, sid := range sortedKeys(h.Resources) {
		r := h.Resources[sid]
		req := r.Opts["state"]
		if req == "" || req == "enabled" {
			req = "started"
		}
		e := map[string]any{"id": "service:" + sid, "type": "service", "sid": sid, "request_state": req}
		for _, k := range []string{"max_restart", "max_relocate"} {
			e[k] = 1
			if v, err := strconv.Atoi(r.Opts[k]); err == nil {
				e[k] = v
			}
		}
		if c.s.rel.atLeast9() {
			e["failback"] = 1
			if r.Opts["failback"] == "0" {
				e["failback"] = 0
			}
		}
		svc := h.Services[sid]
		_, name, _ := strings.Cut(sid, ":")
		id, _ := strconv.Atoi(name)
		guestNode, _ := c.s.guestNodeLocked(c.listener, id)
		switch {
		case req == "ignored":
			e["state"] = "ignored"
			e["node"] = guestNode
		case guestNode == "":
			e["state"] = "not found"
			e["node"] = "---"
		case svc == nil:
			e["state"] = "queued"
			e["node"] = guestNode
		default:
			e["node"] = svc.Node
			e["crm_state"] = svc.State
			e["state"] = haVerboseState(svc, req)
		}
		e["status"] = fmt.Sprintf("%s (%s, %s)", sid, e["node"], e["state"])
		out = append(out, e)
	}
	return out, nil
}

func haManagerStatus(c *call) (any, *apiError) {
	h := haOf(c)
	c.s.haTickLocked(h)
	ms := map[string]any{}
	if h.MasterNode != "" {
		ns := map[string]any{}
		for _, n := range c.s.visibleNodeNames(c.listener) {
			ns[n] = "online"
		}
		ss := map[string]any{}
		for sid, svc := range h.Services {
			e := map[string]any{"node": svc.Node, "state": svc.State, "uid": svc.UID}
			if svc.MigrateTo != "" {
				e["target"] = svc.MigrateTo
			}
			if svc.Running {
				e["running"] = 1
			}
			ss[sid] = e
		}
		ms = map[string]any{
			"master_node": h.MasterNode, "node_status": ns, "service_status": ss, "timestamp": time.Now().Unix(),
		}
	}
	return map[string]any{
		"manager_status": ms,
		"quorum":         map[string]any{"node": c.listener, "quorate": "1"},
	}, nil
}
