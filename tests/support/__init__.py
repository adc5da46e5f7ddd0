"""Helpers shared by the test suites: fakes (:mod:`support.fakes`) and the CLI runner (:mod:`support.cli`)."""
