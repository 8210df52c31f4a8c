// Command terraform-provider-pve serves the pve provider to Terraform and
// OpenTofu over plugin protocol 6.
package main

import (
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/pvelab/terraform-provider-pve/internal/provider"
)

// version is set by the release build (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run with support for debuggers such as delve")
	flag.Parse()

	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	} else {
		// Under the CLI nobody reads logs unless a TF_LOG* variable is set.
		provider.QuietLogs()
	}
	server, err := provider.Server(provider.New(version))()
	if err != nil {
		log.Fatal(err)
	}
	err = tf6server.Serve("registry.terraform.io/pvelab/pve", func() tfprotov6.ProviderServer { return server }, opts...)
	if err != nil {
		log.Fatal(err)
	}
}
