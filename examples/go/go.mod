module github.com/hermes-tools/hermestools/examples/go

go 1.19

require github.com/hermes-tools/hermestools v0.0.0

replace github.com/hermes-tools/hermestools => ../../bindings/go
