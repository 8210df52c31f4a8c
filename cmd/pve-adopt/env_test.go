package main

import (
	"os"
	"testing"
)

// The command reads its PVE_* settings from a copy and clears them, so
// that the in-process provider cannot take PVE_INSECURE or
// PVE_SSH_TRUST_ON_FIRST_USE from the environment.
func TestPVEEnvCleared(t *testing.T) {
	t.Setenv("PVE_INSECURE", "true")
	t.Setenv("PVE_SSH_TRUST_ON_FIRST_USE", "true")
	t.Setenv("PVE_ENDPOINT", "https://pve1:8006")
	env := pveEnv()
	if env["PVE_ENDPOINT"] != "https://pve1:8006" || env["PVE_INSECURE"] != "true" {
		t.Errorf("the copy lost settings: %v", env)
	}
	for _, k := range []string{"PVE_INSECURE", "PVE_SSH_TRUST_ON_FIRST_USE", "PVE_ENDPOINT"} {
		if v, ok := os.LookupEnv(k); ok {
			t.Errorf("%s=%q is still in the environment", k, v)
		}
	}
}
