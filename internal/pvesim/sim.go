package pvesim

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a simulator.
type Options struct {
	Nodes            []string      // default z2g4a, z2g4b, z2g4c
	ClusterName      string        // "" = standalone nodes; else clustered under that name
	Listen           string        // default "127.0.0.1:0"; port P>0 gives nodes P, P+1, ...
	StatePath        string        // optional JSON persistence
	RequestLogPath   string        // optional JSON-lines request log (append)
	PVERelease       string        // "9.1" (default) or "8.4": version strings and API differences
	TaskDuration     time.Duration // how long tasks stay running; default 50ms, <0 means 0
	AuthFailureDelay time.Duration // delay of every 401 (PVE: 3 s); default 0
	// TimeScale > 0 times tasks, node programs and the HA manager by PVE's
	// own durations (timing_model.go), TimeScale real seconds per PVE
	// second, instead of TaskDuration; it also sets CephTimeScale to
	// 1/TimeScale when that is unset, so Ceph's clock runs alike.
	TimeScale float64
	// CephTimeScale is how many simulated seconds of Ceph recovery pass per
	// real second (default 60); <0 freezes the Ceph clock so that only
	// Sim.CephAdvance moves it.
	CephTimeScale float64
	// SSHListen is host:port of the first node's sshd; further nodes use
	// the following ports, port 0 picks free ports. Default: Listen's
	// host with free ports.
	SSHListen string
	// NoSSH starts no SSH listeners.
	NoSSH bool
	// CephNotInstalled starts the nodes without the Ceph daemons, as before
	// `pveceph install`: Ceph API calls on them fail with PVE's "binary not
	// installed: /usr/bin/ceph-mon". Default: Squid installed everywhere.
	CephNotInstalled bool
	// QemuLockTimeout is how long a writer waits for a VM's config lock
	// (/var/lock/qemu-server/lock-<vmid>.conf) before PVE's "got timeout":
	// PVE waits 10 s (qmcreate's worker 1 s, create's first lock 5 s, scaled
	// alike). Default 10 s; tests shorten it to make writers collide.
	QemuLockTimeout time.Duration
	// Lab is the lab's hardware and starting state (lab_model.go). nil =
	// the test default: the reference lab's nodes without management
	// addresses (always reachable), no vmbr0, Ceph installed.
	Lab *Lab
	// Faults are in force from the start (ParseFaultSpec reads the text
	// form); Sim.SetFaults and Sim.ClearFaults change them at runtime.
	Faults []Fault
	// FaultSeed seeds the faults' draws (a Fault.Rate): the same seed and
	// faults give the same requests the same faults (faults.go).
	FaultSeed int64
	// RealCeph puts a real Ceph lab behind the nodes' `ceph` command and
	// Ceph units (ceph_real.go; make testlab). nil: Ceph is the model.
	RealCeph *RealCeph
}

// NodeInfo describes one node's listener and credentials.
type NodeInfo struct {
	Name           string `json:"name"`
	Endpoint       string `json:"endpoint"`
	APIToken       string `json:"api_token"`
	RootPassword   string `json:"root_password"`
	TLSFingerprint string `json:"tls_fingerprint"`
	CACertPEM      string `json:"ca_cert"`
	// SSHEndpoint is the node's sshd (host:port); SSHHostKey its host key
	// as a known_hosts/authorized_keys key ("ssh-ed25519 AAAA..."),
	// SSHHostKeyFingerprint as ssh-keygen -l prints it (SHA256:...).
	SSHEndpoint           string `json:"ssh_endpoint,omitempty"`
	SSHHostKey            string `json:"ssh_host_key,omitempty"`
	SSHHostKeyFingerprint string `json:"ssh_host_key_fingerprint,omitempty"`
	// ManagementAddress and FQDN are the lab's (Options.Lab): the address
	// the installer put on vmbr0 and the name /etc/hosts gives it. Empty
	// without a lab.
	ManagementAddress string `json:"management_address,omitempty"`
	FQDN              string `json:"fqdn,omitempty"`
}

// Info is what a client needs; top-level values are the first node's.
type Info struct {
	Endpoint       string     `json:"endpoint"`
	APIToken       string     `json:"api_token"`
	RootPassword   string     `json:"root_password"`
	TLSFingerprint string     `json:"tls_fingerprint"`
	CACertPEM      string     `json:"ca_cert"`
	Nodes          []NodeInfo `json:"nodes"`
	// SSHClientKey is the private key (OpenSSH PEM) every node authorizes
	// for root; empty with Options.NoSSH.
	SSHClientKey string `json:"ssh_client_key,omitempty"`
	// ManagementAddress and FQDN are the first node's (NodeInfo).
	ManagementAddress string `json:"management_address,omitempty"`
	FQDN              string `json:"fqdn,omitempty"`
}

// DefaultNodes are the reference lab's nodes.
var DefaultNodes = []string{"z2g4a", "z2g4b", "z2g4c"}

// physicalNICs are the NICs every simulated node has (reference lab).
var physicalNICs = []string{"bcm5720p0", "bcm5720p1", "i219", "cx354ap1"}

const tokenID = "root@pam!terraform"

// Sim is a running simulator.
type Sim struct {
	// realCeph is the real Ceph lab behind `ceph` and the Ceph units
	// (Options.RealCeph), nil for the model alone.
	realCeph *realCeph
	opts     Options
	// uploadSeq numbers uploads' temporary files.
	uploadSeq atomic.Int64

	// mu guards st, tasks and faults. Handlers run entirely under it, which
	// also serialises network writes per node as PVE's lock file does.
	mu     sync.Mutex
	st     *simState
	faults []*Fault
	// triggers run before the first request they match (server.go).
	triggers []*requestTrigger
	// haMigrations counts the HA migrations running; haMigrationsEnded
	// is signalled when one ends (ha_model.go).
	haMigrations      int
	haMigrationsEnded *sync.Cond
	// faultSerial numbers faults for their seeded draws (faults.go).
	faultSerial int

	listeners []*nodeListener
	closing   chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup // task goroutines
	// running and peak count running tasks per "node/type", so tests can
	// prove a client never overlaps work PVE does not serialise itself.
	running, peak map[string]int
	// timeline is every task, timed program and HA action with its times
	// (timing_hooks.go), for benchmarks' critical paths.
	timeline []WorkSpan
	timeMu   sync.Mutex

	reqMu    sync.Mutex
	requests []Request
	logPaths []string

	routes []*route
	tree   *routeTree // index of routes (perf_routes.go)
	// nodeOS is what the nodes' shells run (registry.go).
	nodeOS *nodeOS
	rel    pveRelease
	logger *log.Logger

	// offline holds powered-off nodes; certs caches parsed certificates by
	// node (guarded by mu), so a reissued certificate is served on the
	// node's existing listener.
	offline map[string]bool
	certs   map[string]*cachedCert

	// sshd is the nodes' SSH servers (ssh.go); nil with Options.NoSSH.
	sshd *sshSide

	// reach gates each node's listeners on its reachability
	// (network_reach.go).
	reach map[string]*reachGate
}

type cachedCert struct {
	pem  string
	cert *tls.Certificate
}

// certFor returns the certificate the node currently has.
func (s *Sim) certFor(node string) (*tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// pveproxy presents pveproxy-ssl.pem when one exists (certificates.go).
	certPEM, keyPEM := s.st.Nodes[node].servedCertPEM()
	if e := s.certs[node]; e != nil && e.pem == certPEM {
		return e.cert, nil
	}
	cert, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
	if err != nil {
		return nil, fmt.Errorf("node %s certificate: %w", node, err)
	}
	if s.certs == nil {
		s.certs = map[string]*cachedCert{}
	}
	s.certs[node] = &cachedCert{pem: certPEM, cert: &cert}
	return &cert, nil
}

type nodeListener struct {
	node     string
	endpoint string
	srv      *http.Server
	ln       net.Listener
}

// Start creates the simulator and begins serving one HTTPS listener per node.
func Start(opts Options) (*Sim, error) {
	// A lab decides the nodes, release, cluster and Ceph (lab_start.go).
	if err := prepareLabOptions(&opts); err != nil {
		return nil, err
	}
	if len(opts.Nodes) == 0 {
		opts.Nodes = DefaultNodes
	}
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.TaskDuration == 0 {
		opts.TaskDuration = 50 * time.Millisecond
	} else if opts.TaskDuration < 0 {
		opts.TaskDuration = 0
	}
	if opts.TimeScale > 0 && opts.CephTimeScale == 0 {
		opts.CephTimeScale = 1 / opts.TimeScale
	}
	s := &Sim{opts: opts, closing: make(chan struct{}), logger: log.New(os.Stderr, "", log.LstdFlags)}
	if opts.RequestLogPath != "" {
		s.logPaths = append(s.logPaths, opts.RequestLogPath)
	}
	if p := os.Getenv("PVESIM_REQUEST_LOG"); p != "" && p != opts.RequestLogPath {
		s.logPaths = append(s.logPaths, p)
	}
	rel, err := lookupRelease(opts.PVERelease)
	if err != nil {
		return nil, err
	}
	s.rel = rel
	s.routes = buildRoutes(rel)
	s.tree = newRouteTree(s.routes)
	s.nodeOS = buildNodeOS()
	if opts.RealCeph != nil {
		if s.realCeph, err = newRealCeph(*opts.RealCeph); err != nil {
			return nil, err
		}
	}

	var st *simState
	if opts.StatePath != "" {
		var err error
		if st, err = loadState(opts.StatePath); err != nil {
			return nil, err
		}
	}
	if st == nil {
		var err error
		if st, err = newState(opts); err != nil {
			return nil, err
		}
		s.st = st
		if opts.Lab != nil && opts.Lab.Start == StartHandBuilt {
			s.mu.Lock()
			err := s.applyHandBuilt(opts.Lab)
			s.mu.Unlock()
			if err != nil {
				return nil, fmt.Errorf("lab %s: start %s: %w", opts.Lab.Name, StartHandBuilt, err)
			}
		}
	}
	s.st = st
	s.mu.Lock()
	s.saveLocked()
	s.mu.Unlock()
	s.initReach()
	s.SetFaults(opts.Faults)

	host, portStr, err := net.SplitHostPort(opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen %q: %w", opts.Listen, err)
	}
	basePort, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("listen %q: bad port", opts.Listen)
	}
	for i, name := range st.NodeOrder {
		if _, err := s.certFor(name); err != nil {
			_ = s.Close()
			return nil, err
		}
		port := 0
		if basePort > 0 {
			port = basePort + i
		}
		ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("node %s: %w", name, err)
		}
		epHost := host
		if epHost == "" || epHost == "0.0.0.0" || epHost == "::" {
			epHost = "127.0.0.1"
		}
		_, boundPort, _ := net.SplitHostPort(ln.Addr().String())
		ln = s.gateListener(name, ln)
		nl := &nodeListener{
			node:     name,
			ln:       ln,
			endpoint: "https://" + net.JoinHostPort(epHost, boundPort),
		}
		nodeName := name
		nl.srv = &http.Server{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(nodeName, w, r) }),
			TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
				return s.certFor(nodeName)
			}},
			ReadHeaderTimeout: 10 * time.Second,
			// HTTP/1.1 only, like pveproxy; it also lets error responses carry
			// PVE's custom reason phrase via hijacking.
			TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
			ErrorLog:     log.New(ioDiscard{}, "", 0),
		}
		s.listeners = append(s.listeners, nl)
		go func() { _ = nl.srv.ServeTLS(ln, "", "") }()
	}
	if !opts.NoSSH {
		sshListen := opts.SSHListen
		if sshListen == "" {
			sshListen = net.JoinHostPort(host, "0")
		}
		if err := s.startSSH(sshListen); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

type ioDiscard struct{}

func (ioDiscard) Write(p []byte) (int, error) { return len(p), nil }

func (s *Sim) logf(format string, args ...any) { s.logger.Printf(format, args...) }

// Close stops listeners and task goroutines.
func (s *Sim) Close() error {
	var errs []error
	s.closeOnce.Do(func() {
		close(s.closing)
		for _, nl := range s.listeners {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if err := nl.srv.Shutdown(ctx); err != nil {
				_ = nl.srv.Close()
			}
			cancel()
		}
		s.closeSSH()
		s.wg.Wait()
		if s.realCeph != nil {
			if err := s.realCeph.close(); err != nil {
				errs = append(errs, fmt.Errorf("put the real Ceph lab back as it was: %w", err))
			}
		}
		s.mu.Lock()
		s.saveLocked()
		s.mu.Unlock()
	})
	return errors.Join(errs...)
}

// Info returns endpoints and credentials.
func (s *Sim) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	var info Info
	for _, nl := range s.listeners {
		ns := s.st.Nodes[nl.node]
		d := s.st.Domains[ns.Domain]
		ni := NodeInfo{
			Name:           nl.node,
			Endpoint:       nl.endpoint,
			APIToken:       tokenID + "=" + d.TokenSecret,
			RootPassword:   d.RootPassword,
			TLSFingerprint: ns.servedFingerprint(),
			CACertPEM:      d.CACertPEM,
		}
		if ns.Mgmt != nil {
			ni.ManagementAddress, ni.FQDN = ns.Mgmt.Address, ns.Mgmt.FQDN
		}
		s.sshInfo(nl.node, &ni)
		info.Nodes = append(info.Nodes, ni)
	}
	if s.sshd != nil {
		info.SSHClientKey = s.st.SSHClientKey
	}
	if len(info.Nodes) > 0 {
		n := info.Nodes[0]
		info.Endpoint, info.APIToken, info.RootPassword = n.Endpoint, n.APIToken, n.RootPassword
		info.TLSFingerprint, info.CACertPEM = n.TLSFingerprint, n.CACertPEM
		info.ManagementAddress, info.FQDN = n.ManagementAddress, n.FQDN
	}
	return info
}

func newState(opts Options) (*simState, error) {
	st := &simState{
		Nodes:   map[string]*nodeState{},
		Domains: map[string]*authDomain{},
		NextPID: 0x1000 + uint32(randInt(0xF000)),
	}
	host, _, _ := net.SplitHostPort(opts.Listen)
	seen := map[string]bool{}
	for _, name := range opts.Nodes {
		if !nodeNameRE.MatchString(name) || seen[name] {
			return nil, fmt.Errorf("invalid or duplicate node name %q", name)
		}
		seen[name] = true
		domain := name
		if opts.ClusterName != "" {
			domain = "cluster"
		}
		d := st.Domains[domain]
		if d == nil {
			var err error
			if d, err = newAuthDomain(); err != nil {
				return nil, err
			}
			st.Domains[domain] = d
		}
		certPEM, keyPEM, err := issueLeafFor(d, name, host, labMgmt(opts.Lab, name))
		if err != nil {
			return nil, err
		}
		st.NodeOrder = append(st.NodeOrder, name)
		st.Nodes[name] = &nodeState{
			Name: name, Domain: domain, CertPEM: certPEM, KeyPEM: keyPEM,
			Physical: append([]string(nil), physicalNICs...),
			Applied:  defaultNetConfig(),
			BootTime: time.Now().Add(-time.Hour).Unix(),
		}
	}
	if opts.Lab != nil {
		applyLabStart(st, opts.Lab)
	}
	if opts.ClusterName != "" {
		st.Domains["cluster"].Cluster = (&Sim{st: st}).newClusterConf(opts.ClusterName, st.NodeOrder)
	}
	return st, nil
}

func newAuthDomain() (*authDomain, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          randSerial(),
		Subject:               pkix.Name{CommonName: "Proxmox Virtual Environment", OrganizationalUnit: []string{"pve-root-ca"}, Organization: []string{"PVE Cluster Manager CA"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	tk := make([]byte, 32)
	_, _ = rand.Read(tk)
	return &authDomain{
		RootPassword: randHex(12),
		TokenSecret:  randUUID(),
		TicketKey:    tk,
		CACertPEM:    string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		CAKeyPEM:     string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})),
	}, nil
}

// issueLeafFor issues a node's certificate; for a node with a management
// address (m), as pve-cluster's gen_pve_ssl_cert, it names the node's FQDN
// (CN and DNS) and its /etc/hosts address (IP).
func issueLeafFor(d *authDomain, node, listenHost string, m *nodeMgmt) (string, string, error) {
	cb, _ := pem.Decode([]byte(d.CACertPEM))
	kb, _ := pem.Decode([]byte(d.CAKeyPEM))
	if cb == nil || kb == nil {
		return "", "", errors.New("bad CA PEM")
	}
	caCert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return "", "", err
	}
	caKey, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return "", "", err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	if ip := net.ParseIP(listenHost); ip != nil && !ip.IsLoopback() && !ip.IsUnspecified() {
		ips = append(ips, ip)
	}
	cn, dns := node+".localdomain", []string{"localhost", node, node + ".localdomain"}
	if m != nil {
		if ip := net.ParseIP(m.Address); ip != nil && !ip.Equal(net.ParseIP(listenHost)) {
			ips = append(ips, ip)
		}
		if m.FQDN != "" && m.FQDN != node {
			cn, dns = m.FQDN, []string{"localhost", node, m.FQDN}
		}
	}
	tmpl := &x509.Certificate{
		SerialNumber: randSerial(),
		Subject:      pkix.Name{CommonName: cn, OrganizationalUnit: []string{"PVE Cluster Node"}, Organization: []string{"Proxmox Virtual Environment"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(2, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return "", "", err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})), nil
}

// certFingerprint is PVE's style: SHA-256 of the DER, upper-case hex pairs
// joined by colons.
func certFingerprint(certPEM string) string {
	b, _ := pem.Decode([]byte(certPEM))
	if b == nil {
		return ""
	}
	sum := sha256.Sum256(b.Bytes)
	parts := make([]string, len(sum))
	for i, c := range sum {
		parts[i] = fmt.Sprintf("%02X", c)
	}
	return strings.Join(parts, ":")
}

func randSerial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}

func randUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func randInt(n int64) int64 {
	v, _ := rand.Int(rand.Reader, big.NewInt(n))
	return v.Int64()
}
