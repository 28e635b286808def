# The root Makefile includes */*.mk: pull in the examples fragment.
include tools-perf/examples/examples.mk
