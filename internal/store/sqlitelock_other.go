//go:build !unix

package store

import "os"

// lockFile does nothing where flock does not exist: there, `bunting
// restore` cannot tell whether a server uses the database.
func lockFile(*os.File, bool) error { return nil }
