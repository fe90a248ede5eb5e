"""``python -m rocke_py.parity`` is ``rocke-parity``."""

import sys

from rocke_py.parity.cli import entry

if __name__ == "__main__":
    sys.exit(entry())
