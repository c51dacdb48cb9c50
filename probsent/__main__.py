"""``python -m probsent``: the ``probsent`` command."""
import sys

from probsent.cli import main

sys.exit(main())
