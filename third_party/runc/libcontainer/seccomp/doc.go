// Package seccomp provides runc-specific helpers for loading and managing
// seccomp profiles.
package seccomp
