// Package linux is vetto-runtime's Linux backend: it builds containers with
// libcontainer (namespaces, cgroups, seccomp, pivot_root) and is the only
// package that imports it. None of libcontainer's types leave this package.
package linux
