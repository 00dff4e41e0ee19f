// The golang port's shim. It pins the port at the release that ships relay tools and
// resume (v0.16.0). The Go module proxy does not serve this module (see
// docs/ports-probe.md), so the harness builds a temporary copy of this folder with a
// `replace` to a toolnexus checkout (--port-src); this file never carries the replace.
module github.com/toolnexus-conformance/shims/golang

go 1.23.0

require github.com/muthuishere/toolnexus/golang v0.16.0
