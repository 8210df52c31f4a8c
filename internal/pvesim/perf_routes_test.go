package pvesim

import (
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// The route tree picks the route the linear scan of buildRoutes' order
// picks (literal segments win over variables), with the same variables,
// for every pattern filled with literals of other routes, empty and
// unknown segments.
func TestRouteTreeMatchesLinearScan(t *testing.T) {
	for _, relName := range []string{"9.1", "8.4"} {
		rel, err := lookupRelease(relName)
		if err != nil {
			t.Fatal(err)
		}
		linear := &Sim{routes: buildRoutes(rel)}
		tree := newRouteTree(linear.routes)
		words := map[string]bool{"": true, "x": true, "100": true, "z2g4a": true}
		for _, rt := range linear.routes {
			for _, s := range rt.segs {
				if !strings.HasPrefix(s, "{") {
					words[s] = true
				}
			}
		}
		var vocab []string
		for w := range words {
			vocab = append(vocab, w)
		}
		sort.Strings(vocab) // the same paths every run
		rng := rand.New(rand.NewSource(1))
		check := func(path string) {
			t.Helper()
			want, wantVars := linear.findRoute(path)
			got, gotVars := tree.find(path)
			if want != got {
				t.Fatalf("%s %q: tree %v, scan %v", relName, path, pattern(got), pattern(want))
			}
			if len(wantVars) != len(gotVars) {
				t.Fatalf("%s %q: vars %v, want %v", relName, path, gotVars, wantVars)
			}
			for k, v := range wantVars {
				if gotVars[k] != v {
					t.Fatalf("%s %q: vars %v, want %v", relName, path, gotVars, wantVars)
				}
			}
		}
		matched := 0
		for _, rt := range linear.routes {
			for n := 0; n < 20; n++ {
				segs := make([]string, len(rt.segs))
				for i, s := range rt.segs {
					segs[i] = s
					if strings.HasPrefix(s, "{") || rng.Intn(8) == 0 {
						segs[i] = vocab[rng.Intn(len(vocab))]
					}
				}
				path := "/" + strings.Join(segs, "/")
				if r, _ := linear.findRoute(path); r != nil {
					matched++
				}
				check(path)
				check(path + "/")
				check(path + "/extra")
			}
		}
		// A variable given a literal that routes have at that depth, so
		// that the tree takes a literal branch that may not lead anywhere.
		atDepth := map[int]map[string]bool{}
		for _, rt := range linear.routes {
			for i, s := range rt.segs {
				if !strings.HasPrefix(s, "{") {
					if atDepth[i] == nil {
						atDepth[i] = map[string]bool{}
					}
					atDepth[i][s] = true
				}
			}
		}
		for _, rt := range linear.routes {
			for i, s := range rt.segs {
				if !strings.HasPrefix(s, "{") {
					continue
				}
				for w := range atDepth[i] {
					segs := make([]string, len(rt.segs))
					for j, s := range rt.segs {
						segs[j] = s
						if strings.HasPrefix(s, "{") {
							segs[j] = "x"
						}
					}
					segs[i] = w
					check("/" + strings.Join(segs, "/"))
				}
			}
		}
		check("/")
		check("")
		if matched < len(linear.routes) {
			t.Fatalf("only %d of the generated paths match a route", matched)
		}
	}
}

func pattern(rt *route) string {
	if rt == nil {
		return "<none>"
	}
	return rt.pattern
}

// Of two routes with as many literal segments, the one registered first
// wins even when the other has its literal earlier in the path; and a
// literal branch that leads nowhere falls back to the variable.
func TestRouteTreeOrderAndBacktracking(t *testing.T) {
	var tab routeTable
	for _, p := range []string{"/a/{x}/d", "/a/b/{y}", "/a/b/c", "/a/b/c/e", "/a/{z}/c/f"} {
		tab.add("GET", p, &method{})
	}
	sortRoutes := buildRoutesOrder(tab.routes)
	tree := newRouteTree(sortRoutes)
	for path, want := range map[string]string{
		"/a/b/d": "/a/{x}/d", "/a/b/c": "/a/b/c", "/a/q/d": "/a/{x}/d", "/a/b/q": "/a/b/{y}",
		"/a/b/c/f": "/a/{z}/c/f", "/a/b/c/e": "/a/b/c/e", "/a//d": "<none>",
	} {
		got, _ := tree.find(path)
		lin, _ := (&Sim{routes: sortRoutes}).findRoute(path)
		if pattern(got) != want || lin != got {
			t.Errorf("%s: tree %s, scan %s, want %s", path, pattern(got), pattern(lin), want)
		}
	}
}

// buildRoutesOrder sorts like buildRoutes: most literal segments first,
// stable.
func buildRoutesOrder(routes []*route) []*route {
	out := append([]*route(nil), routes...)
	sort.SliceStable(out, func(i, j int) bool { return literalCount(out[i]) > literalCount(out[j]) })
	return out
}
