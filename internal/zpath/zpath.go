// Package zpath holds Apache ZooKeeper's znode path rules, shared by the
// server's data tree and the zk client: validation (PathUtils.validatePath),
// and splitting and joining paths. It imports only the standard library.
package zpath

import (
	"fmt"
	"strings"
)

// Validate checks a znode path with Apache ZooKeeper's rules
// (PathUtils.validatePath): absolute, no trailing slash, no empty, "." or ".."
// components, and none of the characters ZooKeeper refuses. It returns an error
// describing the first problem and its position.
func Validate(path string) error {
	if path == "" {
		return fmt.Errorf("invalid path %q: path length must be > 0", path)
	}
	if path[0] != '/' {
		return fmt.Errorf("invalid path %q: path must start with / character", path)
	}
	if len(path) == 1 {
		return nil
	}
	if path[len(path)-1] == '/' {
		return fmt.Errorf("invalid path %q: path must not end with / character", path)
	}
	// ASCII paths, nearly all of them, are checked byte by byte, and only
	// the bytes that can be wrong go to checkAt; the first byte of a
	// multi-byte rune sends the path to the rune-by-rune loop.
	last := byte('/')
	for i := 1; i < len(path); i++ {
		c := path[i]
		if c >= 0x80 {
			return validateRunes(path)
		}
		if c <= 0x1f || c == 0x7f || c == '/' || c == '.' {
			if err := checkAt(path, i, rune(c), rune(last)); err != nil {
				return err
			}
		}
		last = c
	}
	return nil
}

// validateRunes is Validate's loop over a path that is not all ASCII,
// after its first checks.
func validateRunes(path string) error {
	last := '/'
	for i, c := range path {
		if i == 0 {
			continue
		}
		if err := checkAt(path, i, c, last); err != nil {
			return err
		}
		last = c
	}
	return nil
}

// checkAt checks the rune c at byte offset i of path, after the rune last.
func checkAt(path string, i int, c, last rune) error {
	switch {
	case c == 0:
		return fmt.Errorf("invalid path %q: null character not allowed @%d", path, i)
	case c == '/' && last == '/':
		return fmt.Errorf("invalid path %q: empty node name specified @%d", path, i)
	case c == '.' && (last == '/' || last == '.'):
		// "." or ".." as a whole component.
		comp := component(path, i)
		if comp == "." || comp == ".." {
			return fmt.Errorf("invalid path %q: relative paths not allowed @%d", path, i)
		}
	case invalidRune(c):
		return fmt.Errorf("invalid path %q: invalid character @%d", path, i)
	}
	return nil
}

// component returns the path component containing byte offset i.
func component(path string, i int) string {
	start := strings.LastIndexByte(path[:i], '/') + 1
	end := strings.IndexByte(path[i:], '/')
	if end < 0 {
		return path[start:]
	}
	return path[start : i+end]
}

// invalidRune mirrors ZooKeeper's character blacklist, which works on UTF-16
// code units: every rune outside the BMP is a surrogate pair there, and
// invalid UTF-8 decodes to U+FFFD, both refused.
func invalidRune(c rune) bool {
	return (c > 0 && c <= 0x1f) || (c >= 0x7f && c <= 0x9f) ||
		(c >= 0xd800 && c <= 0xf8ff) || c >= 0xfff0
}

// Parent returns the parent path of an absolute path ("/" for top-level nodes)
// and the last component. For "/" it returns "", "".
func Parent(path string) (parent, name string) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 || path == "/" {
		return "", ""
	}
	if i == 0 {
		return "/", path[1:]
	}
	return path[:i], path[i+1:]
}

// Join appends a child name to a parent path.
func Join(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}
