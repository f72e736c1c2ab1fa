module github.com/gangpack/gangpack/go/upstream

go 1.26.8
