// Command stamped prints the build information it was linked with; the
// buildinfo test builds it with the Makefile's -X flags.
package main

import (
	"fmt"

	"github.com/bunting-flags/bunting/internal/buildinfo"
)

func main() { fmt.Print(buildinfo.Get()) }
