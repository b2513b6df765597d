"""`python -m ascend_audit` runs the command line."""

from ascend_audit.cli import entry

entry()
