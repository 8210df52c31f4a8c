package pvesim

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The `ceph` command line tool on a node, acting on the same Ceph state as
// the API. Errors are printed the way the tool prints a monitor's or
// manager's reply: "Error <ERRNO>: <message>" on stderr and the errno as
// exit status (EINVAL 22, ENOENT 2, EBUSY 16, EAGAIN 11, ENXIO 6).

const (
	errnoENOENT = 2
	errnoENXIO  = 6
	errnoEAGAIN = 11
	errnoEACCES = 13
	errnoEBUSY  = 16
	errnoEINVAL = 22
)

var errnoNames = map[int]string{errnoENOENT: "ENOENT", errnoENXIO: "ENXIO", errnoEAGAIN: "EAGAIN", errnoEACCES: "EACCES",
	errnoEBUSY: "EBUSY", errnoEINVAL: "EINVAL"}

// cephCmd is one invocation: its words after the global options and the
// output format asked for.
type cephCmd struct {
	x      *sshExec
	s      *Sim
	cs     *cephState
	words  []string
	format string // "", plain, json, json-pretty
	force  bool   // --force / --yes-i-really-mean-it
	max    int    // --max
}

func (c *cephCmd) json() bool { return c.format == "json" || c.format == "json-pretty" }

// out prints v as the chosen JSON format.
func (c *cephCmd) outJSON(v any) {
	var b []byte
	if c.format == "json-pretty" {
		b, _ = json.MarshalIndent(v, "", "    ")
	} else {
		b, _ = json.Marshal(v)
	}
	c.x.outf("%s\n", b)
}

func (c *cephCmd) fail(errno int, format string, args ...any) int {
	c.x.errf("Error %s: %s\n", errnoNames[errno], fmt.Sprintf(format, args...))
	return errno
}

// invalid is the tool's answer to words that match no command signature.
func (c *cephCmd) invalid(detail string) int {
	if detail != "" {
		c.x.errf("Invalid command: %s\n", detail)
	} else {
		c.x.errf("no valid command found; 10 closest matches:\n")
	}
	return c.fail(errnoEINVAL, "invalid command")
}

// realCephCLI hands root's `ceph` to the real lab when there is one.
func realCephCLI(x *sshExec) (int, bool) {
	if x.s.realCeph == nil || !x.root {
		return 0, false
	}
	return x.s.realCeph.forward(x), true
}

func sshCeph(x *sshExec) int {
	c := &cephCmd{x: x, s: x.s}
	args := x.argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, bool) {
			if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") {
				return v, true
			}
			if i+1 >= len(args) {
				x.errf("ceph: error: argument %s: expected one argument\n", a)
				return "", false
			}
			i++
			return args[i], true
		}
		name, _, _ := strings.Cut(a, "=")
		switch {
		case len(c.words) >= 2 && c.words[0] == "tell":
			// The rest is the daemon's command (injectargs '--opt v').
			c.words = append(c.words, args[i:]...)
			i = len(args)
		case a == "--":
			c.words = append(c.words, args[i+1:]...)
			i = len(args)
		case name == "-f" || name == "--format":
			v, ok := value()
			if !ok {
				return 2
			}
			switch v {
			case "json", "json-pretty", "plain", "xml", "xml-pretty":
				c.format = v
			default:
				x.errf("ceph: error: argument -f/--format: invalid choice: '%s' (choose from 'json', 'json-pretty', 'xml', 'xml-pretty', 'plain', 'yaml')\n", v)
				return 2
			}
		case name == "--connect-timeout" || name == "-n" || name == "--name" || name == "--id" || name == "-i" || name == "--user" ||
			name == "-c" || name == "--conf" || name == "-k" || name == "--keyring" || name == "--cluster":
			if _, ok := value(); !ok {
				return 2
			}
		case a == "-s":
			c.words = append(c.words, "status")
		case a == "--force" || a == "--yes-i-really-mean-it":
			c.force = true
		case name == "--max":
			v, ok := value()
			if !ok {
				return 2
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				return c.invalid(fmt.Sprintf("%s doesn't represent an int", v))
			}
			c.max = n
		case a == "-w" || a == "--watch" || a == "-h" || a == "--help":
			x.errf("ceph: pvesim does not simulate %s\n", a)
			return 1
		case strings.HasPrefix(a, "-") && len(a) > 1 && !isNumber(a):
			x.errf("ceph: error: unrecognized arguments: %s\n", a)
			return 2
		default:
			c.words = append(c.words, a)
		}
	}
	if len(c.words) == 0 {
		x.errf("ceph: pvesim does not simulate the interactive ceph shell; give a command\n")
		return 1
	}
	if !x.root {
		// /etc/pve/priv/ceph.client.admin.keyring is root's only.
		x.errf("[errno 13] RADOS permission denied (error connecting to the cluster)\n")
		return errnoEACCES
	}
	cs := x.domain().Ceph
	if cs == nil {
		x.errf("Error initializing cluster client: ObjectNotFound('RADOS object not found (error calling conf_read_file)')\n")
		return 1
	}
	x.s.cephTickLocked(cs)
	if len(cs.Mons) == 0 || !x.s.monQuorum(cs, nil) {
		x.errf("[errno 110] RADOS timed out (error connecting to the cluster)\n")
		return 1
	}
	c.cs = cs
	x.changed = true // the clock moved, and most commands change something
	w := c.words
	switch {
	case w[0] == "status":
		return c.status()
	case w[0] == "health":
		return c.health()
	case w[0] == "config" && len(w) > 1:
		return c.config()
	case w[0] == "tell" && len(w) > 2:
		return c.tell()
	case w[0] == "osd" && len(w) > 1:
		return c.osd()
	case w[0] == "mon" && len(w) == 2 && w[1] == "dump":
		return c.monDump()
	case w[0] == "mon" && len(w) > 1 && w[1] == "ok-to-stop":
		return c.monOkToStop()
	case w[0] == "quorum_status":
		return c.quorumStatus()
	case w[0] == "mgr" && len(w) == 2 && w[1] == "dump":
		return c.mgrDump()
	}
	return c.invalid("")
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// ---- status and health ----

func (c *cephCmd) status() int {
	st := c.s.cephStatusJSON(c.cs)
	if c.json() {
		c.outJSON(st)
		return 0
	}
	health, checks := c.cs.health(c.s.monUp, c.s.activeMgrLocked(c.cs) != nil)
	var b strings.Builder
	fmt.Fprintf(&b, "  cluster:\n    id:     %s\n    health: %s\n", c.cs.FSID, health)
	for _, n := range sortedKeys(checks) {
		fmt.Fprintf(&b, "            %s\n", checks[n].Summary.Message)
	}
	up, in := 0, 0
	for _, o := range c.cs.OSDs {
		if o.isUp() {
			up++
		}
		if o.In {
			in++
		}
	}
	qn, _ := st["quorum_names"].([]string)
	fmt.Fprintf(&b, "\n  services:\n    mon: %d daemons, quorum %s\n", len(c.cs.Mons), strings.Join(qn, ","))
	if m := c.s.activeMgrLocked(c.cs); m != nil {
		fmt.Fprintf(&b, "    mgr: %s(active)\n", m.ID)
	} else {
		b.WriteString("    mgr: no daemons active\n")
	}
	fmt.Fprintf(&b, "    osd: %d osds: %d up, %d in\n", len(c.cs.OSDs), up, in)
	sum := c.cs.summarize()
	fmt.Fprintf(&b, "\n  data:\n    pools:   %d pools, %d pgs\n", len(c.cs.Pools), sum.numPGs)
	states := sortedKeys(sum.byState)
	for i, s := range states {
		prefix := "             "
		if i == 0 {
			prefix = "    pgs:     "
		}
		fmt.Fprintf(&b, "%s%d %s\n", prefix, sum.byState[s], s)
	}
	c.x.outf("%s\n", b.String())
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (c *cephCmd) health() int {
	status, checks := c.cs.health(c.s.monUp, c.s.activeMgrLocked(c.cs) != nil)
	if c.json() {
		c.outJSON(map[string]any{"status": status, "checks": checks, "mutes": []any{}})
		return 0
	}
	var msgs []string
	for _, n := range sortedKeys(checks) {
		msgs = append(msgs, checks[n].Summary.Message)
	}
	if len(msgs) == 0 {
		c.x.outf("%s\n", status)
		return 0
	}
	c.x.outf("%s %s\n", status, strings.Join(msgs, "; "))
	if len(c.words) > 1 && c.words[1] == "detail" {
		for _, n := range sortedKeys(checks) {
			c.x.outf("[%s] %s: %s\n", strings.TrimPrefix(checks[n].Severity, "HEALTH_")[:3], n, checks[n].Summary.Message)
		}
	}
	return 0
}
