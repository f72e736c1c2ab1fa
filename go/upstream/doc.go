// Package upstream runs Kubernetes' own DRA allocator
// (k8s.io/dynamic-resource-allocation/structured, the 1.37 release) beside gangpack:
// the differential test and the side-by-side benchmark. It is not part of the module
// that Go users import (github.com/gangpack/gangpack/go).
package upstream
