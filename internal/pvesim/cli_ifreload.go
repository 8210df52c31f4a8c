package pvesim

import "strings"

// ifreload as ifupdown2 runs it (ifupdown2/ifupdown/main.py, argv.py,
// ifupdownmain.py _reload_default): -a makes /etc/network/interfaces live
// and brings up what it marks auto. A file with syntax errors is still
// applied as far as it could be read; ifupdown2 logs each error and exits
// 1.

func sshIfreload(x *sshExec) int {
	all, syntaxOnly := false, false
	for _, a := range x.argv[1:] {
		switch a {
		case "-a", "--all":
			all = true
		case "-s", "--syntax-check":
			syntaxOnly = true
		case "-f", "--force", "-v", "--verbose", "-d", "--debug", "-l", "--syslog":
		default:
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(a) > 2 {
				// combined short flags such as -av
				ok := true
				for _, c := range a[1:] {
					switch c {
					case 'a':
						all = true
					case 's':
						syntaxOnly = true
					case 'f', 'v', 'd', 'l':
					default:
						ok = false
					}
				}
				if ok {
					continue
				}
			}
			x.errf("usage: ifreload [-h] (-a | -c | --allow CLASS) [-n] [-v] [-d] [-f] [-i INTERFACESFILE] [-s] [-y] [-l] [-o {native,json}] [-X EXCLUDEPATS] [-W]\nifreload: error: unrecognized arguments: %s\n", a)
			return 2
		}
	}
	if !all {
		x.errf("usage: ifreload [-h] (-a | -c | --allow CLASS) [-n] [-v] [-d] [-f] [-i INTERFACESFILE] [-s] [-y] [-l] [-o {native,json}] [-X EXCLUDEPATS] [-W]\nifreload: error: one of the arguments -a/--all -c/--currently-up --allow is required\n")
		return 2
	}
	if !x.root {
		x.errf("error: must be root to run this command\n")
		return 1
	}
	ns := x.s.st.Nodes[x.node]
	var errs []string
	if ns.Applied.Hand {
		_, errs = parseInterfaces(ns.Applied.Text, ns.Physical)
	}
	for _, e := range errs {
		x.errf("error: %s\n", e)
	}
	if !syntaxOnly {
		x.s.reloadNetworkLocked(ns)
		x.changed = true
	}
	if len(errs) > 0 {
		return 1
	}
	return 0
}
