package adopt

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Config is how the adoption reaches the cluster: the API (root@pam with a
// password, as the provider's OSD and cluster resources need) and, for what
// only a node holds, SSH.
type Config struct {
	Endpoint, Username, Password string
	TLSFingerprint, CACert       string
	// SSH is optional: without it node-only objects are listed as not
	// adopted, and resources that need SSH to read are left out.
	SSH *SSHConfig
}

// SSHConfig is the provider's ssh block, with the key itself.
type SSHConfig struct {
	User           string // default root
	PrivateKey     string // PEM
	KnownHostsFile string
	// Nodes overrides a node's address (default: the one PVE reports).
	Nodes map[string]string // node -> host:port
}

// Options choose what to adopt.
type Options struct {
	// Areas limits the run to these areas (nil: all of Areas()).
	Areas []string
	// Provider is what main.tf's variables default to.
	Provider ProviderSettings
}

// Import is one import block: the resource address and its import ID.
type Import struct{ To, ID string }

// Skip is an object the configuration does not express, and why.
type Skip struct{ Object, Reason string }

// Result is a generated configuration.
type Result struct {
	// Files are the generated .tf files by name; main.tf (provider,
	// variables) is always there.
	Files   map[string]*hclwrite.File
	order   []string
	Imports []Import
	Skipped []Skip
	// Variables are the sensitive variables the configuration needs a
	// value for (TF_VAR_<name>), besides main.tf's password.
	Variables []string
}

// area is one part of the cluster: it finds the objects and adds them with
// r.object; the resource's own Read supplies their attributes.
type area struct {
	name string
	run  func(ctx context.Context, r *run) error
}

// areas in the order their files are written. Each lives in <name>.go.
var areas = []area{
	{"network", adoptNetwork},
	{"cluster", adoptCluster},
	{"storage", adoptStorage},
	{"ceph", adoptCeph},
	{"node", adoptNode},
	{"vm", adoptVMs},
}

// Areas lists the areas Run knows, in order.
func Areas() []string {
	out := make([]string, len(areas))
	for i, a := range areas {
		out[i] = a.name
	}
	return out
}

// source is what discovery reads through: a read-only client and, when
// configured, SSH limited to reading commands.
type source struct {
	API *pve.Client
	SSH *nodeexec.Pool
}

// run is one adoption: the source, what every area needs (nodes, release)
// and the result being built.
type run struct {
	src     source
	api     *pve.Client
	rd      *reader
	nodes   []string // sorted node names of the cluster (or the one standalone node)
	release string   // PVE's release, such as "9.1"
	res     *Result
	wanted  map[string]bool
	opts    Options
	groups  []*group
	byAddr  map[string]*group
	// noSSH: the run had no SSH (Config.SSH nil), so main.tf has no ssh
	// block either: its key file need not exist where the plan runs.
	noSSH bool
}

// Run reads the cluster and builds the configuration. Nothing it calls can
// write: the API client is read-only, SSH runs only reading commands.
func Run(ctx context.Context, cfg Config, opts Options) (*Result, error) {
	wanted := map[string]bool{}
	for _, a := range opts.Areas {
		known := false
		for _, k := range areas {
			known = known || k.name == a
		}
		if !known {
			return nil, fmt.Errorf("unknown area %q: valid areas are %s", a, strings.Join(Areas(), ", "))
		}
		wanted[a] = true
	}
	if cfg.Username == "" {
		cfg.Username = "root@pam"
	}
	api, err := pve.NewClient(pve.Config{Endpoint: cfg.Endpoint, Username: cfg.Username, Password: cfg.Password,
		TLSFingerprint: cfg.TLSFingerprint, CACertPEM: cfg.CACert, ReadOnly: true, UserAgent: "pve-adopt"})
	if err != nil {
		return nil, err
	}
	// The adoption's own client (its certificate pin or CA, nothing from
	// the environment) logs in first: the in-process provider sends the
	// password only to an endpoint that client has verified.
	v, err := api.Version(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the PVE version (GET /version): %w", err)
	}
	r := &run{release: v.Release, api: api, res: &Result{Files: map[string]*hclwrite.File{}}, wanted: wanted, opts: opts, byAddr: map[string]*group{}, noSSH: cfg.SSH == nil}
	r.src.API = api
	if cfg.SSH != nil {
		if r.src.SSH, err = sshPool(api, cfg.SSH); err != nil {
			return nil, err
		}
		defer func() { _ = r.src.SSH.Close() }()
	}
	if r.rd, err = newReader(ctx, providerConfig(cfg)); err != nil {
		return nil, fmt.Errorf("start the provider: %w", err)
	}
	nodes, err := api.Nodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the nodes (GET /nodes): %w", err)
	}
	for _, n := range nodes {
		r.nodes = append(r.nodes, n.Node)
	}
	sort.Strings(r.nodes)
	r.writeMain()
	for _, a := range areas {
		if len(wanted) > 0 && !wanted[a.name] {
			continue
		}
		if err := a.run(ctx, r); err != nil {
			return nil, fmt.Errorf("adopt %s: %w", a.name, err)
		}
	}
	r.generate()
	return r.res, nil
}

// providerConfig is the in-process provider's configuration. Every setting
// the provider would otherwise take from a PVE_* variable is given (the
// configuration wins over the environment), so that the environment cannot
// loosen what the adoption checks: certificates are verified (insecure =
// false), unknown host keys refused (trust_on_first_use = false), only the
// given key logs in (no agent, no password). Only api_token has no value
// meaning none: cmd/pve-adopt clears PVE_API_TOKEN (and every other PVE_*
// variable) once it has read its settings.
func providerConfig(cfg Config) map[string]any {
	m := map[string]any{"endpoint": cfg.Endpoint, "username": cfg.Username, "password": cfg.Password,
		"insecure": false, "tls_fingerprint": cfg.TLSFingerprint, "ca_cert": cfg.CACert,
		"request_timeout": 60, "max_parallel_requests": 4}
	if s := cfg.SSH; s != nil {
		user := s.User
		if user == "" {
			user = "root"
		}
		ssh := map[string]any{"private_key": s.PrivateKey, "username": user, "private_key_passphrase": "", "password": "",
			"agent": false, "trust_on_first_use": false, "port": 22, "command_timeout": 600}
		if s.KnownHostsFile != "" {
			ssh["known_hosts_file"] = s.KnownHostsFile
		}
		if len(s.Nodes) > 0 {
			ssh["nodes"] = sshNodeAddresses(s.Nodes)
		}
		m["ssh"] = ssh
	}
	return m
}

// sshNodeAddresses is the provider's ssh.nodes value (node -> address and
// port) of node -> host[:port]; without a port, SSH's 22.
func sshNodeAddresses(hostPorts map[string]string) map[string]any {
	nodes := make(map[string]any, len(hostPorts))
	for n, hp := range hostPorts {
		host, port, err := net.SplitHostPort(hp)
		if err != nil {
			host, port = hp, "22"
		}
		p, _ := strconv.Atoi(port)
		nodes[n] = map[string]any{"address": host, "port": p}
	}
	return nodes
}

// sshPool is the discovery's SSH: reading commands only (allowSSH), nodes
// at their override or the address PVE reports.
func sshPool(api *pve.Client, s *SSHConfig) (*nodeexec.Pool, error) {
	var ips map[string]string
	return nodeexec.New(nodeexec.Config{
		User:           s.User,
		PrivateKey:     nodeexec.Secret(s.PrivateKey),
		KnownHostsFile: s.KnownHostsFile,
		Allow:          allowSSH,
		Resolve: func(ctx context.Context, node string) (nodeexec.Address, error) {
			if hp, ok := s.Nodes[node]; ok {
				host, port, err := net.SplitHostPort(hp)
				if err != nil { // a host without a port: 22
					host, port = hp, "0"
				}
				p, _ := strconv.Atoi(port)
				return nodeexec.Address{Host: host, Port: p}, nil
			}
			if ips == nil {
				st, err := api.ClusterStatus(ctx)
				if err != nil {
					return nodeexec.Address{}, err
				}
				ips = map[string]string{}
				for _, n := range st.Nodes {
					ips[n.Name] = n.IP
				}
			}
			if ips[node] == "" {
				return nodeexec.Address{}, fmt.Errorf("PVE reports no address for node %s: give it with -ssh-node %s=host:port", node, node)
			}
			return nodeexec.Address{Host: ips[node]}, nil
		},
	})
}

// skip records an object the configuration does not express.
func (r *run) skip(object, reason string) {
	r.res.Skipped = append(r.res.Skipped, Skip{Object: object, Reason: reason})
}
