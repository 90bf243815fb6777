"""`python -m ddx`."""

from .cli import main

main(prog_name="ddx")
