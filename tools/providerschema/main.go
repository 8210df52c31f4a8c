// Command providerschema rewrites the output of "terraform providers schema -json" (stdin)
// so that tfplugindocs v0.25 finds the provider: tfplugindocs looks the schema up under
// "<name>" or "registry.terraform.io/hashicorp/<name>" only, while Terraform writes
// "registry.terraform.io/pvelab/<name>" and OpenTofu "registry.opentofu.org/pvelab/<name>".
//
//	go run -C tools/providerschema . pve < raw.json > schema.json
//
// Exactly one provider whose address ends in "/<name>" must be present; it is written under
// the key "<name>" and every other provider is dropped. The provider's own JSON is copied
// byte for byte, and object keys come out sorted, so the output is deterministic.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) != 2 || os.Args[1] == "" {
		fmt.Fprintln(os.Stderr, "usage: providerschema <provider name> < providers-schema.json")
		os.Exit(2)
	}
	name := os.Args[1]

	var doc map[string]json.RawMessage
	if err := json.NewDecoder(os.Stdin).Decode(&doc); err != nil {
		die("reading providers schema JSON from stdin: %v", err)
	}
	var schemas map[string]json.RawMessage
	if raw, ok := doc["provider_schemas"]; !ok {
		die("no provider_schemas in input")
	} else if err := json.Unmarshal(raw, &schemas); err != nil {
		die("provider_schemas: %v", err)
	}

	var found []string
	for addr := range schemas {
		if addr == name || strings.HasSuffix(addr, "/"+name) {
			found = append(found, addr)
		}
	}
	sort.Strings(found)
	if len(found) != 1 {
		var all []string
		for addr := range schemas {
			all = append(all, addr)
		}
		sort.Strings(all)
		die("want exactly one provider named %q, found %d among %v", name, len(found), all)
	}

	out, err := json.Marshal(map[string]json.RawMessage{name: schemas[found[0]]})
	if err != nil {
		die("%v", err)
	}
	doc["provider_schemas"] = out
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		die("%v", err)
	}
}

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "providerschema: "+format+"\n", args...)
	os.Exit(1)
}
