// Package repo holds the checks of the repository as a whole: its packages'
// layers, its guides, the values its messages are given, its Dockerfile and
// its Kubernetes manifests.
package repo

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the checks from the repository's root, where the files
// they read are.
func TestMain(m *testing.M) {
	if err := os.Chdir("../.."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
