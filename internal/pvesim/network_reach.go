package pvesim

import (
	"net"
	"sync"
	"time"
)

// A node's listeners answer only while the node is reachable
// (network_reach_model.go). When a reload cuts the management path, TCP
// still accepts (the simulator listens on loopback) but nothing is read or
// written: new connections and existing ones hang, as on a cut network,
// and the client times out. Data a client sent meanwhile is held, as TCP
// retransmits it, and flows once the node is reachable again. Nothing
// polls: each node's gate is signalled when its reachability changes.

// reachGate is one node's reachability as the listeners see it.
type reachGate struct {
	mu      sync.Mutex
	up      bool
	changed chan struct{} // closed and replaced at every change
}

func newReachGate(up bool) *reachGate {
	return &reachGate{up: up, changed: make(chan struct{})}
}

func (g *reachGate) set(up bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.up == up {
		return
	}
	g.up = up
	close(g.changed)
	g.changed = make(chan struct{})
}

// wait blocks until the node is reachable; it fails when done or closing
// is closed first.
func (g *reachGate) wait(done, closing <-chan struct{}) error {
	for {
		g.mu.Lock()
		up, ch := g.up, g.changed
		g.mu.Unlock()
		if up {
			return nil
		}
		select {
		case <-ch:
		case <-done:
			return net.ErrClosed
		case <-closing:
			return net.ErrClosed
		}
	}
}

// initReach creates the gates of every node from the state. Called once
// by Start before the listeners open.
func (s *Sim) initReach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reach = map[string]*reachGate{}
	for name, ns := range s.st.Nodes {
		if ns.Mgmt != nil && ns.Active == nil {
			// A node of a new lab has booted: ifup brought its file up.
			ns.computeActive()
		}
		up, _ := ns.reachable()
		s.reach[name] = newReachGate(up)
	}
}

// updateReachLocked recomputes node's reachability after its live
// network or a NIC's link changed. Caller holds s.mu.
func (s *Sim) updateReachLocked(node string) {
	ns := s.st.Nodes[node]
	g := s.reach[node]
	if ns == nil || g == nil {
		return
	}
	up, _ := ns.reachable()
	g.set(up)
}

// reloadNetworkLocked is ifreload -a: the file becomes live, ifreload
// brings up what it marks auto, and the node answers or not accordingly.
// Caller holds s.mu.
func (s *Sim) reloadNetworkLocked(ns *nodeState) {
	ns.Live = nil
	ns.computeActive()
	s.updateReachLocked(ns.Name)
}

// gateListener wraps a node's listener so its connections follow the
// node's reachability. Called by Start after initReach.
func (s *Sim) gateListener(node string, ln net.Listener) net.Listener {
	s.mu.Lock()
	g := s.reach[node]
	s.mu.Unlock()
	if g == nil {
		return ln
	}
	return &gatedListener{Listener: ln, g: g, closing: s.closing}
}

type gatedListener struct {
	net.Listener
	g       *reachGate
	closing <-chan struct{}
}

func (l *gatedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &gatedConn{Conn: c, g: l.g, closing: l.closing, done: make(chan struct{})}, nil
}

type gatedConn struct {
	net.Conn
	g         *reachGate
	closing   <-chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (c *gatedConn) Read(p []byte) (int, error) {
	if err := c.g.wait(c.done, c.closing); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		// What arrived while the node was cut off is held until it is
		// reachable again.
		if werr := c.g.wait(c.done, c.closing); werr != nil {
			return 0, werr
		}
	}
	return n, err
}

func (c *gatedConn) Write(p []byte) (int, error) {
	if err := c.g.wait(c.done, c.closing); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

func (c *gatedConn) Close() error {
	c.closeOnce.Do(func() { close(c.done) })
	return c.Conn.Close()
}

// SetDeadline and friends pass through: a deadline still ends a read the
// kernel is waiting in, as the server's own timeouts do on a cut network.
func (c *gatedConn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(t) }
