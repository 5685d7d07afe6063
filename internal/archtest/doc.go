// Package archtest holds tests of the code's shape: which packages may import
// which. It has no code of its own.
package archtest
