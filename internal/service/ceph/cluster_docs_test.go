package ceph

import (
	"os"
	"strings"
	"testing"
)

// The page of pve_ceph_cluster quotes the reason for refusing little redundancy; its prose lives in
// templates/ (scripts/docs.sh), so this keeps it in step with clusterUnsafeWhy.
func TestClusterDocsQuoteUnsafeWhy(t *testing.T) {
	prose, err := os.ReadFile("../../../templates/resources/ceph_cluster.md.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(prose), clusterUnsafeWhy) {
		t.Errorf("templates/resources/ceph_cluster.md.tmpl does not quote clusterUnsafeWhy: %s", clusterUnsafeWhy)
	}
}
