"""``python -m sealgraph`` runs the CLI."""

import sys

from sealgraph.cli import main

sys.exit(main())
