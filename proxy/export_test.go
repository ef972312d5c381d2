package proxy

// RoutePaths lists every path of the route table (a prefix route's with
// "flags" after it), for the black-box tests of every route.
func RoutePaths() []string {
	var out []string
	for _, rt := range routeTable {
		for _, p := range rt.paths {
			if rt.prefix {
				p += "v1/evaluate/flags"
			}
			out = append(out, p)
		}
	}
	return out
}
