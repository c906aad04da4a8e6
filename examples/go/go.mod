module github.com/hermes-tools/hermes-tools/examples/go

go 1.19

// Resolved from the repository's go.work (bindings/go) when built in the
// checkout; outside it, `go get` fetches the tagged module.
require github.com/hermes-tools/hermes-tools/bindings/go v0.1.0
