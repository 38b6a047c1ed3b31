// Package system provides wrappers for Linux system operations.
package system
