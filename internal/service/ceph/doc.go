// Package ceph manages hyper-converged Ceph on PVE nodes: the cluster
// configuration, monitors, managers, OSDs, pools and cluster flags, and
// reads Ceph status, the OSD tree and node disks. Everything that could
// lose data (OSD destroy, pool delete) waits for Ceph to say it is safe or
// needs an explicit opt-out.
package ceph
