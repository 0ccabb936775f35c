package main

import "syscall"

const sigterm = syscall.SIGTERM
