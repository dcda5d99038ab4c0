"""Shared by the rules tests: ``xplique-ext rules`` / ``fire`` run in-process."""

import argparse

from xplique_ext.cli.rules import register


def run_cli(argv):
    """Parse ``argv`` with the rules sub-commands and run it; returns the exit code."""
    parser = argparse.ArgumentParser(prog="xplique-ext")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)
