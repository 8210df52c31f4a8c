// Package nodeexec runs commands on PVE nodes over SSH, for the parts of a
// node the PVE API does not reach (ceph.conf and the Ceph config database,
// tuned, NIC rings, files under /etc, systemd units).
//
// Commands are argv, never shell strings: every element is quoted by one
// function (quoteArg) before the line goes to the node's login shell, which
// must be a POSIX shell (bash on PVE). Only programs on an allow-list run.
// Host keys are verified against a known_hosts file; an unknown key is
// refused unless trust-on-first-use is enabled, a changed key always is.
// Values marked Secret never reach logs or error texts.
//
// The package knows nothing about Terraform; the provider builds a Pool
// from its ssh block and hands it to resources.
package nodeexec
