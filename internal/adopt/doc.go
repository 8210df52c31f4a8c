// Package adopt reads a running PVE cluster, through the API and, for what
// only a node holds, over SSH, and writes a Terraform configuration that
// describes it (for_each maps and locals in the shape of examples/modules/pve-ceph-cluster)
// with an import block per object: the first plan of that configuration
// imports everything and changes nothing (issue #12).
//
// It only reads. The API client must be configured ReadOnly (refusing
// every write before it is sent) and SSH commands pass a read-only
// allow-list (sshRead), so no code path here can change a cluster.
//
// Each area of the cluster (network, cluster, storage, ceph, node, vm) is
// one file with one function that reads what it needs and adds resources,
// locals, imports and the objects it cannot express (with the reason) to
// the run. Nothing here knows Terraform's plugin types: the output is HCL
// text, built with hclwrite.
package adopt
