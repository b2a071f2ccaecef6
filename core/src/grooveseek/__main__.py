"""``python -m grooveseek`` runs the ``groove`` CLI."""

from .cli import main

if __name__ == "__main__":
    main()
