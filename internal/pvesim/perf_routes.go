package pvesim

import "strings"

// routeTree finds a path's route without trying every route in turn:
// a tree of path segments, one child per literal and one for any
// variable. The routes are kept in the order of buildRoutes (most
// literal segments first, then registration order); of all routes that
// match, the first in that order wins, exactly as the linear scan chose.
type routeTree struct {
	routes []*route
	root   *routeNode
}

type routeNode struct {
	lit  map[string]*routeNode
	vari *routeNode
	ends []int // indices into routes of the routes that end here
	// restEnds are routes whose last variable takes the rest of the path
	// (see route.match), so they also match longer paths.
	restEnds []int
}

func newRouteTree(routes []*route) *routeTree {
	t := &routeTree{routes: routes, root: &routeNode{}}
	for i, rt := range routes {
		n := t.root
		for _, seg := range rt.segs {
			if strings.HasPrefix(seg, "{") { // as route.match reads it
				if n.vari == nil {
					n.vari = &routeNode{}
				}
				n = n.vari
				continue
			}
			if n.lit == nil {
				n.lit = map[string]*routeNode{}
			}
			c := n.lit[seg]
			if c == nil {
				c = &routeNode{}
				n.lit[seg] = c
			}
			n = c
		}
		n.ends = append(n.ends, i)
		if rt.takesRest() {
			n.restEnds = append(n.restEnds, i)
		}
	}
	return t
}

// find is findRoute: the first route in order whose pattern matches.
func (t *routeTree) find(path string) (*route, map[string]string) {
	segs := splitPath(path)
	best := -1
	var walk func(n *routeNode, i int)
	walk = func(n *routeNode, i int) {
		if i == len(segs) {
			for _, e := range n.ends {
				if best < 0 || e < best {
					best = e
				}
			}
			return
		}
		if c := n.lit[segs[i]]; c != nil {
			walk(c, i+1)
		}
		if n.vari != nil && segs[i] != "" { // a variable is never empty
			walk(n.vari, i+1)
		}
		if n.vari != nil && i+1 < len(segs) { // the rest joined by "/" is never empty
			for _, e := range n.vari.restEnds {
				if best < 0 || e < best {
					best = e
				}
			}
		}
	}
	walk(t.root, 0)
	if best < 0 {
		return nil, nil
	}
	rt := t.routes[best]
	vars, ok := rt.match(path)
	if !ok {
		return nil, nil
	}
	return rt, vars
}
