package pvesim

// /etc/network/interfaces and interfaces.new as the nodes' shells see
// them: views of nodeState.Applied and Staged. Reading gives the file's
// text (as written by hand, else as PVE's writer renders it); writing
// stores the text and parses it as PVE's reader does. Writing the file
// makes nothing live: that takes a reload (ifreload -a, or the API's
// srvreload), so the live configuration is kept aside until then
// (nodeState.Live).

func interfacesFile() *fileHook {
	return &fileHook{
		read: func(x *sshExec) ([]byte, bool) {
			ns := x.s.st.Nodes[x.node]
			if ns.Applied == nil {
				return nil, false
			}
			return []byte(ns.Applied.fileText()), true
		},
		write: func(x *sshExec, content []byte) error {
			ns := x.s.st.Nodes[x.node]
			ns.keepLive()
			ns.Applied = parsedFile(ns, content)
			x.changed = true
			return nil
		},
		// Removing it leaves an empty configuration: PVE's reader sees
		// only lo, ifreload takes everything down.
		remove: func(x *sshExec) error {
			ns := x.s.st.Nodes[x.node]
			ns.keepLive()
			ns.Applied = newNetConfig()
			ns.Applied.Hand = true
			x.changed = true
			return nil
		},
	}
}

func interfacesNewFile() *fileHook {
	return &fileHook{
		read: func(x *sshExec) ([]byte, bool) {
			ns := x.s.st.Nodes[x.node]
			if ns.Staged == nil {
				return nil, false
			}
			return []byte(ns.Staged.fileText()), true
		},
		write: func(x *sshExec, content []byte) error {
			ns := x.s.st.Nodes[x.node]
			ns.Staged = parsedFile(ns, content)
			x.changed = true
			return nil
		},
		remove: func(x *sshExec) error {
			ns := x.s.st.Nodes[x.node]
			if ns.Staged == nil {
				return errNoEnt
			}
			ns.Staged = nil
			x.changed = true
			return nil
		},
	}
}

// parsedFile is content as the file's configuration, its bytes kept.
func parsedFile(ns *nodeState, content []byte) *netConfig {
	cfg, _ := parseInterfaces(string(content), ns.Physical)
	cfg.Text, cfg.Hand = string(content), true
	return cfg
}
