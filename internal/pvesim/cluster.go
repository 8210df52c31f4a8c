package pvesim

import (
	//nolint:gosec // PVE's config_digest is a SHA-1 of corosync.conf

	"fmt"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

const (
	corosyncConfPath = "/etc/pve/corosync.conf"
	corosyncAuthKey  = "/etc/corosync/authkey"
	maxLinkIndex     = 7
	joinAPIVersion   = 1
)

// hostIP is what the node's name resolves to (/etc/hosts): the lab's
// management address, or without a lab the reference lab's.
func (s *Sim) hostIP(node string) string {
	if ns := s.st.Nodes[node]; ns != nil && ns.Mgmt != nil {
		return ns.Mgmt.Address
	}
	for i, n := range s.st.NodeOrder {
		if n == node {
			return fmt.Sprintf("172.27.2.%d", 10+i)
		}
	}
	return ""
}

// clusterOf returns the corosync config the node's /etc/pve holds, or nil.
func (s *Sim) clusterOf(node string) *corosyncConf {
	ns := s.st.Nodes[node]
	if ns == nil {
		return nil
	}
	return s.st.Domains[ns.Domain].Cluster
}

// memberOnline reports whether a nodelist entry is an up member of the
// cluster held by domain: a simulated node in that domain, powered on.
func (s *Sim) memberOnline(domain, name string) bool {
	ns := s.st.Nodes[name]
	return ns != nil && ns.Domain == domain && !s.offline[name]
}

// quorate is votequorum's rule: more than half of all configured votes.
func (s *Sim) quorate(domain string, cc *corosyncConf) bool {
	var total, online int64
	for _, n := range cc.Nodes {
		total += n.Votes
		if s.memberOnline(domain, n.Name) {
			online += n.Votes
		}
	}
	return online*2 > total
}

// proxyError is the answer for /nodes/{n}/... on listener when n cannot be
// reached from there, or nil.
func (s *Sim) proxyError(listener, n string) *apiError {
	if n == listener {
		return nil
	}
	lookup := die("hostname lookup '%s' failed - failed to get address info for: %s: Name or service not known", n, n)
	cc := s.clusterOf(listener)
	if cc == nil || cc.Nodes[n] == nil {
		return lookup
	}
	if s.st.Nodes[n] == nil {
		return lookup
	}
	if !s.memberOnline(s.st.Nodes[listener].Domain, n) {
		return errf(595, "No route to host")
	}
	// pveproxy proxies to the node's cluster address, its management
	// address in a lab: a node a reload cut off never answers, and
	// AnyEvent::HTTP gives up with 595 (after its 30 s, here at once).
	if ok, _ := s.st.Nodes[n].reachableOnLink(); !ok {
		return errf(595, "Connection timed out")
	}
	return nil
}

// visibleNodeNames are the nodes a listener lists: the cluster's nodelist,
// or itself when standalone.
func (s *Sim) visibleNodeNames(listener string) []string {
	cc := s.clusterOf(listener)
	if cc == nil {
		return []string{listener}
	}
	var out []string
	for _, n := range cc.sortedNodes() {
		out = append(out, n.Name)
	}
	return out
}

// newClusterConf is corosync.conf for a cluster of all nodes (Options.ClusterName).
func (s *Sim) newClusterConf(name string, nodes []string) *corosyncConf {
	cc := &corosyncConf{Name: name, ConfigVersion: 1, Links: map[int]int64{0: 0}, Nodes: map[string]*corosyncNode{}}
	for i, n := range nodes {
		cc.Nodes[n] = &corosyncNode{Name: n, NodeID: int64(i + 1), Votes: 1, Rings: map[int]string{0: s.hostIP(n)}}
	}
	return cc
}

// migrateClusterState gives states saved before clusters were per domain
// their corosync config.
func migrateClusterState(st *simState) {
	if st.ClusterName == "" {
		return
	}
	for _, d := range st.Domains {
		if d.Cluster != nil {
			return
		}
	}
	d := st.Domains["cluster"]
	if d == nil {
		return
	}
	tmp := &Sim{st: st}
	var members []string
	for _, n := range st.NodeOrder {
		if st.Nodes[n].Domain == "cluster" {
			members = append(members, n)
		}
	}
	d.Cluster = tmp.newClusterConf(st.ClusterName, members)
}

var dnsNameRE = regexp.MustCompile(`^(?i:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*)$`)

func registerCluster(t *routeTable) {
	t.add("GET", "/cluster/config", &method{params: schema{}, handler: func(*call) (any, *apiError) {
		return []map[string]string{{"name": "nodes"}, {"name": "totem"}, {"name": "join"}, {"name": "qdevice"}, {"name": "apiversion"}}, nil
	}})
	createParams := schema{
		"clustername": pFmt("pve-node").req().maxLen(15),
		"nodeid":      pInt(i64(1), nil),
		"votes":       pInt(i64(1), nil),
	}
	if t.rel.atLeast9() {
		createParams["token-coefficient"] = pInt(i64(0), nil)
	}
	t.add("POST", "/cluster/config", &method{rootOnly: true, params: linkParams(createParams), handler: createCluster})
	t.add("GET", "/cluster/config/apiversion", &method{params: schema{}, handler: func(*call) (any, *apiError) {
		return joinAPIVersion, nil
	}})
	t.add("GET", "/cluster/config/nodes", &method{params: schema{}, handler: clusterConfigNodes})
	t.add("POST", "/cluster/config/nodes/{node}", &method{rootOnly: true, params: linkParams(schema{
		"node":        nodeParam(),
		"nodeid":      pInt(i64(1), nil),
		"votes":       pInt(i64(0), nil),
		"force":       pBool(),
		"new_node_ip": pFmt("ip"),
		"apiversion":  pInt(nil, nil),
	}), handler: addNodeHandler})
	t.add("DELETE", "/cluster/config/nodes/{node}", &method{rootOnly: true, params: schema{"node": nodeParam()}, handler: deleteClusterNode})
	t.add("GET", "/cluster/config/join", &method{params: schema{"node": pFmt("pve-node")}, handler: joinInfo})
	t.add("POST", "/cluster/config/join", &method{rootOnly: true, params: linkParams(schema{
		"hostname":    pStr().req(),
		"nodeid":      pInt(i64(1), nil),
		"votes":       pInt(i64(0), nil),
		"force":       pBool(),
		"fingerprint": param{typ: tString, pattern: fingerprintRE},
		"password":    pStr().req().maxLen(128),
	}), handler: joinCluster})
	t.add("GET", "/cluster/config/totem", &method{params: schema{}, handler: func(c *call) (any, *apiError) {
		cc := c.s.clusterOf(c.listener)
		if cc == nil {
			return nil, nil
		}
		return cc.totem(), nil
	}})
	t.add("GET", "/cluster/config/qdevice", &method{params: schema{}, handler: func(*call) (any, *apiError) {
		return map[string]any{}, nil
	}})
	t.add("GET", "/cluster/status", &method{params: schema{}, handler: clusterStatus})
}

// fingerprintRE is the fingerprint-sha256 pattern, anchored as
// PVE::JSONSchema anchors patterns.
var fingerprintRE = regexp.MustCompile(`^(?:([A-Fa-f0-9]{2}:){31}[A-Fa-f0-9]{2})$`)

func createCluster(c *call) (any, *apiError) {
	s := c.s
	if s.clusterOf(c.listener) != nil {
		return nil, die("cluster config '%s' already exists", corosyncConfPath)
	}
	links, aerr := extractLinks(c.params)
	if aerr != nil {
		return nil, aerr
	}
	name := c.params["clustername"]
	nodeid, votes := int64(intParam(c.params, "nodeid", 1)), int64(intParam(c.params, "votes", 1))
	var coeff *int64
	if s.rel.atLeast9() {
		v := int64(intParam(c.params, "token-coefficient", 125))
		coeff = &v
	}
	node := c.listener
	c.params["node"] = node
	return s.startTaskLocked(c, "clustercreate", name, func(t *task) (int, error) {
		ns := s.st.Nodes[node]
		d := s.st.Domains[ns.Domain]
		if d.Cluster != nil {
			return 0, fmt.Errorf("cluster config '%s' already exists", corosyncConfPath)
		}
		if len(links) == 0 {
			links[0] = corosyncLink{Address: s.hostIP(node)}
		}
		cc := &corosyncConf{Name: name, TokenCoefficient: coeff, Links: map[int]int64{}, Nodes: map[string]*corosyncNode{}}
		cn := &corosyncNode{Name: node, NodeID: nodeid, Votes: votes, Rings: map[int]string{}}
		for l, lk := range links {
			cc.Links[l] = lk.Priority
			cn.Rings[l] = lk.Address
		}
		cc.Nodes[node] = cn
		cc.ConfigVersion = 1
		t.Log = append(t.Log, "Writing corosync config to /etc/pve/corosync.conf", "Restart corosync and cluster filesystem")
		d.Cluster = cc
		return 0, nil
	}), nil
}

func clusterConfigNodes(c *call) (any, *apiError) {
	out := []map[string]any{}
	cc := c.s.clusterOf(c.listener)
	if cc == nil {
		return out, nil
	}
	for _, n := range cc.sortedNodes() {
		e := n.entry()
		e["node"] = n.Name
		out = append(out, e)
	}
	return out, nil
}

func joinInfo(c *call) (any, *apiError) {
	s := c.s
	cc := s.clusterOf(c.listener)
	if cc == nil {
		return nil, errf(http.StatusFailedDependency, "node is not in a cluster, no join info available!")
	}
	name := c.params["node"]
	if name == "" {
		name = c.listener
	}
	if cc.Nodes[name] == nil {
		return nil, die("unknown node '%s'", name)
	}
	list := []map[string]any{}
	for _, n := range cc.sortedNodes() {
		e := n.entry()
		if ns := s.st.Nodes[n.Name]; ns != nil {
			// PVE::Cluster::get_node_fingerprint: pveproxy-ssl.pem when
			// the node has a custom certificate, else pve-ssl.pem.
			e["pve_fp"] = certFingerprint(ns.fingerprintPEM())
			e["pve_addr"] = s.hostIP(n.Name)
		}
		list = append(list, e)
	}
	return map[string]any{
		"nodelist": list, "preferred_node": name, "totem": cc.totem(), "config_digest": cc.digest(),
	}, nil
}

func clusterStatus(c *call) (any, *apiError) {
	s := c.s
	ns := s.st.Nodes[c.listener]
	cc := s.clusterOf(c.listener)
	if cc == nil {
		return []map[string]any{{
			"type": "node", "id": "node/" + c.listener, "name": c.listener, "ip": s.hostIP(c.listener),
			"local": 1, "nodeid": 0, "online": 1, "level": "",
		}}, nil
	}
	q := 0
	if s.quorate(ns.Domain, cc) {
		q = 1
	}
	out := []map[string]any{{
		"type": "cluster", "id": "cluster", "name": cc.Name, "nodes": len(cc.Nodes), "quorate": q, "version": cc.ConfigVersion,
	}}
	for _, n := range cc.sortedNodes() {
		e := map[string]any{
			"type": "node", "id": "node/" + n.Name, "name": n.Name, "nodeid": n.NodeID,
			"local": 0, "online": 0, "level": "",
		}
		if n.Name == c.listener {
			e["local"] = 1
		}
		if s.memberOnline(ns.Domain, n.Name) {
			e["online"] = 1
		}
		if ip := s.hostIP(n.Name); ip != "" {
			e["ip"] = ip
		}
		out = append(out, e)
	}
	return out, nil
}

// addNodeError is an exception raised by addnode on the member: a message
// and optional per-key errors (verify_conf).
type addNodeError struct {
	msg    string
	errors map[string]string
}

// addNodeLocked is the addnode handler body run on member for node.
func (s *Sim) addNodeLocked(member, node string, links map[int]corosyncLink, nodeid, votes *int64, force bool, newNodeIP string, apiversion int) *addNodeError {
	cc := s.clusterOf(member)
	domain := s.st.Nodes[member].Domain
	if apiversion < joinAPIVersion-1 {
		return &addNodeError{msg: fmt.Sprintf("this cluster does not support joining nodes with API version %d", apiversion)}
	}
	if cc != nil && !s.quorate(domain, cc) {
		return &addNodeError{msg: "cluster not ready - no quorum?"}
	}
	if cc == nil || len(cc.Nodes) == 0 {
		return &addNodeError{msg: "invalid corosync.conf", errors: map[string]string{"error0": "no nodes found"}}
	}
	for _, l := range sortedLinkKeys(links) {
		addr := links[l].Address
		for _, other := range cc.sortedNodes() {
			if other.Name == node {
				continue
			}
			for _, r := range sortedInts(other.Rings) {
				if other.Rings[r] == addr {
					return &addNodeError{msg: fmt.Sprintf("corosync: address '%s' already used on link ring%d_addr by node '%s'", addr, r, other.Name)}
				}
			}
		}
	}
	if apiversion == 0 && newNodeIP == "" && len(links) == 1 {
		for l, lk := range links {
			newNodeIP = lk.Address
			delete(links, l)
		}
	}
	if len(links) > 0 {
		for l := 0; l <= maxLinkIndex; l++ {
			_, haveCluster := cc.Links[l]
			_, haveNew := links[l]
			if haveCluster && !haveNew {
				return &addNodeError{msg: fmt.Sprintf("corosync: link %d exists in cluster config but wasn't specified for new node", l)}
			}
			if !haveCluster && haveNew {
				return &addNodeError{msg: fmt.Sprintf("corosync: link %d specified for new node doesn't exist in cluster config", l)}
			}
		}
	} else {
		if newNodeIP == "" {
			return &addNodeError{msg: "no links and no fallback ip (new_node_ip) given, cannot join cluster"}
		}
		if len(cc.Links) != 1 {
			return &addNodeError{msg: "no links given but multiple links found on other nodes, fallback only supported on single-link clusters"}
		}
		for l := range cc.Links {
			links[l] = corosyncLink{Address: newNodeIP}
		}
	}
	var id, v int64
	if nodeid != nil {
		id = *nodeid
	}
	if existing := cc.Nodes[node]; existing != nil {
		if id == 0 {
			id = existing.NodeID
		}
		v = existing.Votes
		if votes != nil {
			v = *votes
		}
		if existing.Votes != v || existing.NodeID != id || !force {
			return &addNodeError{msg: fmt.Sprintf("can't add existing node '%s'", node)}
		}
	} else {
		if id == 0 {
			id = 1
			for used := true; used; {
				used = false
				for _, n := range cc.Nodes {
					if n.NodeID == id {
						used = true
						id++
						break
					}
				}
			}
		}
		v = 1
		if votes != nil {
			v = *votes
		}
	}
	cn := &corosyncNode{Name: node, NodeID: id, Votes: v, Rings: map[int]string{}}
	for l, lk := range links {
		cn.Rings[l] = lk.Address
	}
	cc.Nodes[node] = cn
	cc.ConfigVersion++
	return nil
}

func optInt(params map[string]string, k string) *int64 {
	v, ok := params[k]
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

func addNodeHandler(c *call) (any, *apiError) {
	s := c.s
	links, aerr := extractLinks(c.params)
	if aerr != nil {
		return nil, aerr
	}
	nodeid := optInt(c.params, "nodeid")
	if nodeid != nil && *nodeid == 0 {
		nodeid = nil
	}
	e := s.addNodeLocked(c.listener, c.params["node"], links, nodeid, optInt(c.params, "votes"),
		c.params["force"] == "1", c.params["new_node_ip"], intParam(c.params, "apiversion", 0))
	if e != nil {
		return nil, &apiError{Status: http.StatusInternalServerError, Message: e.msg, Errors: e.errors}
	}
	s.saveLocked()
	cc := s.clusterOf(c.listener)
	return map[string]any{"corosync_authkey": "", "corosync_conf": cc.render(), "warnings": []string{}}, nil
}

func deleteClusterNode(c *call) (any, *apiError) {
	s := c.s
	target := c.params["node"]
	if target == c.listener {
		return nil, die("Cannot delete myself from cluster!")
	}
	cc := s.clusterOf(c.listener)
	domain := s.st.Nodes[c.listener].Domain
	if cc != nil && !s.quorate(domain, cc) {
		return nil, die("cluster not ready - no quorum?")
	}
	var found *corosyncNode
	if cc != nil {
		for _, n := range cc.sortedNodes() {
			if n.Name == target || n.Rings[0] == target || (n.Rings[1] != "" && n.Rings[1] == target) {
				found = n
				break
			}
		}
	}
	if found == nil {
		return nil, die("Node/IP: %s is not a known host of the cluster.", target)
	}
	delete(cc.Nodes, found.Name)
	cc.ConfigVersion++
	// The removed node keeps what it had: a copy of the cluster's /etc/pve
	// and corosync.conf. It must not come back in this state (PVE: power it
	// off first, then reinstall or separate it).
	if ns := s.st.Nodes[found.Name]; ns != nil && ns.Domain == domain {
		old := s.st.Domains[domain]
		cp := *old
		ccCopy := *cc
		ccCopy.Nodes = map[string]*corosyncNode{}
		for k, v := range cc.Nodes {
			ccCopy.Nodes[k] = v
		}
		ccCopy.Nodes[found.Name] = found
		ccCopy.Links = map[int]int64{}
		for k, v := range cc.Links {
			ccCopy.Links[k] = v
		}
		cp.Cluster = &ccCopy
		key := "removed-" + found.Name
		s.st.Domains[key] = &cp
		ns.Domain = key
	}
	s.saveLocked()
	return nil, nil
}

// localAddresses are the IPs in the node's applied network configuration.
func (ns *nodeState) localAddresses() map[string]bool {
	out := map[string]bool{}
	if ns.Applied == nil {
		return out
	}
	for _, i := range ns.Applied.Ifaces {
		if i.Address != "" {
			out[i.Address] = true
		}
		if i.Address6 != "" {
			if a, err := netip.ParseAddr(i.Address6); err == nil {
				out[a.String()] = true
			}
		}
	}
	return out
}

// resolveHost finds the node a host name or address reaches from node
// `from`: a node name, its /etc/hosts address, any address configured on
// it, or the loopback (from itself).
func (s *Sim) resolveHost(from, host string) string {
	h := strings.TrimSuffix(strings.Trim(host, "[]"), ".localdomain")
	switch h {
	case "localhost", "127.0.0.1", "::1":
		return from
	}
	if s.st.Nodes[h] != nil {
		return h
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return ""
	}
	for _, n := range s.st.NodeOrder {
		if s.offline[n] {
			continue
		}
		if s.hostIP(n) == a.String() || s.st.Nodes[n].localAddresses()[a.String()] {
			return n
		}
	}
	return ""
}

// joinCluster is POST /cluster/config/join on the joining node. Like
// PVE::Cluster::Setup::join it checks the local node, logs in to the
// member (pinning its certificate fingerprint), asks it to add this node,
// then replaces /etc/pve by the cluster's. Everything up to the member's
// addnode happens when the worker starts; the switch to the cluster's
// pmxcfs (tickets, membership) a quarter into it (stagedWorkers); the new
// certificate when it ends.
func joinCluster(c *call) (any, *apiError) {
	s := c.s
	links, aerr := extractLinks(c.params)
	if aerr != nil {
		return nil, aerr
	}
	node := c.listener
	c.params["node"] = node
	force := c.params["force"] == "1"
	var logs []string
	logf := func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }
	fail := func(msg string) (any, *apiError) {
		return s.startTaskLocked(c, "clusterjoin", "", func(t *task) (int, error) {
			t.Log = append(t.Log, logs...)
			return 0, fmt.Errorf("%s", msg)
		}), nil
	}
	if s.joinRunningLocked(node) {
		// The second join waits for the first one's lock and then finds
		// the node clustered.
		logf("detected the following error(s):")
		logf("* authentication key '%s' already exists", corosyncAuthKey)
		logf("* cluster config '%s' already exists", corosyncConfPath)
		return fail("Check if node may join a cluster failed!")
	}

	// assert_joinable
	var errs []string
	clustered := s.clusterOf(node) != nil
	if clustered {
		errs = append(errs, fmt.Sprintf("authentication key '%s' already exists", corosyncAuthKey),
			fmt.Sprintf("cluster config '%s' already exists", corosyncConfPath))
	}
	// get_vmlist: the guests pmxcfs knows of, in /etc/pve/nodes/*.
	if len(s.guestIDsLocked(node)) > 0 {
		errs = append(errs, "this host already contains virtual guests")
	}
	if clustered {
		errs = append(errs, "corosync is already running, is this node already in a cluster?!")
	}
	local := s.st.Nodes[node].localAddresses()
	for _, l := range sortedLinkKeys(links) {
		addr := links[l].Address
		ip, err := netip.ParseAddr(addr)
		if err != nil {
			n := s.resolveHost(node, addr)
			if n == "" {
				errs = append(errs, fmt.Sprintf("link%d: cannot use '%s': hostname lookup '%s' failed - failed to get address info for: %s: Name or service not known", l, addr, addr, addr))
				continue
			}
			ip, _ = netip.ParseAddr(s.hostIP(n))
		}
		if !local[ip.String()] {
			errs = append(errs, fmt.Sprintf("link%d: cannot use IP '%s', not found on local node!", l, ip))
		}
	}
	warnings := 0
	if len(errs) > 0 {
		logf("detected the following error(s):")
		for _, e := range errs {
			logf("* %s", e)
		}
		if !force {
			return fail("Check if node may join a cluster failed!")
		}
		logf("WARNING : detected error but forced to continue!")
		warnings = len(errs) + 2
	}

	host := c.params["hostname"]
	logf("Establishing API connection with host '%s'", host)
	member := s.resolveHost(node, host)
	if member == "" {
		return fail(fmt.Sprintf("500 Can't connect to %s:8006 (Name or service not known)", host))
	}
	mns := s.st.Nodes[member]
	if fp := certFingerprint(mns.CertPEM); !strings.EqualFold(fp, c.params["fingerprint"]) {
		return fail(fmt.Sprintf("fingerprint '%s' not verified, abort!", fp))
	}
	if s.st.Domains[mns.Domain].RootPassword != c.params["password"] {
		return fail("401 authentication failure")
	}
	logf("Login succeeded.")
	logf("check cluster join API version")
	logf("Request addition of this node")
	nodeid := optInt(c.params, "nodeid")
	if nodeid != nil && *nodeid == 0 {
		nodeid = nil
	}
	newNodeIP := ""
	if len(links) == 0 {
		newNodeIP = s.hostIP(node)
		logf("No cluster network links passed explicitly, fallback to local node IP '%s'", newNodeIP)
	}
	if e := s.addNodeLocked(member, node, links, nodeid, optInt(c.params, "votes"), force, newNodeIP, joinAPIVersion); e != nil {
		logf("An error occurred on the cluster node: %s", e.msg)
		keys := make([]string, 0, len(e.errors))
		for k := range e.errors {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sym := "!"
			if strings.HasPrefix(k, "warning") {
				sym = "*"
			}
			logf("%s %s", sym, e.errors[k])
		}
		return fail("Cluster join aborted!")
	}
	logf("Join request OK, finishing setup locally")
	clusterDomain := mns.Domain
	s.saveLocked()
	var upid string
	// Setup::join runs assert_joinable, the login and the member's addnode
	// inside the worker (pve-cluster API2/ClusterConfig.pm join): one that
	// fails before them, or is stopped, has changed nothing.
	defer func() {
		s.setTaskUndoLocked(s.st.Nodes[node], upid, func() {
			if d := s.st.Domains[clusterDomain]; d != nil && d.Cluster != nil && d.Cluster.Nodes[node] != nil {
				delete(d.Cluster.Nodes, node)
				d.Cluster.ConfigVersion++
			}
		})
	}()
	upid = s.startTaskLocked(c, "clusterjoin", "", func(t *task) (int, error) {
		t.Log = append(t.Log, logs...)
		ns := s.st.Nodes[node]
		d := s.st.Domains[clusterDomain]
		if d == nil || d.Cluster == nil || d.Cluster.Nodes[node] == nil {
			return 0, fmt.Errorf("starting pve-cluster failed: node '%s' is no longer in the cluster configuration", node)
		}
		// finish_join: pve-cluster stops, the old database is backed up
		// and removed, corosync and pve-cluster start with the cluster's
		// files. From here the node verifies tickets with the cluster's
		// key (its own tickets fail with 401), has the cluster's users
		// and tokens and is an online member; a stopped worker no longer
		// undoes the addnode.
		t.Log = append(t.Log, "stopping pve-cluster service",
			fmt.Sprintf("backup old database to '/var/lib/pve-cluster/backup/config-%d.sql.gz'", time.Now().Unix()))
		old := ns.Domain
		ns.Domain = clusterDomain
		if old != clusterDomain && !s.domainInUse(old) {
			delete(s.st.Domains, old)
		}
		t.undo = nil
		s.saveLocked()
		// Waiting for quorum, the node's files and certificate; the
		// certificate is served once pveproxy restarts, at the end.
		s.workLocked(t)
		host, _, _ := net.SplitHostPort(s.opts.Listen)
		certPEM, keyPEM, err := issueLeafFor(d, node, host, ns.Mgmt)
		if err != nil {
			return 0, err
		}
		t.Log = append(t.Log, "waiting for quorum...OK", "(re)generate node files", "generate new node certificate", "merge authorized SSH keys",
			"generated new node certificate, restart pveproxy and pvedaemon services",
			fmt.Sprintf("successfully added node '%s' to cluster.", node))
		ns.CertPEM, ns.KeyPEM = certPEM, keyPEM
		return warnings, nil
	})
	return upid, nil
}

// joinRunningLocked reports whether a clusterjoin worker runs on node: it
// holds the local cluster lock a second join waits for (a killed one
// released it with its death).
func (s *Sim) joinRunningLocked(node string) bool {
	for _, t := range s.st.Nodes[node].Tasks {
		if t.Type == "clusterjoin" && t.Status == "running" {
			return true
		}
	}
	return false
}

func (s *Sim) domainInUse(key string) bool {
	for _, ns := range s.st.Nodes {
		if ns.Domain == key {
			return true
		}
	}
	return false
}

func (s *Sim) isOffline(node string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offline[node]
}
