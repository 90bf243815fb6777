"""`python -m ddx`."""

from .app.cli_lean import main

main()
