//go:build !unix

package storage

import (
	"fmt"
	"os"
)

// lockFile opens path; systems without flock(2) get no exclusion.
func lockFile(path, _ string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("storage: opening lock file: %w", err)
	}
	return f, nil
}
