module github.com/hermes-tools/hermestools

go 1.19
