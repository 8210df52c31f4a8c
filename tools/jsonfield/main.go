// Command jsonfield prints one field of the first JSON value read from stdin, so scripts
// need neither jq nor python. Strings print raw; other values print as compact JSON.
// A dotted path walks objects and arrays; "*" walks every element of an array and
// prints one line per element:
//
//	go run -C tools/jsonfield . endpoint < line.json
//	go run -C tools/jsonfield . nodes.0.endpoint < line.json
//	go run -C tools/jsonfield . 'nodes.*.name' < line.json
//
// It exits 1 when the field is missing and 2 on bad input.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) != 2 || os.Args[1] == "" {
		fmt.Fprintln(os.Stderr, "usage: jsonfield <field[.sub|.index|.*]...> < value.json")
		os.Exit(2)
	}
	var v any
	dec := json.NewDecoder(os.Stdin)
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		fmt.Fprintf(os.Stderr, "jsonfield: reading JSON from stdin: %v\n", err)
		os.Exit(2)
	}
	var out []string
	if !walk(v, strings.Split(os.Args[1], "."), &out) {
		fmt.Fprintf(os.Stderr, "jsonfield: field %q not found\n", os.Args[1])
		os.Exit(1)
	}
	for _, s := range out {
		fmt.Println(s)
	}
}

// walk follows path from v and appends the values it reaches to out.
func walk(v any, path []string, out *[]string) bool {
	if len(path) == 0 {
		if s, ok := v.(string); ok {
			*out = append(*out, s)
			return true
		}
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		*out = append(*out, string(b))
		return true
	}
	key, rest := path[0], path[1:]
	switch cur := v.(type) {
	case map[string]any:
		next, ok := cur[key]
		return ok && walk(next, rest, out)
	case []any:
		if key == "*" {
			for _, e := range cur {
				if !walk(e, rest, out) {
					return false
				}
			}
			return true
		}
		i, err := strconv.Atoi(key)
		return err == nil && i >= 0 && i < len(cur) && walk(cur[i], rest, out)
	}
	return false
}
