package pvesim

import "strings"

// cephOptionList is the option table in its order, as ceph_options is in
// Ceph (the generated build_options()): `config ls` lists it in that order.
var cephOptionList []*cephOption

// configLs is ConfigMonitor's "config ls": every option name, one a line,
// or a JSON array of names. (Ceph appends the mgr modules' options, such
// as mgr/balancer/mode; the simulator models none.)
func (c *cephCmd) configLs() int {
	if len(c.words) > 2 {
		return c.invalid("unused arguments: " + pyList(c.words[2:]))
	}
	names := make([]string, 0, len(cephOptionList))
	for _, o := range cephOptionList {
		names = append(names, o.name)
	}
	if c.json() {
		c.outJSON(names)
		return 0
	}
	if len(names) > 0 {
		c.x.outf("%s\n", strings.Join(names, "\n"))
	}
	return 0
}
