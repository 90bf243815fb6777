"""`python -m ddx`."""

from .app.cli import main

main(prog_name="ddx")
