package pve

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ClusterLink is one corosync link (link0..link7) of a node.
type ClusterLink struct {
	Address  string
	Priority *int64 // knet priority 0..255; only used when creating a cluster
}

// String renders the link as PVE's property string `address=IP[,priority=N]`.
func (l ClusterLink) String() string {
	s := "address=" + l.Address
	if l.Priority != nil {
		s += ",priority=" + strconv.FormatInt(*l.Priority, 10)
	}
	return s
}

func setLinks(p Params, links map[int]ClusterLink) {
	for n, l := range links {
		p.Set("link"+strconv.Itoa(n), l.String())
	}
}

// CreateClusterRequest is POST /cluster/config.
type CreateClusterRequest struct {
	Name          string
	Links         map[int]ClusterLink
	NodeID, Votes *int64
}

// CreateCluster creates a cluster on the endpoint's node and returns the
// UPID of the clustercreate task. PVE reserves it for root@pam (a ticket).
//
//pve:operation POST /cluster/config
func (c *Client) CreateCluster(ctx context.Context, r CreateClusterRequest) (string, error) {
	p := Params{}
	p.Set("clustername", r.Name)
	setLinks(p, r.Links)
	if r.NodeID != nil {
		p.SetInt("nodeid", *r.NodeID)
	}
	if r.Votes != nil {
		p.SetInt("votes", *r.Votes)
	}
	var upid string
	err := c.Post(ctx, "/cluster/config", p, &upid)
	return upid, err
}

// JoinClusterRequest is POST /cluster/config/join, sent to the joining node.
type JoinClusterRequest struct {
	Hostname    string // address or name of an existing member, as the joining node reaches it
	Fingerprint string // SHA-256 of that member's API certificate
	Password    string // root@pam password of the member
	Links       map[int]ClusterLink
	NodeID      *int64
	Votes       *int64
	Force       bool
}

// JoinCluster asks the endpoint's node to join a cluster and returns the
// UPID of the clusterjoin task. When the task ends the node has the
// cluster's credentials and a new certificate, so callers cannot follow the
// task through this client to its end.
//
//pve:operation POST /cluster/config/join
func (c *Client) JoinCluster(ctx context.Context, r JoinClusterRequest) (string, error) {
	p := Params{}
	p.Set("hostname", r.Hostname)
	p.Set("fingerprint", r.Fingerprint)
	p.Set("password", r.Password)
	setLinks(p, r.Links)
	if r.NodeID != nil {
		p.SetInt("nodeid", *r.NodeID)
	}
	if r.Votes != nil {
		p.SetInt("votes", *r.Votes)
	}
	if r.Force {
		p.SetBool("force", true)
	}
	var upid string
	err := c.Post(ctx, "/cluster/config/join", p, &upid)
	return upid, err
}

// ClusterJoinInfo is what a node needs to join the cluster.
type ClusterJoinInfo struct {
	ConfigDigest, PreferredNode string
	Nodes                       []ClusterJoinNode
}

// ClusterJoinNode is one member in the join information.
type ClusterJoinNode struct {
	Name                string
	NodeID, QuorumVotes int64
	PVEAddr             string
	PVEFingerprint      string
	Links               map[int]string // link number -> address
}

// ErrNotClustered is matched by errors that say the node is in no cluster.
var ErrNotClustered = errors.New("node is not in a cluster")

// ClusterJoinInfo reads the join information of node ("" = the endpoint's
// node). A standalone node answers 424, returned as an error matching
// ErrNotClustered.
//
//pve:operation GET /cluster/config/join
func (c *Client) ClusterJoinInfo(ctx context.Context, node string) (*ClusterJoinInfo, error) {
	p := Params{}
	if node != "" {
		p.Set("node", node)
	}
	var w struct {
		ConfigDigest  flexString                   `json:"config_digest"`
		PreferredNode flexString                   `json:"preferred_node"`
		NodeList      []map[string]json.RawMessage `json:"nodelist"`
	}
	if err := c.Get(ctx, "/cluster/config/join", p, &w); err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.StatusCode == 424 {
			return nil, fmt.Errorf("%w: %w", ErrNotClustered, err)
		}
		return nil, err
	}
	out := &ClusterJoinInfo{ConfigDigest: string(w.ConfigDigest), PreferredNode: string(w.PreferredNode)}
	for _, m := range w.NodeList {
		n := ClusterJoinNode{Links: links(m)}
		n.Name = rawString(m["name"])
		n.NodeID = rawInt(m["nodeid"])
		n.QuorumVotes = rawInt(m["quorum_votes"])
		n.PVEAddr = rawString(m["pve_addr"])
		n.PVEFingerprint = rawString(m["pve_fp"])
		out.Nodes = append(out.Nodes, n)
	}
	sort.Slice(out.Nodes, func(i, j int) bool { return out.Nodes[i].NodeID < out.Nodes[j].NodeID })
	return out, nil
}

// ClusterConfigNode is one node of corosync.conf's nodelist.
type ClusterConfigNode struct {
	Name                string
	NodeID, QuorumVotes int64
	Links               map[int]string
}

// ClusterConfigNodes lists corosync.conf's nodes (empty when standalone).
//
//pve:operation GET /cluster/config/nodes
func (c *Client) ClusterConfigNodes(ctx context.Context) ([]ClusterConfigNode, error) {
	var w []map[string]json.RawMessage
	if err := c.Get(ctx, "/cluster/config/nodes", nil, &w); err != nil {
		return nil, err
	}
	out := make([]ClusterConfigNode, 0, len(w))
	for _, m := range w {
		name := rawString(m["name"])
		if name == "" {
			name = rawString(m["node"])
		}
		out = append(out, ClusterConfigNode{Name: name, NodeID: rawInt(m["nodeid"]), QuorumVotes: rawInt(m["quorum_votes"]), Links: links(m)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeID < out[j].NodeID })
	return out, nil
}

// RemoveClusterNode removes node from corosync.conf. PVE expects the node
// to be powered off already and never to come back as it is.
//
//pve:operation DELETE /cluster/config/nodes/{node}
func (c *Client) RemoveClusterNode(ctx context.Context, node string) error {
	return c.Delete(ctx, "/cluster/config/nodes/"+PathEscape(node), nil, nil)
}

// ClusterStatus is GET /cluster/status.
type ClusterStatus struct {
	Name      string // cluster name; "" when standalone
	Clustered bool
	Quorate   bool
	Version   int64 // corosync config version
	Nodes     []ClusterStatusNode
}

// ClusterStatusNode is one node entry of the cluster status.
type ClusterStatusNode struct {
	Name, IP, Level string
	NodeID          int64
	Online, Local   bool
}

// LocalNode returns the node that answered, or nil.
func (s *ClusterStatus) LocalNode() *ClusterStatusNode {
	for i := range s.Nodes {
		if s.Nodes[i].Local {
			return &s.Nodes[i]
		}
	}
	return nil
}

// Node returns the named node entry, or nil.
func (s *ClusterStatus) Node(name string) *ClusterStatusNode {
	for i := range s.Nodes {
		if s.Nodes[i].Name == name {
			return &s.Nodes[i]
		}
	}
	return nil
}

// ClusterStatus reads the cluster (or standalone node) status.
//
//pve:operation GET /cluster/status
func (c *Client) ClusterStatus(ctx context.Context) (*ClusterStatus, error) {
	var w []struct {
		Type    flexString `json:"type"`
		Name    flexString `json:"name"`
		Quorate flexBool   `json:"quorate"`
		Version flexInt    `json:"version"`
		NodeID  flexInt    `json:"nodeid"`
		IP      flexString `json:"ip"`
		Level   flexString `json:"level"`
		Online  flexBool   `json:"online"`
		Local   flexBool   `json:"local"`
	}
	if err := c.Get(ctx, "/cluster/status", nil, &w); err != nil {
		return nil, err
	}
	out := &ClusterStatus{}
	for _, e := range w {
		switch e.Type {
		case "cluster":
			out.Clustered, out.Name, out.Quorate, out.Version = true, string(e.Name), bool(e.Quorate), int64(e.Version)
		case "node":
			out.Nodes = append(out.Nodes, ClusterStatusNode{
				Name: string(e.Name), IP: string(e.IP), Level: string(e.Level), NodeID: int64(e.NodeID),
				Online: bool(e.Online), Local: bool(e.Local),
			})
		}
	}
	if !out.Clustered {
		out.Quorate = true // a standalone node is always quorate
	}
	sort.Slice(out.Nodes, func(i, j int) bool { return out.Nodes[i].NodeID < out.Nodes[j].NodeID })
	return out, nil
}

// ServerFingerprint connects to the endpoint and returns the SHA-256
// fingerprint ("AA:BB:...") of the leaf certificate it presents. The
// connection is verified with the client's own trust settings (pin, CA or
// insecure), so the fingerprint can be passed on to pin the node in a
// cluster join.
func (c *Client) ServerFingerprint(ctx context.Context) (string, error) {
	u, err := url.Parse(c.endpoint)
	if err != nil {
		return "", err
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	tr, ok := c.http.Transport.(*http.Transport)
	if !ok || tr.TLSClientConfig == nil {
		return "", errors.New("client transport has no TLS configuration")
	}
	cfg := tr.TLSClientConfig.Clone()
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	d := &tls.Dialer{Config: cfg}
	conn, err := d.DialContext(dctx, "tcp", host)
	if err != nil {
		var tlsErr *TLSError
		if errors.As(err, &tlsErr) {
			return "", tlsErr
		}
		return "", &ConnectError{Endpoint: c.endpoint, Dial: true, Err: err}
	}
	defer conn.Close()
	tc, ok := conn.(*tls.Conn)
	if !ok {
		return "", fmt.Errorf("connection to %s is not TLS", c.endpoint)
	}
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return "", fmt.Errorf("%s presented no certificate", c.endpoint)
	}
	sum := sha256.Sum256(certs[0].Raw)
	return FormatFingerprint(sum[:]), nil
}

func links(m map[string]json.RawMessage) map[int]string {
	out := map[int]string{}
	for k, v := range m {
		rest, ok := strings.CutPrefix(k, "ring")
		if !ok {
			rest, ok = strings.CutPrefix(k, "link")
		}
		if !ok {
			continue
		}
		num, ok := strings.CutSuffix(rest, "_addr")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		out[n] = rawString(v)
	}
	return out
}

func rawString(b json.RawMessage) string {
	var s flexString
	if len(b) == 0 || s.UnmarshalJSON(b) != nil {
		return ""
	}
	return string(s)
}

func rawInt(b json.RawMessage) int64 {
	var n flexInt
	if len(b) == 0 || n.UnmarshalJSON(b) != nil {
		return 0
	}
	return int64(n)
}

// ClusterLinkPriorities reads the knet priority of each corosync link
// (totem interfaces; 0 when unset). A standalone node has none.
//
//pve:operation GET /cluster/config/totem
func (c *Client) ClusterLinkPriorities(ctx context.Context) (map[int]int64, error) {
	var w struct {
		Interface map[string]struct {
			LinkNumber flexInt `json:"linknumber"`
			Priority   flexInt `json:"knet_link_priority"`
		} `json:"interface"`
	}
	if err := c.Get(ctx, "/cluster/config/totem", nil, &w); err != nil {
		return nil, err
	}
	out := map[int]int64{}
	for k, v := range w.Interface {
		n, err := strconv.Atoi(k)
		if err != nil {
			n = int(v.LinkNumber)
		}
		out[n] = int64(v.Priority)
	}
	return out, nil
}

// RootPassword returns the password of a client that logs in as root@pam,
// else "". Joining a node sends the member's root password to the joining
// node, which logs in to the member with it (PVE's join protocol).
func (c *Client) RootPassword() string {
	if c.IsRootTicket() {
		return c.cfg.Password
	}
	return ""
}

// How a join is followed. The joining node's own credentials go stale
// partway through its clusterjoin task: PVE's finish_join restarts
// pve-cluster with the cluster's database, whose key no longer verifies
// the node's tickets (each refused request costs the 3 s PVE delays a
// failed authentication), and pveproxy serves the node's new certificate
// at the end. The member sees that moment: its /cluster/status lists the
// node (its addnode) and then lists it online (its pmxcfs joined). So the
// node's own endpoint is asked only while the member does not list it
// online, and while it lists it but offline only after joinSwitchPatience
// (a worker that died before the switch never brings it online); from
// the switch on everything goes through the member, which reaches the
// node's task like any member's.

// joinSwitchPatience is how long a node the member lists offline is left
// switching before its own endpoint is asked about its task: PVE's
// switch (stop pve-cluster, back up its database, start corosync and
// pve-cluster) takes seconds, and asking during it meets a 401.
var joinSwitchPatience = 10 * time.Second

// StartJoin sends the join (POST /cluster/config/join) to joining, a
// client of the joining node's own endpoint, for node to join the cluster
// of c (a client of a member), and returns the clusterjoin task's UPID.
// When the answer is lost it looks for the task as StartTask does, through
// the member once it lists the node online (the join switched the node's
// credentials), else through the node.
//
//pve:operation GET /nodes/{node}/tasks
func (c *Client) StartJoin(ctx context.Context, joining *Client, node string, r JoinClusterRequest) (string, error) {
	for sent := 1; ; sent++ {
		since := LostTaskSince(time.Now())
		upid, err := joining.JoinCluster(ctx, r)
		if !OutcomeUnknown(err) {
			return upid, err
		}
		found, ferr := c.findJoinTask(ctx, joining, node, since)
		if found == "" {
			// Nothing yet, or the lookup failed while the node switches
			// to the cluster's pmxcfs (its ticket goes stale, the member
			// does not list it yet): look once more after a while.
			if serr := sleepCtx(ctx, lostTaskSettle); serr != nil {
				return "", err
			}
			found, ferr = c.findJoinTask(ctx, joining, node, since)
		}
		switch {
		case found != "":
			c.log("the answer to the join was lost; following the task it started", "upid", found)
			return found, nil
		case ferr != nil:
			c.log("the answer to the join was lost and its task could not be looked for", "node", node, "lookup_error", ferr)
			return "", err
		case !LostAnswer(err) || sent > lostAnswerResends:
			return "", err
		}
		c.log("the join had no effect (its answer was lost, no task of it exists); sending it again", "node", node, "error", err.Error())
	}
}

func (c *Client) findJoinTask(ctx context.Context, joining *Client, node string, since time.Time) (string, error) {
	st, err := c.ClusterStatus(ctx)
	if err != nil {
		return "", err
	}
	if n := st.Node(node); n != nil && n.Online {
		joining.ForgetTicket()
		return c.FindTask(ctx, node, "clusterjoin", "", joining.AuthUser(), since)
	}
	return joining.FindTask(ctx, node, "clusterjoin", "", joining.AuthUser(), since)
}

// FollowJoin waits for the clusterjoin task upid that StartJoin started,
// without a request on credentials the join made stale (see above):
// each round reads the member's /cluster/status, paced by what joins took
// (Config.TaskTimes); while the member does not list the node, the node's
// own task status; once it lists it online, the task through the member.
// It returns the task's result, a *TaskError when it failed; on success
// the member lists the node online. joining's ticket is dropped when the
// node switched, so a later request through it logs in anew.
//
//pve:operation GET /nodes/{node}/tasks/{upid}/status
func (c *Client) FollowJoin(ctx context.Context, joining *Client, node, upid string) (*TaskResult, error) {
	u, err := ParseUPID(upid)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var listedOffline, askedNode time.Time
	for {
		wait := c.pace.next(c.taskTimes.Expected(u.Type), time.Since(start))
		if err := sleepCtx(ctx, wait); err != nil {
			return nil, fmt.Errorf("stopped waiting for the join of node %s (task %s may still be running): %w", node, u.Raw, err)
		}
		st, err := c.ClusterStatus(ctx)
		if err != nil {
			return nil, fmt.Errorf("following the join of node %s (task %s) through the cluster: %w", node, u.Raw, err)
		}
		n := st.Node(node)
		switch {
		case n != nil && n.Online:
			joining.ForgetTicket()
			return c.waitJoinTask(ctx, u, start)
		case n != nil && listedOffline.IsZero():
			listedOffline = time.Now()
			continue
		case n != nil && (time.Since(listedOffline) < joinSwitchPatience || time.Since(askedNode) < joinSwitchPatience):
			continue // switching: the node's own credentials may be stale
		case n == nil:
			listedOffline = time.Time{}
		}
		askedNode = time.Now()
		stopped, exit, err := joining.taskStatus(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("following the join of node %s (task %s) on the node: %w", node, u.Raw, err)
		}
		if stopped && exit != "OK" && !strings.HasPrefix(exit, "WARNINGS:") {
			return joining.finishTask(ctx, u, exit)
		}
		// Running, or ended well (the member lists it online at the
		// next round).
	}
}

// waitJoinTask waits for a join's task through the member, which reaches
// the node once it switched. While the node's pveproxy restarts (the
// join's last step) the member's proxy answers 595/596, which the
// read's retries may outlast; they are waited out.
func (c *Client) waitJoinTask(ctx context.Context, u UPID, start time.Time) (*TaskResult, error) {
	for {
		res, err := c.waitTask(ctx, u.Raw, start)
		var ae *APIError
		if err == nil || ctx.Err() != nil || !errors.As(err, &ae) || ae.StatusCode != 595 && ae.StatusCode != 596 {
			return res, err
		}
		c.log("the joined node does not answer through the cluster yet", "upid", u.Raw, "error", err.Error())
		if serr := sleepCtx(ctx, c.pace.min); serr != nil {
			return nil, err
		}
	}
}
