# Go binding (bindings/go, package hermestools): cgo + standard library only.
#   make test-go      go vet + GODEBUG=cgocheck=2 go test -race
#   make example-go   run examples/go (the agent-host example)
# No module downloads: GOPROXY=off. The repository's go.work puts
# bindings/go and examples/go in one workspace, so the example needs no
# `replace` (and -mod=mod, which workspace mode refuses, is not set).
# If $HOME is not writable, set GOCACHE/GOPATH, e.g.
# make test-go GOCACHE=/tmp/go-cache GOPATH=/tmp/go.

GO     ?= go
GO_ENV := GOWORK=$(CURDIR)/go.work GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1
ifdef GOCACHE
GO_ENV += GOCACHE=$(GOCACHE)
endif
ifdef GOPATH
GO_ENV += GOPATH=$(GOPATH)
endif

.PHONY: test-go example-go

test-go: ht-lib
	cd bindings/go && $(GO_ENV) $(GO) vet ./...
	cd bindings/go && $(GO_ENV) GODEBUG=cgocheck=2 $(GO) test -race -count=1 -v ./...

example-go: ht-lib
	cd examples/go && $(GO_ENV) $(GO) run .

BINDING_TESTS += test-go
