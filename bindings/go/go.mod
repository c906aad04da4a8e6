module github.com/hermes-tools/hermes-tools/bindings/go

go 1.19
