package main

import "github.com/vetto-dev/vetto-runtime/linux/relayproc"

func run(args []string) int { return relayproc.Main(args) }
